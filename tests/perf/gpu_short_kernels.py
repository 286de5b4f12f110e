#!/usr/bin/env python3
"""How repeatable kiln's official latency is for kernels of about 2 us, across runs, next to an
independent CUPTI span of the same kernels measured as many times, side by side in one run.

For kernels this short a percentage against another timer is mostly launch-to-launch jitter, so
instead of claiming agreement within a percentage this publishes the spread of both: kiln's
latency of ROUNDS separate submissions, and the direct span of ROUNDS separate measurements.

Kernels (definition rmsnorm_h4096, hidden 4096, bfloat16; workloads batch 7 and 64 of the
flashinfer-trace dataset):
  cuda    tests/gpu/solutions/rmsnorm_h4096_tuned (kiln's CUDA ABI)
  triton  tests/gpu/solutions/rmsnorm_h4096_triton
Per round, in alternating order: one `kiln submit` of each (official mode, both workloads in one
run; the reference's latency cached after the first round), then the direct measurement of each
kernel at each batch: 3 trials on fresh inputs, each the median of 50 calls' CUPTI spans
(torch.profiler) after a 2 x L2 zero-fill and a synchronize, the mean of the 3 medians: kiln's
official protocol done by hand on the same kernel (the CUDA one built with kiln's nvcc flags and
called through the ABI by tests/gpu/kiln_ctypes.py, the Triton one by tests/gpu/
python_solutions.py's direct_latency). --kernels triton alone is what
tests/perf/triton_timing_agreement.py measured before this script took its place.

  python3 tests/perf/gpu_short_kernels.py BUNDLE_DIR OUT_DIR DATASET_DIR [--rounds 8]
      [--budget-s 150] [--kernels cuda,triton]

OUT_DIR gets report.md and results.json; details/ the CLI outputs and traces. Exits 1 if a
submission did not PASS or a kernel could not be measured directly.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_timing_agreement as agreement  # noqa: E402  (Harness, Budget, profiler_spans)

GPU_DIR = os.path.join(HERE, "..", "gpu")
sys.path.insert(0, GPU_DIR)
import kiln_ctypes  # noqa: E402
import python_solutions as suite  # noqa: E402  (find_file, submit, direct_latency)

LINES = [1, 7]  # rmsnorm_h4096.jsonl: batch 7 and 64
BATCHES = [7, 64]
KERNELS = {"cuda": ("rmsnorm_h4096_tuned", "rmsnorm_tuned"),
           "triton": ("rmsnorm_h4096_triton", "rmsnorm_row")}


def stats(values):
    """mean, sample stdev, CV %, range (max - min) as % of the mean and in ns."""
    if not values:
        return None
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    spread = max(values) - min(values)
    return {"n": len(values), "mean_ms": mean, "stdev_ms": sd,
            "cv_pct": sd / mean * 100 if mean else None,
            "range_pct": spread / mean * 100 if mean else None, "range_ns": spread * 1e6,
            "min_ms": min(values), "max_ms": max(values)}


class Direct:
    """The kernels called from this process on torch tensors, timed by torch.profiler."""

    def __init__(self, torch, bundle, details, budget, kernels):
        self.torch, self.details = torch, details
        self.so = None
        if "cuda" not in kernels:
            return
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.stream = torch.cuda.Stream()
        include_dir = os.path.join(bundle, "include")
        if not os.path.exists(os.path.join(include_dir, "kiln", "abi.h")):
            include_dir = os.path.join(HERE, "..", "..", "harness", "include")
        with open(os.path.join(GPU_DIR, "solutions", KERNELS["cuda"][0], "solution.json")) as f:
            source = json.load(f)["sources"][0]["content"]
        proc, self.so = kiln_ctypes.start_compile(source, include_dir,
                                                  os.path.join(details, "so"), "tuned")
        ok, log = kiln_ctypes.finish_compile(proc, self.so, min(120, budget.left()))
        if not ok:
            raise RuntimeError("nvcc failed: " + log.strip()[-300:])

    def latency(self, kind, batch, tag):
        solution, match = KERNELS[kind]
        trace = os.path.join(self.details, f"trace_{tag}")
        if kind == "triton":
            return suite.direct_latency(self.torch, solution, match, {"batch_size": batch},
                                        trace)[0]
        # The CUDA kernel through the ABI, as direct_latency does the Triton one.
        torch = self.torch
        medians = []
        for trial in range(3):
            with torch.cuda.stream(self.stream):
                x = torch.randn(batch, 4096, dtype=torch.bfloat16, device="cuda")
                w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
                y = torch.empty_like(x)
                call = kiln_ctypes.SolutionCall(torch, self.so, [x, w, y], ["bfloat16"] * 3,
                                                self.stream)
                median, _ = agreement.profiler_spans(torch, call, self.flush, match,
                                                     f"{trace}.{trial}.json")
                medians.append(median)
            torch.cuda.synchronize()
        return statistics.mean(medians)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("bundle")
    p.add_argument("out")
    p.add_argument("dataset")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--budget-s", type=float, default=150)
    p.add_argument("--kernels", default="cuda,triton", help="of: " + ", ".join(KERNELS))
    a = p.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]
    if not kernels or any(k not in KERNELS for k in kernels):
        p.error(f"--kernels: each of {', '.join(KERNELS)}")
    budget = agreement.Budget(a.budget_s)
    bundle = os.path.abspath(a.bundle)
    out = os.path.abspath(a.out)
    details = os.path.join(out, "details")
    work = os.path.join(out, "work")
    os.makedirs(details, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    os.environ["PATH"] = os.path.join(bundle, "bin") + os.pathsep + os.environ.get("PATH", "")
    os.environ["KILN_INCLUDE_DIR"] = os.path.join(bundle, "include")
    with open(suite.find_file(a.dataset, "rmsnorm_h4096.jsonl")) as f:
        lines = f.read().splitlines()
    jsonl = os.path.join(work, "short.jsonl")
    with open(jsonl, "w") as f:
        f.write("\n".join(lines[n - 1] for n in LINES) + "\n")
    def_json = suite.find_file(a.dataset, "rmsnorm_h4096.json")

    import torch
    results = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "rounds": [], "errors": []}
    direct = Direct(torch, bundle, details, budget, kernels)
    harness = agreement.Harness(bundle, work, details)
    harness.extra_args = ["--python", sys.executable]
    harness.start_wait_s = 60
    harness.start()
    try:
        rc, text = harness.kiln(["defs", "add", def_json, "--workloads", jsonl], "defs_add", 120)
        if rc != 0:
            raise SystemExit(f"defs add failed: {text[-300:]}")
        for r in range(a.rounds):
            if budget.left() < 25:
                results["errors"].append(f"stopped before round {r + 1}: time budget")
                break
            order = kernels if r % 2 == 0 else kernels[::-1]
            row = {"round": r + 1, "order": order, "kiln_ms": {}, "direct_ms": {}}
            for kind in order:
                tag = f"submit_{kind}_r{r + 1}"
                rc, _, doc, _ = suite.submit(harness, KERNELS[kind][0], "rmsnorm_h4096", [],
                                             jsonl, tag, budget)
                if doc.get("status") != "PASSED":
                    results["errors"].append(f"{tag}: exit {rc}, status {doc.get('status')}")
                    continue
                for t in doc.get("traces", []):
                    batch = int((t.get("workload") or {}).get("axes", {}).get("batch_size", 0))
                    perf = (t.get("evaluation") or {}).get("performance") or {}
                    if batch in BATCHES and "latency_ms" in perf:
                        row["kiln_ms"][f"{kind} {batch}"] = float(perf["latency_ms"])
            for kind in order:
                for batch in BATCHES:
                    try:
                        row["direct_ms"][f"{kind} {batch}"] = direct.latency(
                            kind, batch, f"{kind}_{batch}_r{r + 1}")
                    except Exception as e:  # noqa: BLE001 - reported; the rounds go on
                        results["errors"].append(
                            f"direct {kind} {batch} round {r + 1}: {e!r}"[:300])
            results["rounds"].append(row)
            print(f"round {r + 1}: {json.dumps(row)}", flush=True)
    finally:
        harness.stop()

    table = ["| kernel, batch | kiln: mean ms | kiln: CV % | kiln: range % (ns) | direct span: "
             "mean ms | direct: CV % | direct: range % (ns) | kiln vs direct (means) | largest "
             "per-round kiln vs direct |", "|---|---|---|---|---|---|---|---|---|"]
    summary = {}
    for kind in kernels:
        for batch in BATCHES:
            key = f"{kind} {batch}"
            k = [row["kiln_ms"][key] for row in results["rounds"] if key in row["kiln_ms"]]
            d = [row["direct_ms"][key] for row in results["rounds"] if key in row["direct_ms"]]
            ks, ds = stats(k), stats(d)
            pairs = [(row["kiln_ms"][key], row["direct_ms"][key]) for row in results["rounds"]
                     if key in row["kiln_ms"] and key in row["direct_ms"]]
            worst = max(pairs, key=lambda kd: abs(kd[0] - kd[1]), default=None)
            summary[key] = {"kiln": ks, "direct": ds, "kiln_ms": k, "direct_ms": d}
            if not ks or not ds:
                table.append(f"| {key} | {'n/a' if not ks else round(ks['mean_ms'], 5)} | | | "
                             f"{'n/a' if not ds else round(ds['mean_ms'], 5)} | | | | |")
                continue
            diff = (ks["mean_ms"] / ds["mean_ms"] - 1) * 100
            worst_text = (f"{(worst[0] / worst[1] - 1) * 100:+.2f} % "
                          f"({(worst[0] - worst[1]) * 1e6:+.0f} ns)") if worst else "n/a"
            table.append(
                f"| {key} | {ks['mean_ms']:.5f} ({ks['n']}) | {ks['cv_pct']:.2f} | "
                f"{ks['range_pct']:.2f} ({ks['range_ns']:.0f}) | {ds['mean_ms']:.5f} ({ds['n']}) | "
                f"{ds['cv_pct']:.2f} | {ds['range_pct']:.2f} ({ds['range_ns']:.0f}) | "
                f"{diff:+.2f} % ({(ks['mean_ms'] - ds['mean_ms']) * 1e6:+.0f} ns) | {worst_text} |")
    results["summary"] = summary
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    report = [f"## Short kernels across runs ({results['date']}, {results['device']}, torch "
              f"{results['torch']})", "", *table, ""]
    report += [f"- {e}" for e in results["errors"]]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    print("\n".join(report))
    measured = all(summary[k]["kiln"] and summary[k]["direct"] for k in summary)
    return 0 if measured and not any("submit" in e for e in results["errors"]) else 1


if __name__ == "__main__":
    sys.exit(main())
