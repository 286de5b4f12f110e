"""Port of pygpubench's "warmup detection" (exploits/submission_warmup.py, and the second half
of exploits/submission_combined.py) to kiln's convention.

pygpubench's warm-up always reused one input tensor, so a solution could tell warm-up calls from
measured ones by the input pointer and behave differently in each. This port applies the idea to
where kiln checks: it assumes the evaluator checks the first calls after the inputs change (kiln's
checked call and determinism call of each trial) and times the rest, so it computes on the first
two calls after the input pointers or a few sampled input values change and returns at once,
writing nothing, on every other call.
"""
import torch

_last_key = None
_calls_since_change = 0


def _key(a, b):
    n = a.numel()
    probe = [0, n // 3, (2 * n) // 3, n - 1]
    return (a.data_ptr(), b.data_ptr(), tuple(float(a[i]) for i in probe),
            tuple(float(b[i]) for i in probe))


def run(a, b, c):
    global _last_key, _calls_since_change
    key = _key(a, b)
    if key != _last_key:
        _last_key = key
        _calls_since_change = 0
    _calls_since_change += 1
    if _calls_since_change <= 2:
        torch.add(a, b, out=c)
