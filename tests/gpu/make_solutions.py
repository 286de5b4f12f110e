#!/usr/bin/env python3
"""Writes tests/gpu/solutions/<name>/solution.json from tests/gpu/kernels/solutions/<name>.cu.

Each solution is one CUDA file, submitted as kernel.cu with entry point kernel.cu::run, sources
inline (flashinfer-bench Solution form). The .cu files are the ones to read and edit.

  python3 tests/gpu/make_solutions.py [--check]

--check compares the files on disk with what would be written and exits 1 on any difference.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_native_references import (  # noqa: E402
    GPU_DIR, dump_json, solution_document, write_or_check)

KERNELS = os.path.join(GPU_DIR, "kernels", "solutions")
SOLUTIONS = os.path.join(GPU_DIR, "solutions")

# name -> (definition, description); the expected verdicts live in run_gpu_suite.sh.
SOLUTIONS_BY_NAME = {
    "vector_add_correct": ("vector_add_cuda", "Correct: c = a + b, one thread per element."),
    "vector_add_wrong": ("vector_add_cuda", "Wrong on every element: c = a + b + 1."),
    "vector_add_compile_error": ("vector_add_cuda", "Does not compile: a missing semicolon."),
    "vector_add_illegal_address": ("vector_add_cuda",
                                   "Writes its output through a null device pointer."),
    "vector_add_endless": ("vector_add_cuda", "Spins forever on a device flag nothing sets."),
    "vector_add_no_launch": ("vector_add_cuda", "Returns 0 without launching anything."),
    "rmsnorm_h4096_naive": ("rmsnorm_h4096", "Naive: one thread per row, uncoalesced loads."),
    "rmsnorm_h4096_tuned": ("rmsnorm_h4096", "Tuned: one block per row, 128-bit loads and "
                            "stores, row kept in registers, warp-shuffle reduction."),
    "rmsnorm_h4096_cuda_copy": ("rmsnorm_h4096", "One block per row into a scratch buffer, then "
                                "cudaMemcpyAsync into the output (a copy sized by the batch)."),
    "rmsnorm_h4096_legacy_stream": ("rmsnorm_h4096", "The tuned kernel launched with "
                                    "<<<grid, block>>> on the legacy default stream, ignoring "
                                    "ctx->stream, as most KernelBench files launch."),
    "rmsnorm_h4096_tvm_ffi": ("rmsnorm_h4096", "Written against TVM-FFI (TensorView, "
                              "TVMFFIEnvGetStream, TVM_FFI_ICHECK, "
                              "TVM_FFI_DLL_EXPORT_TYPED_FUNC): one block per row, 128-bit "
                              "accesses; compiles unchanged with kiln's compatibility headers."),
    "gemm_n4096_k4096_naive": ("gemm_n4096_k4096", "Naive: one thread per output element "
                               "looping over K in global memory, float32 accumulation."),
    "gemm_n4096_k4096_tuned": ("gemm_n4096_k4096", "Tuned: WMMA tensor cores (float16 in, "
                               "float32 accumulate), 128x128x32 shared-memory tiles, "
                               "register prefetch of the next K slice."),
    "copy_f32_vectorised": ("perf_copy_f32", "y = x with 128-bit loads and stores."),
}


def solution_files():
    files = {}
    on_disk = sorted(f[:-3] for f in os.listdir(KERNELS) if f.endswith(".cu"))
    if on_disk != sorted(SOLUTIONS_BY_NAME):
        raise SystemExit(f"make_solutions: kernels {on_disk} do not match the table "
                         f"{sorted(SOLUTIONS_BY_NAME)}")
    for name, (definition, description) in SOLUTIONS_BY_NAME.items():
        with open(os.path.join(KERNELS, name + ".cu"), encoding="utf-8") as f:
            source = f.read()
        doc = solution_document(name, definition, description, "kernel.cu", source)
        if name.endswith("_tvm_ffi"):
            doc["spec"]["binding"] = "tvm-ffi"  # flashinfer-bench's default for cuda
        files[os.path.join(SOLUTIONS, name, "solution.json")] = dump_json(doc)
    return files


def hand_written(folder):
    """Python and Triton solutions are kept as written (kernel.py beside solution.json)."""
    try:
        with open(os.path.join(folder, "solution.json"), encoding="utf-8") as f:
            return json.load(f)["spec"]["language"] in ("python", "triton")
    except (OSError, ValueError, KeyError):
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    files = solution_files()
    rc = write_or_check(files, args.check)
    stale = [d for d in sorted(os.listdir(SOLUTIONS))
             if d not in SOLUTIONS_BY_NAME and not hand_written(os.path.join(SOLUTIONS, d))]
    for d in stale:
        print(f"tests/gpu/solutions/{d}: not generated (stale?)", file=sys.stderr)
    rc = 1 if stale else rc
    print(f"{'checked' if args.check else 'wrote'} {len(files)} solutions "
          f"({'clean' if rc == 0 else 'with problems'})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
