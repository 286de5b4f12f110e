#!/usr/bin/env python3
"""Builds a kiln RMSNorm solution (hidden 4096, bfloat16) as a torch extension with
torch.utils.cpp_extension.load_inline and times it, for tests/perf/gpu_time_to_verdict.sh.

  gpu_load_inline_build.py SOLUTION_JSON INCLUDE_DIR BUILD_ROOT

Runs two fresh Python processes: "cold" builds into an empty BUILD_ROOT/ext, "warm" loads the
same extension from the same folder (torch's own cache). Each imports torch, builds, and checks
the extension's output against torch once. Prints markdown table rows ("| ... |") for the report
and exits 1 if a phase failed. TORCH_CUDA_ARCH_LIST defaults to 9.0 (one architecture, as kiln).
"""
import json
import os
import shutil
import subprocess
import sys
import time

WRAPPER = r"""
torch::Tensor kiln_rmsnorm(torch::Tensor x, torch::Tensor w) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 2, "x: contiguous 2-D CUDA tensor");
  TORCH_CHECK(w.is_cuda() && w.is_contiguous() && w.dim() == 1, "w: contiguous 1-D CUDA tensor");
  auto y = torch::empty_like(x);
  const int64_t x_shape[2] = {x.size(0), x.size(1)}, x_strides[2] = {x.size(1), 1};
  const int64_t w_shape[1] = {w.size(0)}, w_strides[1] = {1};
  kiln_tensor args[3] = {{x.data_ptr(), KILN_BFLOAT16, 2, x_shape, x_strides},
                         {w.data_ptr(), KILN_BFLOAT16, 1, w_shape, w_strides},
                         {y.data_ptr(), KILN_BFLOAT16, 2, x_shape, x_strides}};
  int device = x.get_device();
  kiln_context ctx = {KILN_ABI_VERSION, KILN_BACKEND_CUDA,
                      (void*)at::cuda::getCurrentCUDAStream().stream(), &device, nullptr};
  const int rc = run(args, 3, &ctx);
  TORCH_CHECK(rc == 0, "run() returned ", rc);
  return y;
}
"""


def phase(solution_json, include_dir, build_dir):
    """One build in this process; prints a JSON line with the times and the output check."""
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    t0 = time.monotonic()
    import torch
    from torch.utils.cpp_extension import load_inline
    t1 = time.monotonic()
    with open(solution_json) as f:
        source = json.load(f)["sources"][0]["content"]
    cuda_source = ("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n" + source +
                   WRAPPER)
    module = load_inline(
        name="kiln_rmsnorm_h4096_tuned",
        cpp_sources="torch::Tensor kiln_rmsnorm(torch::Tensor x, torch::Tensor w);",
        cuda_sources=cuda_source, functions=["kiln_rmsnorm"], extra_include_paths=[include_dir],
        extra_cuda_cflags=["-O3"], build_directory=build_dir, verbose=False)
    t2 = time.monotonic()
    x = torch.randn(64, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    y = module.kiln_rmsnorm(x, w)
    xf = x.float()
    want = ((xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)) * w.float()).bfloat16()
    d = (y.float() - want.float()).abs()
    bad = int(((d > 1e-2) & (d / (want.float().abs() + 1e-8) > 1e-2)).sum())
    print(json.dumps({"import_s": t1 - t0, "build_s": t2 - t1, "bad": bad,
                      "torch": torch.__version__,
                      "arch": os.environ.get("TORCH_CUDA_ARCH_LIST")}))


def run_phase(name, args, timeout):
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, __file__, "--phase"] + args, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{name}: timed out after {timeout:.0f} s", time.monotonic() - t0
    sys.stderr.write(f"== {name}\n{r.stderr[-4000:]}\n")
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0 or not lines:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"{name}: exit {r.returncode}: {tail[:200]}", time.monotonic() - t0
    return json.loads(lines[-1]), None, time.monotonic() - t0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--phase":
        phase(*sys.argv[2:])
        return 0
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    solution_json, include_dir, root = sys.argv[1:]
    build_dir = os.path.join(os.path.abspath(root), "ext")
    shutil.rmtree(build_dir, ignore_errors=True)
    os.makedirs(build_dir)
    failed = False
    deadline = time.monotonic() + float(os.environ.get("KILN_LOAD_INLINE_BUDGET_S", "170"))
    for name, label in (("cold", "fresh build folder"), ("warm", "same folder again")):
        left = deadline - time.monotonic()
        if left < 10:
            print(f"| torch load_inline, {label} | n/a | 0 | skipped (time budget) |")
            failed = True
            continue
        result, error, wall = run_phase(name, [solution_json, include_dir, build_dir], left)
        if error:
            print(f"| torch load_inline, {label} | n/a | 0 | {error} |")
            failed = True
            continue
        check = "output ok" if result["bad"] == 0 else f"{result['bad']} wrong elements"
        print(f"| torch load_inline, {label} | {result['build_s']:.3f} | 1 | process {wall:.1f} s "
              f"incl. import torch {result['import_s']:.1f} s; {check}; torch {result['torch']}, "
              f"TORCH_CUDA_ARCH_LIST={result['arch']} |")
        failed = failed or result["bad"] != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
