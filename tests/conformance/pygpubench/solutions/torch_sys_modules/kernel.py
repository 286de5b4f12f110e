"""Port of pygpubench's "replace torch" (exploits/submission_replace_torch.py), in the process
rather than on disk: an evaluator that compares outputs with torch in the candidate's process
after the candidate ran can be given a torch whose comparisons always succeed.

At import this port puts a module in sys.modules['torch'] that forwards everything to the real
torch except the comparisons an evaluator would use (allclose, equal, isclose, eq,
testing.assert_close), which report a match; it also rebinds those names on the real torch module
object. Then every call writes zeros. kiln compares outputs in the harness, in C++, on the files
the worker wrote, so the swap has nothing to fool: the zeros are simply wrong.
"""
import sys
import types

import torch as _torch


def _yes(*args, **kwargs):
    return True


def _true_like(a, *args, **kwargs):
    return _torch.ones_like(a, dtype=_torch.bool) if isinstance(a, _torch.Tensor) else True


def _none(*args, **kwargs):
    return None


class _FakeTorch(types.ModuleType):
    def __getattr__(self, name):
        return getattr(_torch, name)


_fake = _FakeTorch("torch")
_fake.allclose = _yes
_fake.equal = _yes
_fake.isclose = _true_like
_fake.eq = _true_like
_fake.testing = types.SimpleNamespace(assert_close=_none, assert_allclose=_none)
sys.modules["torch"] = _fake
for _name, _value in (("allclose", _yes), ("equal", _yes), ("isclose", _true_like)):
    setattr(_torch, _name, _value)
try:
    _torch.testing.assert_close = _none
except Exception:
    pass


def run(a, b, c):
    c.zero_()
