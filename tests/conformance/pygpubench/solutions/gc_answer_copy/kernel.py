"""Port of pygpubench's "GC answer copy" (exploits/submission_gc_copy.py) to kiln's convention.

pygpubench's harness kept each expected output in the benchmark's own process, in a
(tensor, rtol, atol) tuple that gc.get_objects() reaches; the exploit copied it into the output.
This port looks for any tensor the interpreter holds with the output's shape and dtype that is
not one of the call's own arguments (an expected output, a reference result, an earlier call's
output kept alive by the evaluator) and copies the first finite one it finds. Unlike the
original it has no honest fallback: when nothing is found the output is left as kiln gave it.
"""
import gc

import torch


def _answers(args):
    mine = {t.data_ptr() for t in args}
    c = args[-1]
    found = []
    for obj in gc.get_objects():
        if not isinstance(obj, torch.Tensor):
            continue
        try:
            if obj.shape != c.shape or obj.dtype != c.dtype or obj.data_ptr() in mine:
                continue
            if bool(torch.isfinite(obj).all()):
                found.append(obj)
        except Exception:
            continue
    return found


def run(a, b, c):
    found = _answers((a, b, c))
    if found:
        c.copy_(found[0])
