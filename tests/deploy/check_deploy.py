#!/usr/bin/env python3
"""Checks deploy/'s service files against the programs they start.

usage: check_deploy.py BIN_DIR

- systemd units: `systemd-analyze verify` on copies whose programs point at BIN_DIR (unit syntax,
  known directives, the programs exist and are executable); the hardening a node needs is there.
- Kubernetes manifests (deploy/kubernetes/kiln.yaml): every document parses; the harness is a
  DaemonSet that asks for nvidia.com/gpu, probes readiness over gRPC on the port it listens on,
  has the grace period a drain needs, and every flag it passes is one kiln-harness knows; the
  controller reaches the harnesses through the headless Service's name and port; every Secret and
  claim a pod mounts is one the manifests or the docs name.
- The container file: the flags of its entrypoint are kiln-harness's; it copies a bundle.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEPLOY = os.path.join(ROOT, "deploy")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def known_flags(program):
    out = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=60)
    return set(re.findall(r"--([a-z][a-z0-9_-]*)", out.stdout + out.stderr))


def flags_of(args):
    return [a[2:].split("=")[0] for a in args if a.startswith("--")]


def check_systemd(bin_dir):
    analyze = shutil.which("systemd-analyze")
    check(analyze is not None, "systemd-analyze is installed (deploy/setup.sh installs systemd)")
    if analyze is None:
        return
    with tempfile.TemporaryDirectory() as tmp:
        for unit in ("kiln-harness.service", "kiln-controller.service"):
            text = open(os.path.join(DEPLOY, "systemd", unit)).read()
            for directive in ("DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=",
                              "LimitNOFILE=", "Restart=on-failure", "KillSignal=SIGTERM",
                              "TimeoutStopSec="):
                check(directive in text, f"{unit} has {directive}")
            env = os.path.join(tmp, unit + ".env")
            open(env, "w").write(open(os.path.join(
                DEPLOY, "systemd", "harness.env" if "harness" in unit else "controller.env")).read())
            text = text.replace("/opt/kiln/bin", os.path.abspath(bin_dir))
            text = re.sub(r"EnvironmentFile=\S+", "EnvironmentFile=" + env, text)
            path = os.path.join(tmp, unit)
            open(path, "w").write(text)
            r = subprocess.run([analyze, "verify", path], capture_output=True, text=True,
                               timeout=120)
            # Warnings about the machine (no D-Bus in a container, other units) are not ours.
            ours = [l for l in (r.stdout + r.stderr).splitlines() if unit in l or "kiln" in l]
            check(r.returncode == 0 and not ours,
                  f"systemd-analyze verify {unit}" + ("" if r.returncode == 0 and not ours
                                                      else ": " + " | ".join(ours or [r.stderr])))
        harness = open(os.path.join(DEPLOY, "systemd", "kiln-harness.service")).read()
        # What the sandbox needs: user namespaces and the GPU device nodes.
        check("RestrictNamespaces" not in harness, "kiln-harness.service leaves namespaces to bwrap")
        check("PrivateDevices" not in harness, "kiln-harness.service keeps /dev/nvidia*")
        check("Delegate=yes" in harness, "kiln-harness.service owns its cgroup subtree")
        harness_flags = known_flags(os.path.join(bin_dir, "kiln-harness"))
        env = open(os.path.join(DEPLOY, "systemd", "harness.env")).read()
        args = re.search(r"KILN_HARNESS_ARGS=(.*)", env).group(1).split()
        unknown = [f for f in flags_of(args) if f not in harness_flags]
        check(not unknown, f"harness.env's flags are kiln-harness's (unknown: {unknown})")
        controller = open(os.path.join(DEPLOY, "systemd", "kiln-controller.service")).read()
        check("$KILN_CONTROLLER_ARGS" in controller, "kiln-controller.service takes its access flags")
        env = open(os.path.join(DEPLOY, "systemd", "controller.env")).read()
        examples = re.findall(r"KILN_CONTROLLER_ARGS=(.*)", env)
        controller_flags = known_flags(os.path.join(bin_dir, "kiln-controller"))
        unknown = [f for line in examples for f in flags_of(line.split()) if f not in controller_flags]
        check(examples and not unknown,
              f"controller.env's flags are kiln-controller's (unknown: {unknown})")


def check_kubernetes(bin_dir):
    docs = [d for d in yaml.safe_load_all(open(os.path.join(DEPLOY, "kubernetes", "kiln.yaml"))) if d]
    kinds = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    check(("DaemonSet", "kiln-harness") in kinds, "a DaemonSet kiln-harness")
    check(("Deployment", "kiln-controller") in kinds, "a Deployment kiln-controller")
    check(("Service", "kiln-harness") in kinds and ("Service", "kiln-controller") in kinds,
          "Services for both")
    teams = kinds.get(("Service", "kiln"))
    check(teams is not None and teams["spec"]["selector"] ==
          kinds[("Deployment", "kiln-controller")]["spec"]["selector"]["matchLabels"],
          "the teams' Service `kiln` is the controller's front door")
    ctrl_secrets = [v.get("secret", {}).get("secretName") for v in
                    kinds[("Deployment", "kiln-controller")]["spec"]["template"]["spec"]["volumes"]]
    check("kiln-tokens" in ctrl_secrets,
          "the controller reads the harnesses' tokens Secret (it calls them with its callers' tokens)")
    for d in docs:
        check(d.get("apiVersion") and d.get("metadata", {}).get("name"),
              f"{d.get('kind')} has apiVersion and a name")
    ds = kinds.get(("DaemonSet", "kiln-harness"))
    if ds:
        spec = ds["spec"]["template"]["spec"]
        c = spec["containers"][0]
        args = c["args"]
        listen = args[args.index("--listen") + 1]
        port = int(listen.rsplit(":", 1)[1])
        check(int(c["resources"]["limits"].get("nvidia.com/gpu", 0)) >= 1,
              "the harness asks for nvidia.com/gpu")
        check(c["readinessProbe"].get("grpc", {}).get("port") == port,
              f"readiness is the gRPC health service on the port the harness listens on ({port})")
        check(spec.get("terminationGracePeriodSeconds", 0) >= 300,
              "the grace period leaves time for a drain")
        check(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
              "the DaemonSet's selector matches its pods")
        unknown = [f for f in flags_of(args) if f not in known_flags(os.path.join(bin_dir, "kiln-harness"))]
        check(not unknown, f"the DaemonSet's flags are kiln-harness's (unknown: {unknown})")
        mounts = {m["name"] for m in c["volumeMounts"]}
        volumes = {v["name"] for v in spec["volumes"]}
        check(mounts <= volumes, "every mount of the harness has its volume")
        svc = kinds.get(("Service", "kiln-harness"))
        check(svc and svc["spec"].get("clusterIP") == "None", "the harness Service is headless")
        check(svc and svc["spec"]["ports"][0]["port"] == port, "the Service's port is the harness's")
    dep = kinds.get(("Deployment", "kiln-controller"))
    if dep:
        c = dep["spec"]["template"]["spec"]["containers"][0]
        args = c["args"]
        harness = args[args.index("--harness") + 1]
        check(harness.startswith("kiln-harness.kiln.svc"), "the controller reaches the harness Service")
        claims = [v["persistentVolumeClaim"]["claimName"] for v in dep["spec"]["template"]["spec"]["volumes"]
                  if "persistentVolumeClaim" in v]
        check(all(("PersistentVolumeClaim", n) in kinds for n in claims), "its claim is defined")
        controller_help = subprocess.run([os.path.join(bin_dir, "kiln-controller"), "--help"],
                                         capture_output=True, text=True, timeout=60)
        text = controller_help.stdout + controller_help.stderr
        unknown = [f for f in flags_of(args) if "--" + f not in text]
        check(not unknown, f"the controller's flags are kiln-controller's (unknown: {unknown})")
        check("--tokens" in args, "the controller serves with a tokens file (a remote address needs one)")
        spec = dep["spec"]["template"]["spec"]
        check({m["name"] for m in c["volumeMounts"]} <= {v["name"] for v in spec["volumes"]},
              "every mount of the controller has its volume")


def check_container(bin_dir):
    text = open(os.path.join(DEPLOY, "container", "Containerfile")).read()
    check("COPY bundle/ /opt/kiln/" in text, "the container copies a bundle to /opt/kiln")
    args = re.findall(r'"(--[a-z-]+)"', text)
    unknown = [a[2:] for a in args if a[2:] not in known_flags(os.path.join(bin_dir, "kiln-harness"))]
    check(args and not unknown, f"the container's flags are kiln-harness's (unknown: {unknown})")
    check("STOPSIGNAL SIGTERM" in text, "the container stops with SIGTERM (a drain)")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    bin_dir = sys.argv[1]
    check_systemd(bin_dir)
    check_kubernetes(bin_dir)
    check_container(bin_dir)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("deploy/ checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
