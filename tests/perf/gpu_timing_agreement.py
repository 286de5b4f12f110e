#!/usr/bin/env python3
"""Does kiln's `official` latency agree with other ways of timing the same CUDA kernel?

For kernels from ~5 us to ~5 ms, memory- and compute-bound (float32 copies of 1 MiB, 64 MiB and
1 GiB; the tuned RMSNorm at three batch sizes; the tuned WMMA GEMM at 4096^3; the naive GEMM at
M = 64), measured in one run on one GPU:

  kiln official   latency_ms from `kiln submit --json` (definitions tests/gpu/defs/perf_*.json,
                  CUDA native references embedded), repeated REPEATS times: mean and spread
                  (max - min) / mean
  profiler        torch.profiler (ProfilerActivity.CUDA, i.e. CUPTI through Kineto): per call,
                  last kernel end - first kernel start of the solution's kernels, median of 50
                  calls, each after a 2 x L2 zero-fill and a synchronize: the span kiln's CUPTI
                  timer should report
  do_bench        triton.testing.do_bench (its own 256 MiB flush), median
  events loop     CUDA events around each call after the same flush + synchronize, median of 50
                  (includes launch latency)
  torch do_bench  do_bench of the equivalent torch op, for context

The solution's kernel.cu is compiled here with nvcc (kiln's flags, static runtime) and loaded
through ctypes, so the SAME kernel kiln times is called on torch tensors; its output is checked
against torch before it is timed.

  python3 tests/perf/gpu_timing_agreement.py BUNDLE_DIR OUT_DIR [--repeats 3] [--budget-s 230]

OUT_DIR gets report.md and details.tar.gz. Failures are reported in the table and the script
goes on; it exits 1 if any kernel could not be measured by kiln or failed its self-check.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
kiln_ctypes = None  # tests/gpu/kiln_ctypes.py, imported once the gpu folder is found


def find_gpu_dir(bundle):
    for d in (os.path.join(HERE, "..", "gpu"), os.path.join(bundle, "share", "kiln", "gpu")):
        if os.path.isdir(os.path.join(d, "solutions")):
            return os.path.abspath(d)
    raise SystemExit("tests/gpu not found beside this script or in BUNDLE_DIR/share/kiln/gpu")


# Kernel table: (label, definition, solution folder, workload axes, kernel-name substring).
KERNELS = [
    ("copy 1 MiB", "perf_copy_f32", "copy_f32_vectorised", {"n": 1 << 18}, "copy_vectorised"),
    ("copy 64 MiB", "perf_copy_f32", "copy_f32_vectorised", {"n": 1 << 24}, "copy_vectorised"),
    ("rmsnorm tuned b=64", "perf_rmsnorm_h4096", "rmsnorm_h4096_tuned", {"batch_size": 64},
     "rmsnorm_tuned"),
    ("rmsnorm tuned b=2048", "perf_rmsnorm_h4096", "rmsnorm_h4096_tuned", {"batch_size": 2048},
     "rmsnorm_tuned"),
    ("rmsnorm tuned b=14509", "perf_rmsnorm_h4096", "rmsnorm_h4096_tuned",
     {"batch_size": 14509}, "rmsnorm_tuned"),
    ("gemm naive M=64", "perf_gemm_n4096_k4096", "gemm_n4096_k4096_naive", {"M": 64},
     "gemm_naive"),
    ("gemm tuned 4096^3", "perf_gemm_n4096_k4096", "gemm_n4096_k4096_tuned", {"M": 4096},
     "gemm_wmma"),
    ("copy 1 GiB", "perf_copy_f32", "copy_f32_vectorised", {"n": 1 << 28}, "copy_vectorised"),
]
# One submission per group and repeat. The 1 GiB copy is its own group, repeated after all the
# others: its input generation and output comparison cost more than its timing.
MAIN_GROUPS = ["rmsnorm_h4096_tuned", "copy_f32_vectorised", "gemm_n4096_k4096_tuned",
               "gemm_n4096_k4096_naive"]
LAST_GROUPS = ["copy_f32_vectorised:big"]


def group_of(kernel):
    label, _, solution, axes, _ = kernel
    return solution + (":big" if axes.get("n", 0) >= 1 << 28 else "")


class Budget:
    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds

    def left(self):
        return self.deadline - time.monotonic()


class Harness:
    """A kiln-harness on 127.0.0.1:0 with its own data dir, and the kiln CLI against it."""

    def __init__(self, bundle, work, details):
        self.bin = os.path.join(bundle, "bin")
        self.details = details
        self.log_path = os.path.join(details, "harness.log")
        self.proc = None
        self.addr = None
        self.data = os.path.join(work, "data")
        self.extra_args = []  # more kiln-harness flags
        self.backend = "cuda"
        self.start_wait_s = 30

    def start(self):
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(self.bin, "kiln-harness"), "--listen", "127.0.0.1:0", "--data-dir",
             self.data, "--backend", self.backend, "--worker-timeout-s", "120"] + self.extra_args,
            stdout=log, stderr=subprocess.STDOUT)
        for _ in range(int(self.start_wait_s * 10)):
            with open(self.log_path, errors="replace") as f:
                for line in f:
                    if "listening on" in line:
                        self.addr = line.split("listening on")[1].split()[0]
                        return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("kiln-harness did not start: " + open(self.log_path).read()[-2000:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kiln(self, args, tag, timeout):
        """Runs the CLI; stdout/stderr go to details/TAG.{out,err}. Returns (rc, stdout)."""
        cmd = [os.path.join(self.bin, "kiln"), "--server", self.addr] + args
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            # TimeoutExpired carries bytes even when run() was asked for text.
            out, err = e.stdout or "", e.stderr or ""
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
            err = err.decode(errors="replace") if isinstance(err, bytes) else err
            rc, err = 124, err + f"\n[timed out after {timeout}s]"
        with open(os.path.join(self.details, tag + ".out"), "w") as f:
            f.write(out)
        with open(os.path.join(self.details, tag + ".err"), "w") as f:
            f.write(" ".join(cmd) + "\n" + err)
        return rc, out


def parse_json(text):
    try:
        return json.loads(text[text.find("{"):]) if "{" in text else None
    except ValueError:
        return None


def axes_key(axes):
    return tuple(sorted((k, int(v)) for k, v in axes.items()))


def write_jsonl(path, definition, all_lines, wanted_axes):
    wanted = {axes_key(a) for a in wanted_axes}
    kept = [line for line in all_lines
            if axes_key(json.loads(line)["workload"]["axes"]) in wanted]
    with open(path, "w") as f:
        f.writelines(kept)
    return len(kept)


def solution_for(gpu_dir, solution, definition, work):
    with open(os.path.join(gpu_dir, "solutions", solution, "solution.json")) as f:
        doc = json.load(f)
    doc["definition"] = definition
    doc["name"] = f"{solution}_{definition}"
    path = os.path.join(work, f"{solution}.{definition}.solution.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path, doc["sources"][0]["content"]


def submit_group(harness, gpu_dir, work, group, kernels, repeat, budget, latencies, errors):
    """One `kiln submit` of a group's workloads; appends each PASSED latency_ms."""
    _, definition, solution, _, _ = kernels[0]
    with open(os.path.join(gpu_dir, "defs", definition + ".jsonl")) as f:
        lines = [line for line in f if line.strip()]
    jsonl = os.path.join(work, f"{group.replace(':', '_')}.jsonl")
    write_jsonl(jsonl, definition, lines, [k[3] for k in kernels])
    sol_path, _ = solution_for(gpu_dir, solution, definition, work)
    tag = f"submit_{group.replace(':', '_')}_r{repeat + 1}"
    limit = int(max(30, min(200, budget.left() - 40)))
    rc, out = harness.kiln(
        ["submit", "--definition", definition, "--solution", sol_path, "--workloads", jsonl,
         "--backend", "cuda", "--mode", "official", "--json", "--timeout-s", str(limit)],
        tag, limit + 20)
    doc = parse_json(out) or {}
    if doc.get("run_id"):
        harness.kiln(["runs", "show", doc["run_id"], "--json"], tag + "_run", 30)
    by_axes = {}
    for t in doc.get("traces", []):
        by_axes[axes_key((t.get("workload") or {}).get("axes", {}))] = t.get("evaluation") or {}
    for label, _, _, axes, _ in kernels:
        e = by_axes.get(axes_key(axes))
        if e is None:
            errors[label] = f"no trace (exit {rc}, status {doc.get('status', '?')})"
        elif e.get("status") != "PASSED":
            errors[label] = f"{e.get('status')}: {str(e.get('log', ''))[:120]}"
        else:
            try:
                latencies[label].append(float((e.get("performance") or {})["latency_ms"]))
            except (KeyError, TypeError, ValueError):
                errors[label] = "PASSED without performance.latency_ms"


def kiln_measurements(args, gpu_dir, work, details, budget, notes):
    """{label: [latency_ms per repeat]} and {label: error text}."""
    latencies = {k[0]: [] for k in KERNELS}
    errors = {}
    harness = Harness(args.bundle, work, details)
    try:
        harness.start()
    except Exception as e:  # noqa: BLE001 - reported, and the direct timings still run
        harness.stop()
        notes.append(f"kiln part skipped: {e}")
        return latencies, {k[0]: "harness did not start" for k in KERNELS}
    notes.append(f"kiln-harness on {harness.addr}")
    try:
        for name in sorted({k[1] for k in KERNELS}):
            rc, _ = harness.kiln(["defs", "add", os.path.join(gpu_dir, "defs", name + ".json"),
                                  "--workloads", os.path.join(gpu_dir, "defs", name + ".jsonl")],
                                 f"defs_add_{name}", 60)
            if rc != 0:
                notes.append(f"defs add {name} failed (exit {rc}); see details")
        groups = {}
        for k in KERNELS:
            groups.setdefault(group_of(k), []).append(k)
        schedule = [(r, g) for r in range(args.repeats) for g in MAIN_GROUPS]
        schedule += [(r, g) for r in range(args.repeats) for g in LAST_GROUPS]
        last_cost = {}
        for repeat, group in schedule:
            if group not in groups:
                continue
            if budget.left() - 50 < 1.3 * last_cost.get(group, 20.0):  # ~50 s for direct timings
                notes.append(f"repeat {repeat + 1} of {group} skipped (time budget)")
                continue
            started = time.monotonic()
            try:
                submit_group(harness, gpu_dir, work, group, groups[group], repeat, budget,
                             latencies, errors)
            except (OSError, ValueError, KeyError) as e:  # this group only; the others go on
                notes.append(f"{group} r{repeat + 1} failed: {type(e).__name__}: {e}")
            last_cost[group] = time.monotonic() - started
            notes.append(f"kiln submit {group} r{repeat + 1}: {last_cost[group]:.1f} s")
    finally:
        harness.stop()
    return latencies, errors


# ---- direct timings through ctypes and torch ---------------------------------------------------

def make_case(torch, label, axes):
    """(tensors: inputs then the output, kiln dtypes, expected-output fn, equivalent torch op)."""
    dev = "cuda"
    if label.startswith("copy"):
        x = torch.randn(axes["n"], dtype=torch.float32, device=dev)
        y = torch.empty_like(x)
        return [x, y], ["float32"] * 2, lambda: x.clone(), lambda: y.copy_(x)
    if label.startswith("rmsnorm"):
        b = axes["batch_size"]
        x = torch.randn(b, 4096, dtype=torch.bfloat16, device=dev)
        w = torch.randn(4096, dtype=torch.bfloat16, device=dev)
        y = torch.empty_like(x)

        def ref():
            xf = x.float()
            return ((xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)) * w.float()).to(
                torch.bfloat16)
        return [x, w, y], ["bfloat16"] * 3, ref, ref
    m = axes["M"]
    a = torch.randn(m, 4096, dtype=torch.float16, device=dev)
    bm = torch.randn(4096, 4096, dtype=torch.float16, device=dev)
    c = torch.empty(m, 4096, dtype=torch.float16, device=dev)
    return ([a, bm, c], ["float16"] * 3, lambda: (a.float() @ bm.float().T).half(),
            lambda: torch.matmul(a, bm.T))


def events_loop(torch, call, flush, stream, warmup=10, iters=50):
    times = []
    for i in range(warmup + iters):
        flush.zero_()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        call()
        end.record(stream)
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def profiler_spans(torch, call, flush, match, trace_path, warmup=10, iters=50):
    """Median per-call span (ms) of kernels whose name contains `match`, from torch.profiler."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(warmup):
        flush.zero_()
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            flush.zero_()
            torch.cuda.synchronize()
            call()
            torch.cuda.synchronize()
    prof.export_chrome_trace(trace_path)
    with open(trace_path) as f:
        events = json.load(f)
    spans = call_spans(events, match)
    if not spans:
        names = sorted({str(e.get("name", ""))[:80] for e in kernel_events(events)})
        raise RuntimeError(f"no kernel named *{match}* in the profile; saw {names[:6]}")
    return statistics.median(spans) / 1000.0, len(spans)


def kernel_events(trace):
    """The GPU kernel events of a chrome trace (a dict with traceEvents, or a list), by start."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    return sorted((e for e in events if isinstance(e, dict) and "dur" in e and "ts" in e
                   and str(e.get("cat", "")).lower() == "kernel"), key=lambda e: float(e["ts"]))


def call_spans(trace, match):
    """Per call, last end - first start (us) of consecutive kernels whose name contains `match`;
    any other kernel (the flush between calls) ends a call."""
    spans, first, last = [], None, None
    for e in kernel_events(trace):
        ts, end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        if match in str(e.get("name", "")):
            first = ts if first is None else first
            last = end if last is None else max(last, end)
        elif first is not None:
            spans.append(last - first)
            first = last = None
    if first is not None:
        spans.append(last - first)
    return spans


def do_bench(call):
    import triton.testing
    try:
        return float(triton.testing.do_bench(call, warmup=25, rep=100, return_mode="median"))
    except TypeError:  # older triton: no return_mode
        return float(triton.testing.do_bench(call, warmup=25, rep=100, quantiles=[0.5])[0])


def direct_measurements(args, gpu_dir, work, details, budget, notes, compiles):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = {}
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 50 << 20) or (50 << 20))
    notes.append(f"torch {torch.__version__}, {props.name}, L2 {l2 >> 20} MiB, "
                 f"flush {2 * l2 >> 20} MiB before each call")
    flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()
    for label, _, solution, axes, match in KERNELS:
        row = rows.setdefault(label, {})
        if budget.left() < 8:
            row["error"] = "skipped (time budget)"
            continue
        proc, so = compiles[solution]
        try:
            ok, log = kiln_ctypes.finish_compile(proc, so, budget.left() - 5)
            if not ok:
                raise RuntimeError("nvcc failed: " + log.strip()[-200:])
            with torch.cuda.stream(stream):
                tensors, dtypes, expected, torch_op = make_case(torch, label, axes)
                call = kiln_ctypes.SolutionCall(torch, so, tensors, dtypes, stream)
                tensors[-1].fill_(float("nan"))
                call()
                stream.synchronize()
                text, failed = kiln_ctypes.mismatches(torch, tensors[-1], expected())
                row["check"] = ("FAIL " if failed else "") + text
                row["events"] = events_loop(torch, call, flush, stream)
                trace = os.path.join(details, "profile_" + label.replace(" ", "_").replace("^", "")
                                     + ".json")
                row["profiler"], row["profiler_calls"] = profiler_spans(
                    torch, call, flush, match, trace)
                try:
                    row["do_bench"] = do_bench(call)
                    row["torch_do_bench"] = do_bench(torch_op)
                except ImportError as e:
                    row["do_bench_error"] = f"triton unavailable: {e}"
                del call, tensors
                torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001 - one kernel's failure must not stop the others
            row["error"] = f"{type(e).__name__}: {e}"[:300]
            with open(os.path.join(details, "direct_errors.txt"), "a") as f:
                f.write(f"== {label}\n{traceback.format_exc()}\n")
    return rows


def fmt(value, digits=4):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}g}"


def report(latencies, kiln_errors, direct, notes):
    lines = ["| kernel | kiln official ms | spread % | profiler kernel ms "
             "| kiln/profiler − 1 (%) | do_bench ms | events loop ms | torch op do_bench ms "
             "| self-check |",
             "|---|---|---|---|---|---|---|---|---|"]
    failed = []
    for label, *_ in KERNELS:
        lat = latencies.get(label, [])
        d = direct.get(label, {})
        mean = statistics.mean(lat) if lat else None
        spread = (max(lat) - min(lat)) / mean * 100 if lat and mean else None
        prof = d.get("profiler")
        vs = (mean / prof - 1) * 100 if mean and prof else None
        kiln_cell = fmt(mean) + (f" ({len(lat)} runs)" if lat else "")
        if label in kiln_errors:
            kiln_cell += f" [{kiln_errors[label]}]"
        check = d.get("check", d.get("error", "n/a"))
        if not lat or label in kiln_errors or not str(check).startswith("ok"):
            failed.append(label)
        lines.append(f"| {label} | {kiln_cell} | {fmt(spread, 3)} | {fmt(prof)} | {fmt(vs, 3)} | "
                      f"{fmt(d.get('do_bench'))} | {fmt(d.get('events'))} | "
                      f"{fmt(d.get('torch_do_bench'))} | {check} |")
    lines.append("")
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n", failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=230)
    args = parser.parse_args()
    args.bundle = os.path.abspath(args.bundle)
    # A bwrap carried in the bundle is found first.
    os.environ["PATH"] = os.path.join(args.bundle, "bin") + os.pathsep + os.environ.get("PATH", "")
    budget = Budget(args.budget_s)
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kiln-timing-")
    details = os.path.join(work, "details")
    os.makedirs(details)
    notes = [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())]
    gpu_dir = find_gpu_dir(args.bundle)
    sys.path.insert(0, gpu_dir)
    global kiln_ctypes
    import kiln_ctypes
    include_dir = os.path.join(args.bundle, "include")
    if not os.path.exists(os.path.join(include_dir, "kiln", "abi.h")):
        include_dir = os.path.join(HERE, "..", "..", "harness", "include")
    compiles = {}
    for solution in sorted({k[2] for k in KERNELS}):  # nvcc runs while kiln measures
        with open(os.path.join(gpu_dir, "solutions", solution, "solution.json")) as f:
            source = json.load(f)["sources"][0]["content"]
        compiles[solution] = kiln_ctypes.start_compile(
            source, include_dir, os.path.join(details, "so"), solution)
    latencies, kiln_errors, direct = {}, {}, {}
    try:
        latencies, kiln_errors = kiln_measurements(args, gpu_dir, work, details, budget, notes)
    except Exception as e:  # noqa: BLE001
        notes.append(f"kiln part failed: {type(e).__name__}: {e}")
        traceback.print_exc()
    try:
        direct = direct_measurements(args, gpu_dir, work, details, budget, notes, compiles)
    except Exception as e:  # noqa: BLE001
        notes.append(f"direct part failed: {type(e).__name__}: {e}")
        traceback.print_exc()
    text, failed = report(latencies, kiln_errors, direct, notes)
    with open(os.path.join(details, "raw.json"), "w") as f:
        json.dump({"kiln_ms": latencies, "kiln_errors": kiln_errors, "direct": direct}, f,
                  indent=1, default=str)
    with open(os.path.join(args.out, "report.md"), "w") as f:
        f.write(text)
    for proc, so in compiles.values():  # stop stragglers; binaries need not travel back
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if os.path.exists(so):
            os.remove(so)
    with tarfile.open(os.path.join(args.out, "details.tar.gz"), "w:gz") as tar:
        tar.add(details, arcname="details")
    shutil.rmtree(work, ignore_errors=True)
    print(text)
    if failed:
        print("not measured or failed self-check: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
