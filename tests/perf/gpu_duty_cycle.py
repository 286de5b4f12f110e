#!/usr/bin/env python3
"""Does the idle time between timed calls change a kernel's CUPTI span? (the GPU's duty cycle)

kiln's worker checks every timed call after it returns (input and output checksums, the CPU
accounting of other threads), so its timed calls are spaced further apart than a bare loop's.
A kernel that runs the GPU near its power limit may then run at a higher clock under kiln. This
script measures that alone, without kiln: the Triton GEMM of tests/gpu/solutions
(gemm_n4096_k4096_triton) and the Triton RMSNorm, each call after a 2 x L2 zero_() flush and a
synchronize, timed by torch.profiler's CUPTI spans (3 trials of 10 warm-up and 50 timed calls,
mean of the trial medians), with the host idling GAP ms after each call's synchronize, gaps
alternated over rounds.

  python3 tests/perf/gpu_duty_cycle.py OUT_DIR [--rounds 4] [--gaps 0,0.7,2] [--budget-s 150]
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_flush_fidelity as fidelity  # noqa: E402


def trial(torch, call, flush, gap_s, trace_path, warmup=10, iters=50):
    from torch.profiler import ProfilerActivity, profile

    def idle():
        end = time.perf_counter() + gap_s
        while time.perf_counter() < end:
            pass
    for _ in range(warmup):
        flush("zero_")
        call()
        torch.cuda.synchronize()
        idle()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            flush("zero_")
            call()
            torch.cuda.synchronize()
            idle()
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        spans = fidelity.spans_of(json.load(f))
    os.remove(trace_path)
    if len(spans) != iters:
        raise RuntimeError(f"{len(spans)} spans, expected {iters}")
    return statistics.median(spans) / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--gaps", default="0,0.7,2")
    parser.add_argument("--budget-s", type=float, default=150)
    opts = parser.parse_args()
    start = time.monotonic()
    os.makedirs(opts.out, exist_ok=True)
    import torch
    flush = fidelity.Flush(torch)
    gaps = [float(g) for g in opts.gaps.split(",")]
    cases = []
    for m in (8192, 256):
        calls, keep = fidelity.make_gemm_call(torch, m)
        cases.append((f"gemm M={m}", calls["gemm_n4096_k4096_triton"], keep))
    x = torch.randn(14418, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    rms = fidelity.load_module("rmsnorm_h4096_triton")
    cases.append(("rmsnorm batch=14418", lambda: rms.run(x, w, y), (x, w, y)))
    results = {}  # "case|gap" -> [per round]
    for r in range(opts.rounds):
        if time.monotonic() - start > opts.budget_s:
            print(f"stopped before round {r} (time budget)")
            break
        order = gaps[r % len(gaps):] + gaps[:r % len(gaps)]
        for name, call, _ in cases:
            for gap in order:
                medians = [trial(torch, call, flush, gap / 1000.0,
                                 os.path.join(opts.out, "trace.json")) for _ in range(3)]
                results.setdefault(f"{name}|{gap}", []).append(statistics.mean(medians))
        print(f"round {r} done ({time.monotonic() - start:.0f} s)", flush=True)
    rows = ["| kernel | " + " | ".join(f"gap {g} ms: ms" for g in gaps) + " | " +
            " | ".join(f"gap {g} vs 0" for g in gaps[1:]) + " |",
            "|---|" + "---|" * (2 * len(gaps) - 1)]
    for name, _, _ in cases:
        means = [statistics.mean(results.get(f"{name}|{g}", [float("nan")])) for g in gaps]
        rows.append(f"| {name} | " + " | ".join(f"{v:.5f}" for v in means) + " | " +
                    " | ".join(f"{(v - means[0]) / means[0] * 100:+.2f} %" for v in means[1:]) +
                    " |")
    text = f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}\n\n" + "\n".join(rows)
    with open(os.path.join(opts.out, "report.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(opts.out, "duty_cycle.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(text)
    for key, values in sorted(results.items()):
        print(key, " ".join(f"{v:.5f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
