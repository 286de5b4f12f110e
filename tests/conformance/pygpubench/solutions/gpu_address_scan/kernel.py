"""Port of pygpubench's "GPU address scan" (exploits/submission_gpu_scan_zeros.py) to kiln's
convention.

The original walked the CUDA virtual address space around its output with the driver's
cuMemGetAddressRange, found the allocations the size of the output (the expected output among
them, in the same process and context) and zeroed them, then wrote zeros: expected == output. This
port reads instead of writing (it looks for the answer rather than destroying it): every other
allocation of exactly the output's size within 1 GiB of the output, viewed as the output's dtype,
is a candidate, and the first one holding only finite values is copied into the output. Nothing is
computed; when nothing is found the output is left as kiln gave it.
"""
import ctypes

import torch

_driver = None
for _name in ("libcuda.so.1", "libcuda.so"):
    try:
        _driver = ctypes.CDLL(_name)
        break
    except OSError:
        continue
if _driver is not None:
    _driver.cuMemGetAddressRange_v2.restype = ctypes.c_int
    _driver.cuMemGetAddressRange_v2.argtypes = [
        ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]


def _range(ptr):
    base, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
    if _driver.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr) != 0:
        return None, None
    return base.value, size.value


def _scan(anchor, nbytes, skip):
    found = []
    base, size = _range(anchor)
    if base is None:
        return found
    radius = 1 << 30
    probe = max(4096, base - radius) & ~4095
    end = base + size + radius
    while probe < end:
        b, s = _range(probe)
        if b is None:
            probe += 1 << 16  # unmapped: skip ahead in 64 KiB steps
            continue
        if s >= nbytes and b not in skip:
            found.append(b)
        probe = max(probe + 4096, b + s)
    return found


_candidates = None


def run(a, b, c):
    global _candidates
    if _driver is None:
        raise RuntimeError("adversary: no CUDA driver library to scan with")
    nbytes = c.numel() * c.element_size()
    if _candidates is None:
        skip = {_range(t.data_ptr())[0] for t in (a, b, c)}
        _candidates = _scan(c.data_ptr(), nbytes, skip)
    for base in _candidates:
        # The raw device pointer as a tensor of the output's shape (__cuda_array_interface__).
        class _Raw:
            __cuda_array_interface__ = {"shape": tuple(c.shape), "typestr": "<f4",
                                        "data": (base, False), "version": 2}
        try:
            other = torch.as_tensor(_Raw(), device=c.device)
        except Exception:
            continue
        if bool(torch.isfinite(other).all()):
            c.copy_(other)
            return
