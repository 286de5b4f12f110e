"""Calling a solution or a reference on kiln's buffers: the calling conventions."""

import contextlib
import sys
import traceback

from kiln_runner.abi import FAILED, INCORRECT_DTYPE, INCORRECT_SHAPE, Refusal
from kiln_runner.tensors import TensorViews


class Runner:
    """Calls `fn` for the core. `style` is "value" (fn returns the outputs) or "dps"."""

    def __init__(self, torch, definition, fn, device, style, note_failure, guard=None):
        self.torch = torch
        self.fn = fn
        self.device = device
        self.style = style
        self.note_failure = note_failure
        self.guard = guard
        # Bound now: a candidate that replaces Guard.check on the class is caught by this one.
        self.guard_check = guard.check if guard is not None else None
        self.views = TensorViews(torch, device)
        self.input_names = list(definition["inputs"].keys())
        # A scalar input (shape null) is a Python number; a tensor of shape [] is a 0-d tensor.
        self.tensor_inputs = [spec.get("shape") is not None
                              for spec in definition["inputs"].values()]
        self.output_names = list(definition["outputs"].keys())
        self.n_in = len(self.input_names)
        self.n_out = len(self.output_names)
        self.streams = {}   # stream handle -> torch.cuda.ExternalStream
        self.last = None    # the outputs of the last call (value style)
        self.no_grad = torch.no_grad
        self.copy = torch.Tensor.copy_
        self.own_work = None  # OwnWork, for candidates that must launch a kernel of their own

    def stream(self, ctx):
        if self.device.type != "cuda":
            return contextlib.nullcontext()
        handle = ctx.contents.stream or 0
        s = self.streams.get(handle)
        if s is None:
            s = self.torch.cuda.ExternalStream(handle, device=self.device)
            self.streams[handle] = s
        return self.torch.cuda.stream(s)

    def fail(self, e):
        code = e.code if isinstance(e, Refusal) else FAILED
        if not isinstance(e, Refusal):
            traceback.print_exc()
        else:
            print(f"kiln python runner: {e}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        self.note_failure(e)
        return code

    def entry(self, args, nargs, ctx):
        try:
            self.last = None
            inputs = [self.views(args[i], self.tensor_inputs[i]) for i in range(self.n_in)]
            if self.style == "dps":
                inputs += [self.views(args[self.n_in + j], True) for j in range(self.n_out)]
            with self.stream(ctx), self.no_grad():
                if self.own_work is not None:
                    result = self.own_work.call(self.fn, inputs)
                else:
                    result = self.fn(*inputs)
            if self.style != "dps":
                self.last = result
            return 0
        except Exception as e:
            return self.fail(e)

    def collect(self, args, nargs, ctx):
        """Value style: the last call's outputs into kiln's buffers. Candidates: the guard."""
        try:
            if self.guard_check is not None:
                self.guard_check()
            if self.style == "dps":
                return 0
            last, self.last = self.last, None
            if self.guard is None:
                return self._collect(self.normalize(last), args, nargs, ctx)
            # A candidate's outputs are known by their type alone until each is a plain tensor:
            # anything else may run the solution's code when read, after the timed call.
            result = self.guard.plain_outputs(last, self.n_out, self.output_names)
            with self.guard.overrides_off():
                return self._collect(result, args, nargs, ctx)
        except Exception as e:
            return self.fail(e)

    def _collect(self, result, args, nargs, ctx):
        dsts = [self.views(args[self.n_in + j], True) for j in range(self.n_out)]
        if self.guard is not None:
            self.guard.check_disjoint(result, args, nargs, self.views)
        with self.stream(ctx), self.no_grad():
            # On ctx->stream, after the call's work: read on another stream, the output of a
            # kernel still running there would look untouched (the poison).
            if self.guard is not None:
                self.guard.check_replay(result, self.output_names)
            for j, value in enumerate(result):
                self.store(j, value, dsts[j])
            if self.guard is not None:
                self.guard.poison(result)
        return 0

    def normalize(self, result):
        torch = self.torch
        if isinstance(result, torch.Tensor):
            result = [result]
        elif isinstance(result, dict):
            missing = [n for n in self.output_names if n not in result]
            if missing:
                raise ValueError(f"the returned dict has no output {', '.join(missing)}")
            result = [result[name] for name in self.output_names]
        elif isinstance(result, (tuple, list)):
            result = list(result)
        else:
            raise TypeError(f"the function returned {type(result).__name__}; expected a tensor "
                            f"or a tuple of {self.n_out} tensors ({', '.join(self.output_names)})"
                            " (a destination-passing solution needs "
                            "destination_passing_style: true)")
        if len(result) != self.n_out:
            raise ValueError(f"the function returned {len(result)} outputs; the definition has "
                             f"{self.n_out} ({', '.join(self.output_names)})")
        return result

    def store(self, j, value, dst):
        torch = self.torch
        name = self.output_names[j]
        if not isinstance(value, torch.Tensor):
            if isinstance(value, (int, float, bool)) and dst.dim() == 0:
                value = torch.tensor(value, dtype=dst.dtype, device=self.device)
            else:
                raise TypeError(f"output '{name}': the function returned "
                                f"{type(value).__name__}, not a tensor")
        if tuple(value.shape) != tuple(dst.shape):
            raise Refusal(INCORRECT_SHAPE,
                          f"output '{name}': the function returned shape {tuple(value.shape)}, "
                          f"the definition says {tuple(dst.shape)}")
        if value.dtype != dst.dtype:
            raise Refusal(INCORRECT_DTYPE,
                          f"output '{name}': the function returned {value.dtype}, the "
                          f"definition says {dst.dtype}")
        self.copy(dst, value)
