"""Calls a compiled kiln CUDA solution directly on torch tensors, through the kiln ABI.

Used by tests/gpu/check_kernels.py (kernels against torch, without kiln) and by
tests/perf/gpu_timing_agreement.py (the same .so kiln times, timed by other means).

  proc, so = start_compile(source_text, include_dir, out_dir, "name")   # nvcc in the background
  ok, log = finish_compile(proc, so, timeout_s)
  call = SolutionCall(torch, so, [a, b, c], ["float32"] * 3, stream)     # inputs, then outputs
  call()                                                                 # enqueues on `stream`

The .so is built with kiln's nvcc flags except the CUDA runtime, which is linked statically so
the library loads in any process; torch's stream handle is a driver stream either runtime can use.
"""
import ctypes
import os
import shutil
import subprocess
import time


class KilnTensor(ctypes.Structure):
    """kiln_tensor of harness/include/kiln/abi.h (32 bytes on x86-64)."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class KilnContext(ctypes.Structure):
    """kiln_context of harness/include/kiln/abi.h."""
    _fields_ = [("abi_version", ctypes.c_int32), ("backend", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("device", ctypes.c_void_p),
                ("context", ctypes.c_void_p)]


KILN_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2, "int64": 6, "int32": 7}
KILN_BACKEND_CUDA = 1
KILN_ABI_VERSION = 1


def nvcc_path():
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for candidate in (os.environ.get("KILN_NVCC"), shutil.which("nvcc"),
                      os.path.join(home, "bin", "nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def nvcc_command(nvcc, include_dir, so, cu):
    return [nvcc, "-O3", "-shared", "-Xcompiler", "-fPIC", "-std=c++17", f"-I{include_dir}",
            "-isystem", os.path.join(include_dir, "kiln", "tvm_ffi_compat"),
            "--expt-relaxed-constexpr", "-gencode", "arch=compute_90a,code=sm_90a", "-gencode",
            "arch=compute_90,code=compute_90", "-o", so, cu]


def start_compile(source, include_dir, out_dir, name, file_name="kernel.cu"):
    """Writes out_dir/name/FILE and starts nvcc on it. Returns (Popen or None, so path)."""
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    cu = os.path.join(folder, file_name)
    so = os.path.join(folder, "lib.so")
    with open(cu, "w", encoding="utf-8") as f:
        f.write(source)
    nvcc = nvcc_path()
    if nvcc is None:
        return None, so
    with open(os.path.join(folder, "nvcc.log"), "w") as log:
        # cwd = the folder, so diagnostics name the file as the solution does ("kernel.cu(9)").
        return subprocess.Popen(nvcc_command(nvcc, include_dir, so, file_name), cwd=folder,
                                stdout=log, stderr=subprocess.STDOUT), so


def finish_compile(proc, so, timeout_s):
    """(ok, log text) once nvcc is done; a run past timeout_s is killed and not ok."""
    log_path = os.path.join(os.path.dirname(so), "nvcc.log")
    if proc is None:
        return False, "nvcc not found (set KILN_NVCC or CUDA_HOME)"
    try:
        rc = proc.wait(timeout=max(1.0, timeout_s))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = -9
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read()
    return rc == 0 and os.path.exists(so), log + ("" if rc != -9 else "\n[nvcc killed: timeout]")


def compile_all(units, include_dir, out_dir, parallel, deadline):
    """Builds {label: (source text, file name)} with at most `parallel` nvcc at a time, each
    given until `deadline` (time.monotonic()). Returns {label: (ok, log, so path)}."""
    pending, running, done = list(units.items()), {}, {}
    while pending or running:
        while pending and len(running) < max(1, parallel):
            label, (source, file_name) = pending.pop(0)
            name = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)
            running[label] = start_compile(source, include_dir, out_dir, name, file_name)
        for label in list(running):
            proc, so = running[label]
            if proc is not None and proc.poll() is None and time.monotonic() < deadline:
                continue
            ok, log = finish_compile(proc, so, max(0.0, deadline - time.monotonic()))
            done[label] = (ok, log, so)
            del running[label]
        time.sleep(0.05)
    return done


def exports_run(so, entry="run"):
    """Whether `so` exports `entry` as a defined function (nm -D), or None without nm."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    r = subprocess.run([nm, "-D", "--defined-only", so], capture_output=True, text=True)
    return any(line.split()[-2:] == ["T", entry] for line in r.stdout.splitlines())


class SolutionCall:
    """One solution .so bound to fixed tensors: calling it runs `run` once on `stream`."""

    def __init__(self, torch, so_path, tensors, dtypes, stream, entry="run"):
        self.lib = ctypes.CDLL(os.path.abspath(so_path))
        self.fn = getattr(self.lib, entry)
        self.fn.argtypes = [ctypes.POINTER(KilnTensor), ctypes.c_int32,
                            ctypes.POINTER(KilnContext)]
        self.fn.restype = ctypes.c_int
        self.keep = []  # shape/stride arrays and tensors must outlive the calls
        self.args = (KilnTensor * len(tensors))()
        for i, (t, dtype) in enumerate(zip(tensors, dtypes)):
            if not t.is_contiguous():
                raise ValueError(f"argument {i} is not contiguous")
            shape = (ctypes.c_int64 * max(1, t.dim()))(*t.shape)
            strides = (ctypes.c_int64 * max(1, t.dim()))(*t.stride())
            self.keep += [shape, strides, t]
            self.args[i] = KilnTensor(t.data_ptr(), KILN_DTYPES[dtype], t.dim(), shape, strides)
        self.device = ctypes.c_int(torch.cuda.current_device())
        self.ctx = KilnContext(KILN_ABI_VERSION, KILN_BACKEND_CUDA, stream.cuda_stream,
                               ctypes.addressof(self.device), None)
        self.nargs = len(tensors)

    def __call__(self):
        rc = self.fn(self.args, self.nargs, ctypes.byref(self.ctx))
        if rc != 0:
            raise RuntimeError(f"run() returned {rc}")


def mismatches(torch, got, want, atol=1e-2, rtol=1e-2):
    """kiln's rule: element fails iff |d| > atol and |d| / (|want| + 1e-8) > rtol. Returns
    (text, failed): "ok" or why not."""
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        return (f"shape/dtype {tuple(got.shape)} {got.dtype} vs "
                f"{tuple(want.shape)} {want.dtype}", True)
    g, w = got.float(), want.float()
    if not bool(torch.isfinite(g).all()):
        return f"{int((~torch.isfinite(g)).sum())} non-finite elements", True
    d = (g - w).abs()
    bad = int(((d > atol) & (d / (w.abs() + 1e-8) > rtol)).sum())
    if bad:
        return f"{bad} of {d.numel()} elements differ (max abs err {float(d.max()):.3g})", True
    return f"ok (max abs err {float(d.max()):.3g})", False
