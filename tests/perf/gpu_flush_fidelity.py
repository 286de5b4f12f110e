#!/usr/bin/env python3
"""kiln's official latency against independent CUPTI kernel spans, and what the flush does to them.

One run on one GPU, in alternating rounds. Each round:

  kiln      `kiln submit --mode official` of a CUDA, a Triton and a plain-torch RMSNorm
            (tests/gpu/solutions/rmsnorm_h4096_{tuned,triton,torch}) on the flashinfer-trace
            rmsnorm_h4096 at the batches below, and of a Triton GEMM
            (gemm_n4096_k4096_triton) on gemm_n4096_k4096 at the M below; latency_ms per
            workload.
  direct    the same solutions called here on torch tensors (the CUDA one through the kiln ABI,
            tests/gpu/kiln_ctypes.py), timed by torch.profiler (CUPTI): per call, last kernel end -
            first kernel start of the call's kernels; 3 trials of 10 warm-up and 50 timed calls,
            mean of the trial medians (flashinfer-bench's statistic). Before every call a flush of
            2 x L2 and a synchronize, done three ways, alternated:
              zero_          torch's buffer.zero_() of an int8 buffer, as flashinfer-bench's
                             bench_gpu_time_with_cupti does (an elementwise fill kernel)
              memset         cuMemsetD8Async on the same buffer (a driver memset)
              memset+reset   the memset after cuCtxResetPersistingL2Cache

The difference between the variants says what the kind of flush does to the kernel that
follows it; kiln against `zero_` is kiln's fidelity to the official evaluator's conditions.
With --compare-bundle, a second build's harness is submitted to in the same rounds (its column
`base`), so two builds are compared side by side in one run.

  python3 tests/perf/gpu_flush_fidelity.py BUNDLE_DIR OUT_DIR DATASET_DIR [--rounds 3]
      [--budget-s 300] [--batches 14418,8804] [--gemm-m 256,8192]
      [--compare-bundle OTHER_BUNDLE_DIR] [--solutions A,B] [--variants zero_,memset]

OUT_DIR gets report.md, fidelity.json and details/.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "gpu"))
import gpu_timing_agreement as agreement  # noqa: E402
import kiln_ctypes  # noqa: E402
import python_solutions as suite  # noqa: E402

SOLUTIONS = ["rmsnorm_h4096_tuned", "rmsnorm_h4096_triton", "rmsnorm_h4096_torch",
             "gemm_n4096_k4096_triton"]
# solution -> (definition, the workload axis the sizes are of)
CASES = {"rmsnorm_h4096_tuned": ("rmsnorm_h4096", "batch_size"),
         "rmsnorm_h4096_triton": ("rmsnorm_h4096", "batch_size"),
         "rmsnorm_h4096_torch": ("rmsnorm_h4096", "batch_size"),
         "gemm_n4096_k4096_triton": ("gemm_n4096_k4096", "M")}
VARIANTS = ["zero_", "memset", "memset+reset"]


class Flush:
    """2 x L2 bytes flushed before each call, by one of VARIANTS."""

    def __init__(self, torch):
        self.torch = torch
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.size = (2 * l2 // (1 << 20)) << 20  # flashinfer-bench: 2 x L2 in whole MiB
        self.buffer = torch.empty(self.size, dtype=torch.int8, device="cuda")
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.cuda.cuMemsetD8Async.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t,
                                              ctypes.c_void_p]
        self.cuda.cuCtxResetPersistingL2Cache.argtypes = []

    def __call__(self, variant):
        torch = self.torch
        if variant == "zero_":
            self.buffer.zero_()
        else:
            if variant == "memset+reset":
                rc = self.cuda.cuCtxResetPersistingL2Cache()
                if rc != 0:
                    raise RuntimeError(f"cuCtxResetPersistingL2Cache: {rc}")
            stream = torch.cuda.current_stream().cuda_stream
            rc = self.cuda.cuMemsetD8Async(self.buffer.data_ptr(), 0, self.size, stream)
            if rc != 0:
                raise RuntimeError(f"cuMemsetD8Async: {rc}")
        torch.cuda.synchronize()


def is_flush(event):
    name = str(event.get("name", ""))
    cat = str(event.get("cat", "")).lower()
    return cat == "gpu_memset" or "FillFunctor" in name or "memset" in name.lower()


def spans_of(trace):
    """Per call: last end - first start (us) of the kernels between two flushes."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    gpu = sorted((e for e in events if isinstance(e, dict) and "dur" in e and "ts" in e and
                  str(e.get("cat", "")).lower() in ("kernel", "gpu_memset", "gpu_memcpy")),
                 key=lambda e: float(e["ts"]))
    spans, first, last = [], None, None
    for e in gpu:
        ts, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        if is_flush(e):
            if first is not None:
                spans.append(last - first)
            first = last = None
            continue
        first = ts if first is None else first
        last = end if last is None else max(last, end)
    if first is not None:
        spans.append(last - first)
    return spans


def direct_trial(torch, call, flush, variant, trace_path, warmup=10, iters=50):
    from torch.profiler import ProfilerActivity, profile
    for _ in range(warmup):
        flush(variant)
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            flush(variant)
            call()
            torch.cuda.synchronize()
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        spans = spans_of(json.load(f))
    os.remove(trace_path)
    if len(spans) != iters:
        raise RuntimeError(f"{len(spans)} call spans in the profile, expected {iters}")
    return statistics.median(spans) / 1000.0


def load_module(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "direct_" + name, os.path.join(HERE, "..", "gpu", "solutions", name, "kernel.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_gemm_call(torch, m):
    """The Triton GEMM C = A B^T on fresh randn inputs of M = m rows."""
    a = torch.randn(m, 4096, dtype=torch.float16, device="cuda")
    b = torch.randn(4096, 4096, dtype=torch.float16, device="cuda")
    c = torch.empty(m, 4096, dtype=torch.float16, device="cuda")
    module = load_module("gemm_n4096_k4096_triton")
    return {"gemm_n4096_k4096_triton": lambda: module.run(a, b, c)}, (a, b, c)


def make_calls(torch, batch, cuda_so):
    """{solution: zero-argument call} on fresh randn inputs of `batch` rows."""
    x = torch.randn(batch, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    calls = {}
    stream = torch.cuda.current_stream()
    calls["rmsnorm_h4096_tuned"] = kiln_ctypes.SolutionCall(
        torch, cuda_so, [x, w, y], ["bfloat16"] * 3, stream)
    for name in ("rmsnorm_h4096_triton", "rmsnorm_h4096_torch"):
        module = load_module(name)
        if name.endswith("triton"):
            calls[name] = (lambda m: lambda: m.run(x, w, y))(module)
        else:
            calls[name] = (lambda m: lambda: m.run(x, w))(module)
    return calls, (x, w, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("dataset")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=300)
    parser.add_argument("--batches", default="14418,8804")
    parser.add_argument("--gemm-m", default="256,8192",
                        help="M of the Triton GEMM's workloads; empty: no GEMM")
    parser.add_argument("--compare-bundle", default="")
    parser.add_argument("--solutions", default=",".join(SOLUTIONS),
                        help="which of the solutions, comma-separated")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="which flushes of the direct loop, comma-separated (zero_ first)")
    opts = parser.parse_args()
    variants = [v for v in opts.variants.split(",") if v]
    if not variants or variants[0] != "zero_" or set(variants) - set(VARIANTS):
        raise SystemExit(f"--variants: zero_ first, then any of {VARIANTS[1:]}")
    budget = agreement.Budget(opts.budget_s)
    out = os.path.abspath(opts.out)
    details = os.path.join(out, "details")
    work = os.path.join(out, "work")
    os.makedirs(details, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    batches = [int(b) for b in opts.batches.split(",")]
    gemm_ms = [int(m) for m in opts.gemm_m.split(",") if m.strip()]
    sizes = {"rmsnorm_h4096": batches, "gemm_n4096_k4096": gemm_ms}
    wanted_solutions = set(opts.solutions.split(","))
    if wanted_solutions - set(SOLUTIONS):
        raise SystemExit(f"--solutions: unknown {sorted(wanted_solutions - set(SOLUTIONS))}")
    solutions = [sol for sol in SOLUTIONS if sizes[CASES[sol][0]] and sol in wanted_solutions]
    jsonls = {}  # definition -> the picked workloads' file
    for definition, wanted in sizes.items():
        if not wanted:
            continue
        axis = "batch_size" if definition == "rmsnorm_h4096" else "M"
        with open(suite.find_file(opts.dataset, definition + ".jsonl")) as f:
            lines = [line for line in f.read().splitlines() if line.strip()]
        picked, seen = [], set()
        for line in lines:
            size = json.loads(line)["workload"]["axes"].get(axis)
            if size in wanted and size not in seen:
                seen.add(size)
                picked.append(line)
        if seen != set(wanted):
            raise SystemExit(f"{definition}: no workload with {axis} "
                             f"{sorted(set(wanted) - seen)} in the dataset")
        jsonls[definition] = os.path.join(work, definition + ".jsonl")
        with open(jsonls[definition], "w") as f:
            f.write("\n".join(picked) + "\n")

    import torch
    bundle = os.path.abspath(opts.bundle)
    with open(os.path.join(HERE, "..", "gpu", "solutions", "rmsnorm_h4096_tuned",
                           "solution.json")) as f:
        cuda_source = json.load(f)["sources"][0]["content"]
    proc, cuda_so = kiln_ctypes.start_compile(cuda_source, os.path.join(bundle, "include"), work,
                                              "rmsnorm_tuned")
    builds = [("kiln", bundle)]
    if opts.compare_bundle:
        builds.append(("base", os.path.abspath(opts.compare_bundle)))
    harnesses = {}
    for label, b in builds:
        d = os.path.join(details, label)
        w = os.path.join(work, label)
        os.makedirs(d, exist_ok=True)
        os.makedirs(w, exist_ok=True)
        harnesses[label] = agreement.Harness(b, w, d)
    for h in harnesses.values():
        h.start()
    kiln_ms = {}    # (build, solution, batch) -> [latency per round]
    direct_ms = {}  # (solution, batch, variant) -> [mean of trial medians per round]
    notes = []
    try:
        for label, harness in harnesses.items():
            for definition, jsonl in jsonls.items():
                rc, _ = harness.kiln(["defs", "add",
                                      suite.find_file(opts.dataset, definition + ".json"),
                                      "--workloads", jsonl], "defs_add_" + definition, 300)
                if rc != 0:
                    raise RuntimeError(f"defs add {definition} failed on {label} ({rc})")
        ok, log = kiln_ctypes.finish_compile(proc, cuda_so, 120)
        if not ok:
            raise RuntimeError("nvcc failed: " + log[-300:])
        flush = Flush(torch)
        notes.append(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, flush "
                     f"{flush.size >> 20} MiB")
        for r in range(opts.rounds):
            if budget.left() < 70:
                notes.append(f"stopped before round {r} (time budget)")
                break
            # The builds alternate which goes first.
            order = list(harnesses.items())
            if r % 2:
                order.reverse()
            for solution in solutions:
                definition, axis = CASES[solution]
                for label, harness in order:
                    rc, wall, doc, _ = suite.submit(harness, solution, definition, [],
                                                    jsonls[definition],
                                                    f"r{r}_{label}_{solution}", budget)
                    for t in doc.get("traces", []):
                        batch = t["workload"]["axes"][axis]
                        e = t.get("evaluation") or {}
                        lat = (e.get("performance") or {}).get("latency_ms")
                        if e.get("status") != "PASSED" or lat is None:
                            notes.append(f"round {r} {label} {solution} b={batch}: "
                                         f"{e.get('status')} {str(e.get('log', ''))[:160]}")
                            continue
                        kiln_ms.setdefault(f"{label}|{solution}|{batch}", []).append(lat)
                    print(f"round {r} {label} {solution}: {wall:.1f} s", flush=True)
            direct_sets = [(b, lambda b=b: make_calls(torch, b, cuda_so)) for b in batches]
            direct_sets += [(m, lambda m=m: make_gemm_call(torch, m)) for m in gemm_ms]
            for batch, make in direct_sets:
                calls, keep = make()
                for solution in calls:
                    if solution not in solutions:
                        continue
                    order = variants[r % len(variants):] + variants[:r % len(variants)]
                    for variant in order:
                        try:
                            medians = [direct_trial(torch, calls[solution], flush, variant,
                                                    os.path.join(work, "trace.json"))
                                       for _ in range(3)]
                        except Exception as e:  # noqa: BLE001 - noted; the others go on
                            notes.append(f"direct {solution} b={batch} {variant}: {e}")
                            with open(os.path.join(details, "direct_errors.txt"), "a") as f:
                                f.write(traceback.format_exc() + "\n")
                            continue
                        direct_ms.setdefault(f"{solution}|{batch}|{variant}", []).append(
                            statistics.mean(medians))
                del calls, keep
                torch.cuda.empty_cache()
            print(f"round {r} direct done ({budget.left():.0f} s left)", flush=True)
    finally:
        for h in harnesses.values():
            h.stop()
    with open(os.path.join(out, "fidelity.json"), "w") as f:
        json.dump({"kiln_ms": kiln_ms, "direct_ms": direct_ms, "notes": notes}, f, indent=1)
    labels = [label for label, _ in builds]
    rows = ["| solution | batch or M | " + " | ".join(f"{lb} ms" for lb in labels) + " | " +
            " | ".join(f"{v} ms" for v in VARIANTS) + " | " +
            " | ".join(f"{lb} vs zero_" for lb in labels) +
            " | memset vs zero_ | memset+reset vs zero_ |",
            "|---|---|" + "---|" * (2 * len(labels) + len(VARIANTS) + 2)]

    def mean(xs):
        return statistics.mean(xs) if xs else float("nan")

    def pct(a, b):
        return f"{(a - b) / b * 100:+.2f} %" if a == a and b == b and b else "—"
    for solution in solutions:
        for batch in sizes[CASES[solution][0]]:
            k = {lb: kiln_ms.get(f"{lb}|{solution}|{batch}", []) for lb in labels}
            d = {v: direct_ms.get(f"{solution}|{batch}|{v}", []) for v in VARIANTS}  # absent: nan
            z = mean(d["zero_"])
            rows.append(f"| {solution} | {batch} | " +
                        " | ".join(f"{mean(k[lb]):.5f} (n={len(k[lb])})" for lb in labels) +
                        " | " + " | ".join(f"{mean(d[v]):.5f}" for v in VARIANTS) + " | " +
                        " | ".join(pct(mean(k[lb]), z) for lb in labels) +
                        f" | {pct(mean(d['memset']), z)} | {pct(mean(d['memset+reset']), z)} |")
    text = "\n".join(rows) + "\n\nNotes:\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    print(text)
    # Per round, for the spread.
    for key, values in sorted(kiln_ms.items()):
        print("kiln", key, " ".join(f"{v:.5f}" for v in values))
    for key, values in sorted(direct_ms.items()):
        print("direct", key, " ".join(f"{v:.5f}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
