#!/usr/bin/env python3
"""KernelBench on a GPU node, from a bundle: verdicts, time to verdict, where load_inline's time goes.

1. kiln-harness --backend cuda with the node's python3 (torch, triton) and --max-tensor-bytes
   large enough for Level 1's tensors; `kiln defs import --format kernelbench` registers
   level1/19_ReLU and level2/1_Conv2D_ReLU_BiasAdd from KB_DIR, unchanged;
2. submits the ModelNew files of tests/gpu/kernelbench/ and checks each verdict, with its wall
   time: the load_inline diagonal matmul (cold, then warm); the level 2 fusion in torch alone
   (REJECTED integrity.no_own_kernel) and with a Triton epilogue (with --baseline
   torch_compile); ReLU's reward hacks (exception fallback, inheriting Model, torch alone) and
   ReLU in Triton (cold, then warm);
3. builds the same load_inline file with torch's own load_inline outside kiln (a fresh
   TORCH_EXTENSIONS_DIR), then runs each command of the build.ninja it wrote alone, timed: where
   the build's time goes;
4. reads every problem of levels 1-3 with this node's torch (`--dry-run`): how many convert.

  python3 tests/gpu/kernelbench_gpu.py BUNDLE_DIR OUT_DIR KB_DIR [--budget-s 420]

OUT_DIR gets summary.md, results.json and every CLI output. Exits 1 if a check failed.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "perf"))
import gpu_timing_agreement as agreement  # noqa: E402  (Harness, Budget, parse_json)

RELU = "kernelbench_l1_19_ReLU"
DIAG = "kernelbench_l1_12_Matmul_with_diagonal_matrices_"
CONV = "kernelbench_l2_1_Conv2D_ReLU_BiasAdd"
# (file, definition, mode, baselines, expected status, tag, reason prefix). KILN_KB_SKIP
# (comma-separated tags) leaves some out.
SUBMISSIONS = [
    ("diag_matmul_load_inline.py", DIAG, "kernelbench", [], "PASSED", "diag_load_inline_cold",
     None),
    ("diag_matmul_load_inline.py", DIAG, "kernelbench", [], "PASSED", "diag_load_inline_warm",
     None),
    # torch alone: its timed calls launch cuDNN's and torch's kernels, none of its own.
    ("conv_bias_relu.py", CONV, "official", [], "REJECTED", "conv_torch",
     "integrity.no_own_kernel: the timed calls launched"),
    ("conv_bias_relu_triton.py", CONV, "official", ["torch_compile"], "PASSED", "conv_triton",
     None),
    ("relu_fallback.py", RELU, "kernelbench", [], "REJECTED", "relu_fallback",
     "integrity.exception_fallback: RuntimeError"),
    ("relu_inherits.py", RELU, "kernelbench", [], "REJECTED", "relu_inherits",
     "integrity.inherits_reference"),
    ("relu_torch.py", RELU, "kernelbench", [], "REJECTED", "relu_torch",
     "integrity.no_own_kernel"),
    ("relu_triton.py", RELU, "kernelbench", [], "PASSED", "relu_triton_cold", None),
    ("relu_triton.py", RELU, "kernelbench", [], "PASSED", "relu_triton_warm", None),
]
SKIP = set(filter(None, os.environ.get("KILN_KB_SKIP", "").split(",")))
# The ModelNew files CI also judges (on its scaled-down problems) are not copied here.
CI_CANDIDATES = os.path.join(HERE, "..", "integration", "data", "kernelbench_candidates")


def candidate(file):
    here = os.path.join(HERE, "kernelbench", file)
    return here if os.path.exists(here) else os.path.join(CI_CANDIDATES, file)


def torch_load_inline_build(source_file, work, timeout):
    """torch's own load_inline on `source_file` (imported as a module), then each build command
    alone. Returns a dict of timings."""
    ext_dir = os.path.join(work, "torch_extensions")
    os.makedirs(ext_dir, exist_ok=True)
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext_dir)
    code = ("import importlib.util, time, sys\n"
            "t0 = time.monotonic()\n"
            "import torch\n"
            "t1 = time.monotonic()\n"
            f"spec = importlib.util.spec_from_file_location('m', {source_file!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "t2 = time.monotonic()\n"
            "print('TIMES', t1 - t0, t2 - t1)\n")
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=timeout)
    result = {"wall_s": time.monotonic() - start, "rc": r.returncode,
              "stderr_tail": r.stderr[-1500:]}
    m = re.search(r"TIMES ([0-9.]+) ([0-9.]+)", r.stdout)
    if m:
        result["import_torch_s"] = float(m.group(1))
        result["load_inline_s"] = float(m.group(2))
    # Each compile and link command of the build, alone (sequentially, cold object files).
    steps = []
    for folder, _, files in os.walk(ext_dir):
        if "build.ninja" not in files:
            continue
        try:
            q = subprocess.run(["ninja", "-C", folder, "-t", "commands"], capture_output=True,
                               text=True, timeout=30)
            commands = [c for c in q.stdout.splitlines() if c.strip()]
        except Exception as e:  # noqa: BLE001
            result["ninja_commands_error"] = repr(e)
            commands = []
        for c in commands:
            for f in os.listdir(folder):
                if f.endswith(".o") or f.endswith(".so"):
                    os.unlink(os.path.join(folder, f))
            t0 = time.monotonic()
            rr = subprocess.run(c, shell=True, cwd=folder, capture_output=True, text=True,
                                timeout=timeout)
            what = "link" if " -shared" in c and ".so" in c else \
                ("nvcc" if "nvcc" in shlex.split(c)[0] else "c++")
            steps.append({"step": what, "seconds": time.monotonic() - t0, "rc": rr.returncode,
                          "command": c[:400]})
        # nvcc's phases for the .cu alone.
        for c in commands:
            if "nvcc" in c.split()[0]:
                t0 = time.monotonic()
                rr = subprocess.run(c + " --dryrun", shell=True, cwd=folder, capture_output=True,
                                    text=True, timeout=60)
                result["nvcc_dryrun"] = rr.stderr[-3000:]
        break
    result["steps"] = steps
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("kernelbench")
    parser.add_argument("--budget-s", type=float, default=420)
    opts = parser.parse_args()
    budget = agreement.Budget(opts.budget_s)
    out = os.path.abspath(opts.out)
    details = os.path.join(out, "details")
    os.makedirs(details, exist_ok=True)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    harness = agreement.Harness(os.path.abspath(opts.bundle), work, details)
    harness.extra_args = ["--worker-timeout-s", "300", "--max-tensor-bytes", str(64 << 30)]
    results = {"submissions": [], "checks": []}
    failed = []

    def check(name, ok, detail):
        results["checks"].append({"check": name, "ok": bool(ok), "detail": detail})
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)
        if not ok:
            failed.append(name)

    def save():
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)

    harness.start()
    try:
        t0 = time.monotonic()
        rc, text = harness.kiln(["defs", "import", opts.kernelbench, "--format", "kernelbench",
                                 "--definition", RELU, "--definition", CONV, "--definition",
                                 DIAG, "--json"],
                                "import", 300)
        doc = agreement.parse_json(text) or {}
        results["import_s"] = time.monotonic() - t0
        check("import ReLU and Conv2D_ReLU_BiasAdd", rc == 0 and
              doc.get("summary", {}).get("registered") == 3, f"rc {rc}, "
              f"{doc.get('summary')}, {results['import_s']:.1f} s")
        for file, definition, mode, baselines, expected, tag, prefix in SUBMISSIONS:
            if tag in SKIP:
                continue
            if budget.left() < 60:
                check(tag, False, "not run: out of time")
                continue
            args = ["submit", "--definition", definition, "--solution", candidate(file),
                    "--mode", mode, "--json",
                    "--timeout-s", str(int(min(300, budget.left() - 20)))]
            for b in baselines:
                args += ["--baseline", b]
            start = time.monotonic()
            rc, text = harness.kiln(args, tag, min(320, budget.left()))
            wall = time.monotonic() - start
            doc = agreement.parse_json(text) or {}
            status = doc.get("status", "(none)")
            traces = doc.get("traces") or [{}]
            ev = traces[0].get("evaluation") or {}
            perf = ev.get("performance") or {}
            entry = {"tag": tag, "file": file, "definition": definition, "mode": mode,
                     "status": status, "wall_s": round(wall, 2),
                     "latency_ms": perf.get("latency_ms"),
                     "reference_latency_ms": perf.get("reference_latency_ms"),
                     "speedup": perf.get("speedup_factor"),
                     "reason": ((traces[0].get("kiln") or {}).get("reason") or doc.get("reason")
                                or "")[:600],
                     "log_tail": (ev.get("log") or "")[-1500:],
                     "baselines": [{k: b.get(k) for k in ("name", "latency_ms", "speedup", "note")}
                                   for b in ((traces[0].get("kiln") or {}).get("baselines") or [])],
                     "stages": doc.get("stage_seconds") or doc.get("stages")}
            if doc.get("run_id"):
                _, shown = harness.kiln(["runs", "show", doc["run_id"], "--json"], tag + "_run",
                                        60)
                entry["compile_log_tail"] = ((agreement.parse_json(shown) or {})
                                             .get("compile_log") or "")[-1500:]
            results["submissions"].append(entry)
            save()
            if expected is not None:
                ok = status == expected and (prefix is None or entry["reason"].startswith(prefix))
                check(f"{tag} {expected}", ok,
                      f"{status} in {wall:.1f} s, latency {perf.get('latency_ms')} ms, speedup "
                      f"{perf.get('speedup_factor')}; {entry['reason'][:200]}")
            else:
                print(f"     {tag}: {status} in {wall:.1f} s; {entry['reason'][:300]}",
                      flush=True)
        # The suite report over the runs above, in kernelbench mode (most of them; the node's
        # default mode, official, may have none).
        svg = os.path.join(details, "kernelbench_suite.svg")
        rc, text = harness.kiln(["report", "--suite", "kernelbench", "--mode", "kernelbench",
                                 "--json", "--svg", svg], "suite_report", 60)
        doc = agreement.parse_json(text) or {}
        results["suite_report"] = doc
        check("report --suite kernelbench", rc == 0 and doc.get("problems_run", 0) >= 1
              and os.path.exists(svg), f"rc {rc}, {doc.get('problems_run')} problems run, "
              f"teams {json.dumps(doc.get('teams'))[:400]}")
    finally:
        harness.stop()
    save()
    if budget.left() > 90 and "torch_load_inline" not in SKIP:
        try:
            results["torch_load_inline"] = torch_load_inline_build(
                os.path.join(HERE, "kernelbench", "diag_matmul_load_inline.py"), work,
                min(240, budget.left() - 30))
            li = results["torch_load_inline"]
            print(f"     torch load_inline: rc {li['rc']}, import torch "
                  f"{li.get('import_torch_s')}, load_inline {li.get('load_inline_s')} s; steps "
                  + ", ".join(f"{s['step']} {s['seconds']:.1f} s" for s in li["steps"]),
                  flush=True)
        except Exception as e:  # noqa: BLE001
            results["torch_load_inline"] = {"error": repr(e)}
        save()
    if budget.left() > 60 and "dry_run" not in SKIP:
        t0 = time.monotonic()
        try:
            r = subprocess.run([os.path.join(harness.bin, "kiln"), "--server", "127.0.0.1:1",
                                "defs", "import", opts.kernelbench, "--format", "kernelbench",
                                "--dry-run", "--json"], capture_output=True, text=True,
                               timeout=budget.left() - 20)
            doc = agreement.parse_json(r.stdout) or {}
            failed_defs = [{"name": d["name"], "why": (d.get("errors") or [""])[0][:300]}
                           for d in doc.get("definitions", []) if d.get("status") == "failed"]
            results["dry_run"] = {"seconds": time.monotonic() - t0, "rc": r.returncode,
                                  "summary": doc.get("summary"), "failed": failed_defs}
            print(f"     dry run of levels 1-3: {doc.get('summary')} in "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
        except subprocess.TimeoutExpired:
            results["dry_run"] = {"seconds": time.monotonic() - t0, "timed_out": True}
        save()
    with open(os.path.join(out, "summary.md"), "w") as f:
        for c in results["checks"]:
            f.write(f"- {'ok' if c['ok'] else 'FAIL'} {c['check']}: {c['detail']}\n")
    print(f"{len(results['checks']) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
