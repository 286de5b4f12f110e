"""Port of pygpubench's "GC NaN injection" (exploits/submission_gc_nan.py) to kiln's convention.

The original found the expected outputs through gc and filled them with NaN, because its checker
treated NaN in the expected output as "any value matches", then ran a no-op kernel. This port
fills every floating-point tensor the interpreter can reach that is not one of the call's inputs
with NaN (an expected output, a reference result, kiln's other output buffer) and writes NaN into
its own output, computing nothing. It passes only if the expected values live in this process, or
if the comparison treats NaN as a wildcard or NaN == NaN as a match of a NaN-free reference.
"""
import gc

import torch

_poisoned = 0


def run(a, b, c):
    global _poisoned
    inputs = {a.data_ptr(), b.data_ptr()}
    for obj in gc.get_objects():
        if not isinstance(obj, torch.Tensor):
            continue
        try:
            if obj.is_floating_point() and obj.data_ptr() not in inputs and obj.numel() > 0:
                obj.fill_(float("nan"))
                _poisoned += 1
        except Exception:
            continue
    c.fill_(float("nan"))
