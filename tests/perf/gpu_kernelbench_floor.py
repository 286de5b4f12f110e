#!/usr/bin/env python3
"""The noise floor of kiln's KernelBench speedups: each problem's reference as its candidate.

For every KernelBench problem of the chosen level the node registers, submits the problem file
with `ModelNew = Model` appended (the reference as the candidate: the true speedup is 1) in each
timing mode (each problem set --allow-torch-only true: the reference does no work of its own,
which integrity.no_own_kernel would reject), and records the verdict, the speedup and its 95 % interval (kiln's: the reference's
latency interval over the candidate's, harness/model/speedup_interval.h). The report gives per
mode how many PASSED, how many intervals contain 1.0, how many are ties at the noise floor (the
interval widened by --noise-floor on both sides holds 1.0, as kiln report marks a tie), the
distribution of |speedup - 1|, the
time to each verdict, and the problems the node refused to register (with the reason). Problems
run largest inputs first when --big-first is given, so the big ones are measured within budget.
With --in-flight N, N submissions are outstanding at once: the node compiles (imports) the next
problems while one holds the device, as a suite runner would submit them. The report gives the
seconds the device slot was held (kiln_device_busy_seconds_total from the node's /metrics): the
pass's device time, next to its wall time.

  python3 tests/perf/gpu_kernelbench_floor.py BUNDLE_DIR KERNELBENCH_DIR OUT_DIR \\
      [--level 1] [--modes kernelbench,official] [--budget-s 540] \\
      [--max-tensor-bytes 17179869184] [--only NAME,...] [--in-flight 4]

Writes OUT_DIR/report.md, OUT_DIR/floor.jsonl (a line per submission, written as it goes) and
OUT_DIR/details/ (harness.log, every CLI call's output).
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_timing_agreement as agreement  # noqa: E402  (Harness, Budget)
from gpu_timing_agreement import parse_json  # noqa: E402


def interval_of(trace):
    """kiln's 95 % speedup interval of a trace: reference interval over the candidate's."""
    k = trace.get("kiln") or {}
    c, r = k.get("timing") or {}, k.get("reference_timing") or {}
    try:
        return (r["ci95_low_ms"] / c["ci95_high_ms"], r["ci95_high_ms"] / c["ci95_low_ms"])
    except (KeyError, ZeroDivisionError, TypeError):
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bundle")
    p.add_argument("kernelbench")
    p.add_argument("out")
    p.add_argument("--level", type=int, default=1)
    p.add_argument("--modes", default="kernelbench,official")
    p.add_argument("--budget-s", type=float, default=540)
    p.add_argument("--max-tensor-bytes", type=int, default=32 << 30)
    p.add_argument("--only", default="", help="comma-separated definition names")
    p.add_argument("--big-first", action="store_true")
    p.add_argument("--backend", default="cuda", help="host: a CPU check of this script")
    p.add_argument("--repeat", type=int, default=1, help="submissions per problem and mode")
    p.add_argument("--skip", type=int, default=0,
                   help="leave out the first K problems in the node's order (continue a pass)")
    p.add_argument("--candidate-form", choices=("alias", "subclass"), default="alias",
                   help="ModelNew = Model, or class ModelNew(Model): pass")
    p.add_argument("--in-flight", type=int, default=1,
                   help="submissions outstanding at once (the node queues them on its device)")
    p.add_argument("--worker-logs", action="store_true",
                   help="write every run's worker cost lines to details/worker_logs.txt")
    p.add_argument("--noise-floor", type=float, default=0.02,
                   help="the floor the report's tie count uses (kiln report's default 0.02)")
    p.add_argument("--samples", action="store_true",
                   help="download every run's raw timing samples (candidate and reference) to "
                        "details/samples/, and give each run's slow samples in floor.jsonl")
    o = p.parse_args()
    if o.in_flight < 1:
        raise SystemExit("--in-flight must be at least 1")
    if not 0 <= o.noise_floor < 1:
        raise SystemExit("--noise-floor must be in [0, 1)")
    started = time.time()
    budget = agreement.Budget(o.budget_s)
    left = budget.left
    os.makedirs(o.out, exist_ok=True)
    details = os.path.join(o.out, "details")
    os.makedirs(details, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kiln-floor-")
    harness = agreement.Harness(os.path.abspath(o.bundle), work, details)
    harness.backend = o.backend
    metrics_port = random.randint(20000, 29999)
    harness.extra_args = ["--max-tensor-bytes", str(o.max_tensor_bytes),
                          "--check-references=false",
                          "--metrics-listen", f"127.0.0.1:{metrics_port}"]
    harness.start()

    def metric_sum(name):
        """The node's /metrics series of `name` summed (over slots); None if unread."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                        timeout=10) as r:
                text = r.read().decode()
        except OSError:
            return None
        total = 0.0  # a slot that never held a run has no series yet
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def device_busy_s():
        """kiln_device_busy_seconds_total summed over the node's slots; None if unread."""
        return metric_sum("kiln_device_busy_seconds_total")

    def kiln(args, tag, timeout):
        """harness.kiln, and the call's stderr (details/TAG.err)."""
        rc, out = harness.kiln(args, tag, timeout)
        with open(os.path.join(details, tag + ".err"), errors="replace") as f:
            return rc, out, f.read()

    lines = []
    report = [f"# KernelBench level {o.level}: the reference as its own candidate", ""]
    try:
        t0 = time.time()
        imp_rc, imp_out, imp_err = kiln(["defs", "import", o.kernelbench, "--format",
                                         "kernelbench", "--level", str(o.level), "--json"],
                                        "import", min(300, left()))
        import_s = time.time() - t0
        refused = []
        try:
            doc = json.loads(imp_out)
            for item in doc.get("definitions", []):
                if item.get("errors"):
                    refused.append((item.get("file", item.get("name", "?")),
                                    "; ".join(item["errors"])))
        except ValueError:
            pass
        _, listed, _ = kiln(["defs", "list", "--json"], "defs_list", 60)
        names = []
        try:
            for d in json.loads(listed).get("definitions", []):
                name = d.get("name", "")
                if name.startswith(f"kernelbench_l{o.level}_"):
                    names.append(name)
        except ValueError:
            pass
        if o.only:
            wanted = set(o.only.split(","))
            names = [n for n in names if n in wanted]
        files = {}
        for f in os.listdir(os.path.join(o.kernelbench, f"level{o.level}")):
            if f.endswith(".py"):
                pid, rest = f[:-3].split("_", 1)
                files[f"kernelbench_l{o.level}_{pid}_{rest}"] = os.path.join(
                    o.kernelbench, f"level{o.level}", f)
        # The reference does no work of its own: integrity.no_own_kernel would reject it, so the
        # calibration asks the node to only warn (kiln defs set --allow-torch-only true).
        for name in names:
            kiln(["defs", "set", name, "--allow-torch-only", "true"], "defs_set", 60)
        registered = len(names)
        names = names[o.skip:]
        if o.big_first:
            names.sort(key=lambda n: -os.path.getsize(files.get(n, __file__)))
        report += [f"node: `kiln-harness --backend {o.backend} --max-tensor-bytes {o.max_tensor_bytes} "
                   f"--check-references=false`, every problem `kiln defs set --allow-torch-only true`; "
                   f"import {import_s:.1f} s (exit {imp_rc}), "
                   f"{registered} problems registered, {len(refused)} refused"
                   + (f", the first {o.skip} skipped" if o.skip else ""), ""]
        if imp_rc != 0:
            report += ["import stderr (tail):", "```", imp_err[-1500:], "```", ""]
        modes = o.modes.split(",")
        jobs = [(name, mode) for name in names if name in files
                for mode in [m for m in modes for _ in range(o.repeat)]]

        def fetch_samples(run_id, tag):
            """The run's samples artifacts saved; per artifact: count, median, mean, the
            indices of samples over 1.05 x the median (where in the run the slow ones fell)."""
            folder = os.path.join(details, "samples")
            os.makedirs(folder, exist_ok=True)
            summary = {}
            listed = parse_json(kiln(["runs", "artifacts", run_id, "--json"], tag + "_artifacts",
                                     60)[1]) or {}
            for a in listed.get("artifacts", []):
                if a.get("kind") != "samples":
                    continue
                path = os.path.join(folder, f"{tag}_{a['name']}.json")
                kiln(["runs", "artifact", run_id, "--kind", "samples", a["name"], "--output",
                      path], tag + "_artifact", 60)
                try:
                    with open(path) as f:
                        xs = json.load(f)["samples_ms"]
                except (OSError, ValueError, KeyError):
                    continue
                if not xs:
                    continue
                med = statistics.median(xs)
                summary[a["name"]] = {
                    "count": len(xs), "median_ms": round(med, 6),
                    "mean_ms": round(statistics.fmean(xs), 6),
                    "slow": [i for i, x in enumerate(xs) if x > 1.05 * med]}
            return summary

        def run_job(index, name, mode):
            """One submission, its run shown; the floor.jsonl entry (None: out of budget)."""
            if left() < 20:
                return None
            cand = os.path.join(work, f"{name}_{mode}_{index}_same.py")
            tail = ("ModelNew = Model\n" if o.candidate_form == "alias" else
                    "class ModelNew(Model):\n    pass\n")
            with open(files[name]) as src, open(cand, "w") as dst:
                dst.write(src.read() + "\n\n" + tail)
            t0 = time.time()
            tag = f"{name}_{mode}_{index}"
            sub_rc, sub_out, sub_err = kiln(
                ["submit", "--definition", name, "--solution", cand, "--mode", mode,
                 "--json"], tag, min(180 * o.in_flight, max(10, left() - 10)))
            wall = time.time() - t0
            entry = {"definition": name, "mode": mode, "wall_s": round(wall, 3),
                     "exit": sub_rc}
            try:
                run_id = json.loads(sub_out)["run_id"]
                shown = json.loads(kiln(["runs", "show", run_id, "--json"],
                                        tag + "_show", 60)[1])
                entry.update(run_id=run_id, status=shown.get("status"),
                             reason=shown.get("reason", "")[:300],
                             stages={k: shown.get(k) for k in
                                     ("queued_s", "compile_s", "verify_s", "timing_s")})
                t = shown["traces"][0]
                perf = t["evaluation"].get("performance") or {}
                entry["speedup"] = perf.get("speedup_factor")
                entry["interval"] = interval_of(t) if perf else None
                entry["latency_ms"] = perf.get("latency_ms")
                if o.samples:
                    entry["samples"] = fetch_samples(run_id, tag)
            except (ValueError, KeyError, IndexError, TypeError):
                entry["error"] = (sub_err or sub_out)[-400:]
            return entry

        busy_before = device_busy_s()
        pass_started = time.time()
        with open(os.path.join(o.out, "floor.jsonl"), "w") as jl, \
                concurrent.futures.ThreadPoolExecutor(max_workers=o.in_flight) as pool:
            futures = [pool.submit(run_job, i, name, mode) for i, (name, mode) in enumerate(jobs)]
            for future in concurrent.futures.as_completed(futures):
                entry = future.result()
                if entry is None:
                    continue
                jl.write(json.dumps(entry) + "\n")  # this thread alone writes
                jl.flush()
                lines.append(entry)
        pass_s = time.time() - pass_started
        busy_after = device_busy_s()
        # In submission order, as the node listed the problems.
        order = {job: i for i, job in enumerate(jobs)}
        lines.sort(key=lambda e: order.get((e["definition"], e["mode"]), 0))
        device_s = (busy_after - busy_before
                    if busy_before is not None and busy_after is not None else None)
        warm = metric_sum("kiln_warm_workers_started_total")
        from_spare = metric_sum("kiln_warm_workers_from_spare_total")
        report += [f"pass: {len(lines)} submissions of {len(jobs)}, {o.in_flight} in flight, "
                   f"wall {pass_s:.0f} s, device slot held "
                   + (f"{device_s:.0f} s" if device_s is not None else "(no /metrics)")
                   + (f"; reference workers started {warm:.0f}, of them {from_spare:.0f} from "
                      f"a runner started ahead of need" if warm is not None and
                      from_spare is not None else ""), ""]
        for mode in modes:
            got = [e for e in lines if e["mode"] == mode]
            passed = [e for e in got if e.get("status") == "PASSED"]
            contain = [e for e in passed if e.get("interval") and
                       e["interval"][0] <= 1.0 <= e["interval"][1]]
            # A tie as kiln report marks one (harness/model/speedup_interval.h, WithinNoise):
            # the interval widened by the floor on both sides holds 1.0.
            ties = [e for e in passed if e.get("interval") and
                    e["interval"][0] / (1 + o.noise_floor) <= 1.0 <=
                    e["interval"][1] * (1 + o.noise_floor)]
            dev = sorted(abs(e["speedup"] - 1) for e in passed if e.get("speedup"))
            walls = [e["wall_s"] for e in got]
            report += [f"## mode {mode}", "",
                       f"- submitted {len(got)}, PASSED {len(passed)}, interval contains 1.0: "
                       f"{len(contain)} of {len(passed)}, a tie at the noise floor "
                       f"{o.noise_floor:g} (the interval widened by it holds 1.0): "
                       f"{len(ties)} of {len(passed)}"]
            if dev:
                q = lambda f: dev[min(len(dev) - 1, int(f * len(dev)))]  # noqa: E731
                report.append(f"- |speedup - 1|: median {statistics.median(dev):.4f}, p90 "
                              f"{q(0.9):.4f}, p99 {q(0.99):.4f}, max {dev[-1]:.4f}")
            if walls:
                report.append(f"- time to verdict: median {statistics.median(walls):.2f} s, max "
                              f"{max(walls):.2f} s, total {sum(walls):.0f} s")
            for e in got:
                if e.get("status") != "PASSED" or (e.get("interval") and not (
                        e["interval"][0] <= 1.0 <= e["interval"][1])):
                    report.append(f"  - {e['definition']}: {e.get('status', 'no verdict')} "
                                  f"speedup {e.get('speedup')} interval {e.get('interval')} "
                                  f"{e.get('reason', '') or e.get('error', '')[:200]}")
            report.append("")
        if refused:
            report += ["## refused at registration", ""]
            report += [f"- {f}: {why[:200]}" for f, why in refused]
    finally:
        if o.worker_logs:
            from gpu_verdict_time import dump_worker_logs
            dump_worker_logs(harness, [e["run_id"] for e in lines if e.get("run_id")],
                             os.path.join(details, "worker_logs.txt"))
        harness.stop()
        report.append(f"\n({time.time() - started:.0f} s, "
                      f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())})")
        with open(os.path.join(o.out, "report.md"), "w") as f:
            f.write("\n".join(report) + "\n")
        print("\n".join(report))
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
