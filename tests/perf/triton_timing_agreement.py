#!/usr/bin/env python3
"""kiln's official latency of a Triton kernel against an independent CUPTI span, side by side.

For the smallest kernels (tests/gpu/solutions/rmsnorm_h4096_triton at batch 7 and 64, about
2 us) a single comparison is within the noise of either measurement. This alternates ROUNDS
rounds of: `kiln submit` (official mode, the kernel's two workloads) and the same kernel timed
here by torch.profiler (CUPTI) spans after a 2 x L2 zero-fill, 3 trials of 50 calls, mean of the
trial medians (tests/gpu/python_solutions.py's direct_latency); and reports per workload the
mean difference and its spread over the rounds.

  python3 tests/perf/triton_timing_agreement.py BUNDLE_DIR OUT_DIR DATASET_DIR [--rounds 3]
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
import gpu_timing_agreement as agreement  # noqa: E402
import python_solutions as suite  # noqa: E402

LINES = [1, 7]  # rmsnorm_h4096 batch 7 and 64
SOLUTION = "rmsnorm_h4096_triton"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("dataset")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=300)
    opts = parser.parse_args()
    budget = agreement.Budget(opts.budget_s)
    out = os.path.abspath(opts.out)
    details = os.path.join(out, "details")
    work = os.path.join(out, "work")
    os.makedirs(details, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    with open(suite.find_file(opts.dataset, "rmsnorm_h4096.jsonl")) as f:
        lines = f.read().splitlines()
    jsonl = os.path.join(work, "w.jsonl")
    with open(jsonl, "w") as f:
        f.write("\n".join(lines[n - 1] for n in LINES) + "\n")
    import torch
    harness = agreement.Harness(os.path.abspath(opts.bundle), work, details)
    harness.start()
    rows = {}
    try:
        harness.kiln(["defs", "add", suite.find_file(opts.dataset, "rmsnorm_h4096.json"),
                      "--workloads", jsonl], "defs_add", 300)
        for r in range(opts.rounds):
            if budget.left() < 60:
                break
            rc, _, doc, _ = suite.submit(harness, SOLUTION, "rmsnorm_h4096", [], None,
                                         f"round{r}", budget)
            for t in doc.get("traces", []):
                axes = t["workload"]["axes"]
                kiln_ms = ((t.get("evaluation") or {}).get("performance") or {}).get("latency_ms")
                direct_ms, _ = suite.direct_latency(torch, SOLUTION, "rmsnorm_row", axes,
                                                    os.path.join(details, f"trace{r}"))
                diff = (kiln_ms - direct_ms) / direct_ms * 100
                rows.setdefault(json.dumps(axes), []).append(
                    {"kiln_ms": kiln_ms, "span_ms": direct_ms, "diff_pct": diff})
                print(f"round {r} {axes}: kiln {kiln_ms:.6f} ms, span {direct_ms:.6f} ms, "
                      f"{diff:+.2f} %", flush=True)
    finally:
        harness.stop()
    with open(os.path.join(out, "agreement.json"), "w") as f:
        json.dump(rows, f, indent=1)
    for axes, values in rows.items():
        diffs = [v["diff_pct"] for v in values]
        print(f"{axes}: mean {statistics.mean(diffs):+.2f} %, min {min(diffs):+.2f} %, "
              f"max {max(diffs):+.2f} % over {len(diffs)} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
