"""What a solution that needs a kernel of its own is held to beyond the guard."""

import os
import sys

from kiln_runner.abi import PACKAGE, REJECTED, Refusal
from kiln_runner.load_inline import LoadInline


class OwnWork:
    """What a candidate of a definition that requires a kernel of its own (KernelBench's, or
    tagged kiln:require-own-kernel) is held to beyond Guard; docs/integrity.md.

    inherits_reference: a KernelBench ModelNew that is, inherits from or holds a class named
    Model (the problem's class, copied into the solution) computes with the reference's code.
    exception_fallback: the first two calls of every workload (the checked call and its
    determinism call, both untimed) are watched for an exception raised into the solution's own
    code that the call then survived: a fallback (to torch, or to the reference's code) taken
    because the solution's own path failed. sys.monitoring's EXCEPTION_HANDLED (Python >= 3.12)
    or sys.settrace (older) sees them; the timed calls run unwatched, and the CUPTI timer's check
    that every timed call launches the same kernels keeps them on the path that was watched."""

    IGNORED = (StopIteration, StopAsyncIteration, GeneratorExit)

    def __init__(self, torch, root, fn):
        base = os.path.join(root, PACKAGE) + os.sep
        self.bases = (base, os.path.join(os.path.realpath(root), PACKAGE) + os.sep)
        self.calls = 0
        self.finding = self._inherits(torch, fn)

    @staticmethod
    def _inherits(torch, fn):
        cls = fn if isinstance(fn, type) else type(fn)
        for base in cls.__mro__[1:]:
            if base.__name__ == "Model":
                return f"class {cls.__name__} inherits from class Model ({base.__module__})"
        if isinstance(fn, torch.nn.Module):
            for name, sub in fn.named_modules():
                if name and type(sub).__name__ == "Model":
                    return f"{cls.__name__} holds a Model as its submodule '{name}'"
        return None

    def _mine(self, code):
        return code.co_filename.startswith(self.bases)

    def call(self, fn, args):
        if self.finding is not None:
            raise Refusal(REJECTED, f"integrity.inherits_reference: {self.finding}: the problem's "
                                    f"Model computes the outputs, not the solution")
        if LoadInline.refused:
            # The solution caught the refusal and went on (its own fallback, as for an exception
            # inside a call): its extension never ran. Named with the refused call and why.
            raise Refusal(REJECTED, f"integrity.exception_fallback: RuntimeError: "
                                    f"{LoadInline.refused[0]}; the solution caught it and went "
                                    f"on without its extension")
        if self.calls >= 2:
            return fn(*args)
        self.calls += 1
        caught = []
        monitoring = getattr(sys, "monitoring", None)
        tool = None
        if monitoring is not None:
            tool = next((i for i in range(6) if monitoring.get_tool(i) is None), None)
        if tool is not None:
            def handled(code, offset, exc):
                if self._mine(code) and not isinstance(exc, self.IGNORED):
                    tb = exc.__traceback__  # its first entry: this frame, where it arrived
                    caught.append((exc, code, tb.tb_lineno if tb else code.co_firstlineno))
            monitoring.use_tool_id(tool, "kiln exception_fallback")
            monitoring.register_callback(tool, monitoring.events.EXCEPTION_HANDLED, handled)
            monitoring.set_events(tool, monitoring.events.EXCEPTION_HANDLED)
            try:
                result = fn(*args)
            finally:
                monitoring.set_events(tool, 0)
                monitoring.register_callback(tool, monitoring.events.EXCEPTION_HANDLED, None)
                monitoring.free_tool_id(tool)
        else:
            def local(frame, event, arg):
                if event == "exception" and not issubclass(arg[0], self.IGNORED):
                    caught.append((arg[1], frame.f_code, arg[2].tb_lineno if arg[2] else
                                   frame.f_lineno))
                return local

            def first(frame, event, arg):
                return local if self._mine(frame.f_code) else None
            previous = sys.gettrace()
            sys.settrace(first)
            try:
                result = fn(*args)
            finally:
                sys.settrace(previous)
        if caught:
            # The outermost of the solution's frames the first exception reached (settrace sees
            # each frame it passes; EXCEPTION_HANDLED only the one that caught it).
            exc = caught[0][0]
            _, code, line = [c for c in caught if c[0] is exc][-1]
            where = code.co_filename
            for base in self.bases:
                if where.startswith(base):
                    where = where[len(base):]
            text = " ".join(str(exc).split())[:200]
            raise Refusal(REJECTED, f"integrity.exception_fallback: {type(exc).__name__}"
                                    f"{': ' + text if text else ''} reached the solution's "
                                    f"{code.co_name}() at {where}:{line} and the call returned "
                                    f"anyway: a solution's own path must work, not fall back")
        return result
