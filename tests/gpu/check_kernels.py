#!/usr/bin/env python3
"""Checks kiln's CUDA test kernels against torch on the GPU, without kiln.

Compiles the native references (harness/definitions/native_references/ and the ones embedded in
tests/gpu/defs/) and the test solutions (tests/gpu/solutions/) with nvcc, calls each through the
kiln ABI on torch tensors (outputs pre-filled with NaN) and compares with torch by kiln's rule
(atol = rtol = 1e-2). The wrong and no-launch solutions must differ; the compile-error solution
must fail to compile with kernel.cu and its line in the log. The faulting and endless solutions
are only compiled (running them would break this process's CUDA context); the kiln suite runs
them. Every build must export `run`.

  python3 tests/gpu/check_kernels.py [--include DIR] [--native-dir DIR] [--budget-s 90]
                                     [--all-native] [--compile-only] [--jobs N] [--tsv]

--all-native also builds every shipped native reference; --compile-only builds without running
(no GPU needed: that is the offline check). Prints "check | expected | got | ok" rows
(tab-separated with --tsv) and exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

GPU_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, GPU_DIR)
import kiln_ctypes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(GPU_DIR))


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def vector_add(torch, n):
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    return [a, b, torch.empty_like(a)], ["float32"] * 3, lambda: a + b


def copy(torch, n):
    x = torch.randn(n, device="cuda")
    return [x, torch.empty_like(x)], ["float32"] * 2, lambda: x.clone()


def rmsnorm(torch, hidden, batch, eps, fused):
    bf = torch.bfloat16
    x = torch.randn(batch, hidden, dtype=bf, device="cuda")
    r = torch.randn(batch, hidden, dtype=bf, device="cuda")
    w = torch.randn(hidden, dtype=bf, device="cuda")
    y = torch.empty_like(x)

    def expected():
        xf = x.float() + (r.float() if fused else 0)
        inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
        return ((xf * inv) * w.float()).to(bf)
    tensors = [x, r, w, y] if fused else [x, w, y]
    return tensors, ["bfloat16"] * len(tensors), expected


def gemm(torch, n, k, m):
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(n, k, dtype=torch.float16, device="cuda")
    c = torch.empty(m, n, dtype=torch.float16, device="cuda")
    return [a, b, c], ["float16"] * 3, lambda: (a.float() @ b.float().T).half()


def cases(native_dir):
    """(label, solution document loader, [(shape label, factory)], expectation)."""
    def native(name):
        return lambda: load_json(os.path.join(native_dir, name + ".json"))

    def embedded(name):
        return lambda: load_json(os.path.join(GPU_DIR, "defs", name + ".json"))["native_reference"]

    def solution(name):
        return lambda: load_json(os.path.join(GPU_DIR, "solutions", name, "solution.json"))

    va = [("n=1000003", lambda t: vector_add(t, 1000003)), ("n=1", lambda t: vector_add(t, 1))]
    cp = [("n=1048579", lambda t: copy(t, (1 << 20) + 3)), ("n=5", lambda t: copy(t, 5))]
    rms4096 = [(f"b={b}", lambda t, b=b: rmsnorm(t, 4096, b, 1e-5, False)) for b in (1, 33)]
    gemm4096 = [(f"M={m}", lambda t, m=m: gemm(t, 4096, 4096, m)) for m in (1, 200)]
    return [
        ("native rmsnorm_h4096", native("rmsnorm_h4096"), rms4096, "match"),
        ("native fused_add_rmsnorm_h4096", native("fused_add_rmsnorm_h4096"),
         [("b=17", lambda t: rmsnorm(t, 4096, 17, 1e-5, True))], "match"),
        ("native rmsnorm_h128", native("rmsnorm_h128"),
         [("b=9", lambda t: rmsnorm(t, 128, 9, 1e-6, False))], "match"),
        ("native fused_add_rmsnorm_h7168", native("fused_add_rmsnorm_h7168"),
         [("b=5", lambda t: rmsnorm(t, 7168, 5, 1e-6, True))], "match"),
        ("native gemm_n4096_k4096", native("gemm_n4096_k4096"), gemm4096, "match"),
        ("native gemm_n128_k2048", native("gemm_n128_k2048"),
         [("M=37", lambda t: gemm(t, 128, 2048, 37))], "match"),
        ("native vector_add_cuda", embedded("vector_add_cuda"), va, "match"),
        ("native perf_copy_f32", embedded("perf_copy_f32"), cp, "match"),
        ("native perf_rmsnorm_h4096", embedded("perf_rmsnorm_h4096"), rms4096, "match"),
        ("native perf_gemm_n4096_k4096", embedded("perf_gemm_n4096_k4096"), gemm4096, "match"),
        ("vector_add_correct", solution("vector_add_correct"), va, "match"),
        ("vector_add_wrong", solution("vector_add_wrong"), va[:1], "differ"),
        ("vector_add_no_launch", solution("vector_add_no_launch"), va[:1], "differ"),
        ("vector_add_compile_error", solution("vector_add_compile_error"), [], "no compile"),
        ("vector_add_illegal_address", solution("vector_add_illegal_address"), [], "compile"),
        ("vector_add_endless", solution("vector_add_endless"), [], "compile"),
        ("copy_f32_vectorised", solution("copy_f32_vectorised"), cp, "match"),
        ("rmsnorm_h4096_naive", solution("rmsnorm_h4096_naive"), rms4096, "match"),
        ("rmsnorm_h4096_tuned", solution("rmsnorm_h4096_tuned"),
         rms4096 + [("b=2048", lambda t: rmsnorm(t, 4096, 2048, 1e-5, False))], "match"),
        ("gemm_n4096_k4096_naive", solution("gemm_n4096_k4096_naive"), gemm4096, "match"),
        ("gemm_n4096_k4096_tuned", solution("gemm_n4096_k4096_tuned"),
         gemm4096 + [("M=4096", lambda t: gemm(t, 4096, 4096, 4096))], "match"),
    ]


def run_case(torch, call_so, factory, stream):
    with torch.cuda.stream(stream):
        tensors, dtypes, expected = factory(torch)
        tensors[-1].fill_(float("nan"))
        call = kiln_ctypes.SolutionCall(torch, call_so, tensors, dtypes, stream)
        call()
        stream.synchronize()
        return kiln_ctypes.mismatches(torch, tensors[-1], expected())


def compile_only_cases(native_dir):
    """Every shipped native reference, for --all-native (compiled, not run)."""
    out = []
    for file in sorted(os.listdir(native_dir)):
        if file.endswith(".json"):
            path = os.path.join(native_dir, file)
            out.append((f"native {file[:-5]}", lambda path=path: load_json(path), [], "compile"))
    return out


def check_build(label, expectation, build):
    """A table row for a build that fails the expectation, or None to go on and run it."""
    ok, log, so = build
    if expectation == "no compile":
        has_line = any(f"kernel.cu{sep}" in log for sep in ("(", ":"))
        got = "compiled" if ok else ("error at kernel.cu line" if has_line else "error, no line")
        return (label, "compile error at kernel.cu line", got,
                "ok" if not ok and has_line else "FAIL")
    if not ok:
        return (label, "compiles", "nvcc failed: " + " ".join(log.split())[-160:], "FAIL")
    if kiln_ctypes.exports_run(so) is False:
        return (label, "compiles, exports run", "run is not an exported function", "FAIL")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--include", default=None, help="folder holding kiln/abi.h")
    parser.add_argument("--native-dir", default=os.path.join(
        ROOT, "harness", "definitions", "native_references"))
    parser.add_argument("--all-native", action="store_true",
                        help="also compile every shipped native reference")
    parser.add_argument("--compile-only", action="store_true", help="build, do not run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--work", default=None, help="build folder (default: a temp folder)")
    parser.add_argument("--budget-s", type=float, default=90)
    parser.add_argument("--tsv", action="store_true", help="rows as TSV for the suite")
    args = parser.parse_args()
    deadline = time.monotonic() + args.budget_s
    include = args.include or os.path.join(ROOT, "harness", "include")
    work = args.work or tempfile.mkdtemp(prefix="kiln-check-kernels-")
    rows, units = [], {}
    all_cases = cases(args.native_dir)
    if args.all_native:
        listed = {c[0] for c in all_cases}
        all_cases += [c for c in compile_only_cases(args.native_dir) if c[0] not in listed]
    for label, load, _, _ in all_cases:
        try:
            src = load()["sources"][0]
            units[label] = (src["content"], src["path"])
        except (OSError, KeyError, ValueError, IndexError) as e:
            rows.append((label, "readable", f"unreadable: {e}"[:100], "FAIL"))
    builds = kiln_ctypes.compile_all(units, include, work, args.jobs, deadline)
    torch = stream = None
    if not args.compile_only:
        try:
            import torch
            stream = torch.cuda.Stream()
            torch.manual_seed(0)
        except Exception as e:  # noqa: BLE001 - no torch or no GPU: the builds still count
            torch = None
            rows.append(("torch with CUDA", "available", f"{type(e).__name__}: {e}"[:100], "FAIL"))
    for label, _, shapes, expectation in all_cases:
        if label not in builds:
            continue
        row = check_build(label, expectation, builds[label])
        if row is not None or expectation != "match" and expectation != "differ":
            rows.append(row or (label, "compiles, exports run", "ok", "ok"))
            continue
        if torch is None:
            rows.append((label, "compiles, exports run", "ok (not run)", "ok"))
            continue
        for shape, factory in shapes:
            if time.monotonic() > deadline:
                rows.append((f"{label} {shape}", expectation, "skipped (time budget)", "FAIL"))
                continue
            try:
                text, failed = run_case(torch, builds[label][2], factory, stream)
            except Exception as e:  # noqa: BLE001 - report and go on with the next kernel
                text, failed = f"{type(e).__name__}: {e}"[:160], None
            good = (failed is False) if expectation == "match" else (failed is True)
            rows.append((f"{label} {shape}", "matches torch" if expectation == "match"
                         else "differs from torch", text, "ok" if good else "FAIL"))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    for row in rows:
        print("\t".join(row) if args.tsv else " | ".join(row))
    failed = [r for r in rows if r[3] != "ok"]
    if not args.tsv:
        print(f"\n{len(rows) - len(failed)} of {len(rows)} kernel checks ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
