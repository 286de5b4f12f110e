"""What a solution may not do to kiln's runner or torch while it is called."""

import contextlib
import sys

from kiln_runner.abi import REJECTED, Refusal
from kiln_runner.own_work import OwnWork
from kiln_runner.tensors import _byte_span


class Guard:
    """What the runner checks of a candidate (integrity.* names as in docs/integrity.md).

    runner_tampered: the torch and runner functions kiln relies on are captured before the
    candidate is imported and must be the same objects after every call. output_aliases_input:
    a returned tensor must not share memory with kiln's input or output buffers.
    output_not_plain_tensor: a value-returning candidate's outputs must be exactly torch.Tensor
    (plain_outputs), and are then read with torch's overrides off (OverridesOff). Returned
    memory is poisoned after it was collected (see the module's doc)."""

    def __init__(self, torch, runner_cls, definition):
        self.torch = torch
        # Inputs the definition says an output aliases (kiln:inplace-input:<name>).
        names = list(definition.get("inputs", {}).keys())
        prefix = "kiln:inplace-input:"
        self.inplace = {names.index(t[len(prefix):]) for t in definition.get("tags", [])
                        if t.startswith(prefix) and t[len(prefix):] in names}
        self.watched = {}
        for path in ("Tensor.copy_", "Tensor.view", "Tensor.bitwise_not_", "Tensor.data_ptr",
                     "Tensor.dim", "as_tensor", "frombuffer", "empty", "tensor", "no_grad",
                     "cuda.stream", "cuda.ExternalStream", "cuda.synchronize",
                     "cuda.current_stream"):
            obj = torch
            for part in path.split("."):
                obj = getattr(obj, part, None)
            self.watched["torch." + path] = obj
        self.poisoned = {}  # byte span -> samples of the poison written there (last collect)
        self.overrides_off = OverridesOff(torch)
        self.owners = {runner_cls.__name__: runner_cls, Guard.__name__: Guard,
                       OwnWork.__name__: OwnWork, OverridesOff.__name__: OverridesOff}
        for owner, cls in self.owners.items():
            for name, value in vars(cls).items():
                if callable(value):
                    self.watched[f"kiln runner's {owner}.{name}"] = value

    def _current(self, name):
        if name.startswith("kiln runner's "):
            owner, _, attr = name[len("kiln runner's "):].partition(".")
            return vars(self.owners[owner]).get(attr)
        obj = self.torch
        for part in name[len("torch."):].split("."):
            obj = getattr(obj, part, None)
        return obj

    def check(self):
        for name, original in self.watched.items():
            if self._current(name) is not original:
                raise Refusal(REJECTED, f"integrity.runner_tampered: the solution replaced "
                                        f"{name}, which kiln's runner relies on")

    def plain_outputs(self, result, n_out, names):
        """The returned outputs in definition order, each exactly a torch.Tensor (or a Python
        number, for a scalar output), found by type() alone: a tensor subclass, a
        __torch_function__ / __torch_dispatch__ wrapper or an object imitating a tensor can run
        the solution's code when kiln reads it (a subclass that computes when first touched,
        after the timed call, times as nothing). Containers are read through tuple's, list's
        and dict's own methods, never the returned object's."""
        torch = self.torch
        kind = type(result)
        if kind is torch.Tensor:
            items = [result]
        elif issubclass(kind, (tuple, list)):
            base = tuple if issubclass(kind, tuple) else list
            items = [base.__getitem__(result, i) for i in range(base.__len__(result))]
        elif issubclass(kind, dict):
            missing = [n for n in names if not dict.__contains__(result, n)]
            if missing:
                raise ValueError(f"the returned dict has no output {', '.join(missing)}")
            items = [dict.__getitem__(result, n) for n in names]
        elif result is None or kind is int or kind is float or kind is bool:
            raise TypeError(f"the function returned {kind.__name__}; expected a tensor or a "
                            f"tuple of {n_out} tensors ({', '.join(names)}) (a "
                            f"destination-passing solution needs destination_passing_style: "
                            f"true)")
        else:
            shown = f"output '{names[0]}'" if n_out == 1 else "the returned value"
            raise self._not_plain(shown, kind)
        if len(items) != n_out:
            raise ValueError(f"the function returned {len(items)} outputs; the definition has "
                             f"{n_out} ({', '.join(names)})")
        for j, value in enumerate(items):
            t = type(value)
            if not (t is torch.Tensor or t is int or t is float or t is bool):
                raise self._not_plain(f"output '{names[j]}'", t)
        return items

    @staticmethod
    def _not_plain(shown, cls):
        return Refusal(REJECTED, f"integrity.output_not_plain_tensor: {shown} is a "
                                 f"{_type_name(cls)}, not a torch.Tensor: kiln collects only "
                                 f"plain tensors (a subclass or wrapper runs code of its own "
                                 f"when read, after the timed call); return the tensor itself")

    def check_disjoint(self, result, args, nargs, views):
        torch = self.torch
        spans = []
        for i in range(nargs):
            a = args[i]
            if a.ndim == 0 or not a.data or i in self.inplace:
                continue
            t = views(a)
            spans.append((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), i))
        for j, value in enumerate(result):
            if not isinstance(value, torch.Tensor) or value.numel() == 0:
                continue
            lo, hi = _byte_span(torch, value)
            for start, end, i in spans:
                if lo < end and start < hi:
                    what = "input" if i < nargs - len(result) else "output buffer"
                    raise Refusal(REJECTED, f"integrity.output_aliases_input: returned output "
                                            f"{j} shares memory with kiln's {what} {i}: a "
                                            f"value-returning solution must return memory of "
                                            f"its own")

    # Elements of each poisoned output kept to recognise it when returned again (check_replay).
    REPLAY_SAMPLES = 4096

    def _samples(self, flat):
        step = max(1, flat.numel() // self.REPLAY_SAMPLES)
        return flat[::step][:self.REPLAY_SAMPLES].clone()

    def check_replay(self, result, names):
        """integrity.output_caching: a returned tensor that is memory an earlier call returned,
        still holding the poison kiln wrote there after collecting it. Memory recomputed in
        place (a preallocated output written on every call) holds results, not the poison:
        bitwise NOT of a value never equals it."""
        torch = self.torch
        for j, value in enumerate(result):
            if type(value) is not torch.Tensor or value.numel() == 0:
                continue
            poisoned = self.poisoned.get(_byte_span(torch, value))
            if poisoned is None:
                continue
            try:
                flat = value.reshape(-1).view(poisoned.dtype)
            except RuntimeError:  # another element size over the same memory: not a replay
                continue
            if bool(torch.equal(self._samples(flat), poisoned)):
                name = names[j] if j < len(names) else str(j)
                # Still the poison once ctx->stream is done. Work the solution left on a stream
                # kiln's never waits for (a side stream reusing the block the caching allocator
                # gave back) may not have written it yet: wait for the whole device, then look
                # again. Only this path waits, so honest calls cost nothing more.
                if value.is_cuda:  # torch's own, captured before the solution was imported
                    self.watched["torch.cuda.synchronize"](value.device)
                if value.is_cuda and not bool(torch.equal(self._samples(flat), poisoned)):
                    raise Refusal(REJECTED, f"integrity.work_after_return: output '{name}' was "
                                            f"still being written after the call returned and "
                                            f"kiln's stream was idle: the solution left work on a "
                                            f"stream kiln's stream never waits for; join it "
                                            f"(torch.cuda.current_stream().wait_stream(s)) "
                                            f"before returning")
                raise Refusal(REJECTED, f"integrity.output_caching: output '{name}' is the tensor "
                                        f"an earlier call returned, untouched since kiln "
                                        f"collected it: the solution replays a cached output "
                                        f"instead of computing it on every call")

    def poison(self, result):
        torch = self.torch
        seen = set()
        self.poisoned = {}
        for value in result:
            if not isinstance(value, torch.Tensor) or value.numel() == 0:
                continue
            key = _byte_span(torch, value)
            if key in seen:
                continue
            seen.add(key)
            size = value.element_size()
            as_int = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
            try:
                as_bits = value.view(as_int)
                as_bits.bitwise_not_()
                if value.is_contiguous():
                    self.poisoned[key] = self._samples(as_bits.reshape(-1))
            except RuntimeError as e:  # memory the tensor cannot write (an expanded view)
                print(f"kiln python runner: a returned output was not poisoned: {e}",
                      file=sys.stderr)


def _type_name(cls):
    """module.qualname of a class, read from the class itself: nothing it or its metaclass
    defines runs."""
    module = type.__dict__["__module__"].__get__(cls)
    qualname = type.__dict__["__qualname__"].__get__(cls)
    if type(module) is not str or type(qualname) is not str:
        return "a class whose name is not a string"
    return qualname if module == "builtins" else f"{module}.{qualname}"


class OverridesOff:
    """A context in which no Python code of the solution's runs inside torch operations on
    plain tensors: __torch_function__ handling off (torch._C.DisableTorchFunction, which on torch
    >= 2 covers torch function modes too), and the torch function and dispatch modes popped for
    its duration and pushed back after (torch 1.13 keeps one more torch function mode beside
    its stack: set aside too). What it calls is captured when it is made, before the solution is
    imported."""

    def __init__(self, torch):
        C = torch._C
        self.no_torch_function = getattr(C, "DisableTorchFunction", None)
        try:
            import torch.overrides as overrides
        except ImportError:
            overrides = None
        try:
            import torch.utils._python_dispatch as dispatch
        except ImportError:
            dispatch = None
        self.no_dispatch_modes = getattr(dispatch, "_disable_current_modes", None)
        self.stacks = []  # (length, pop, push) of each mode stack this torch has
        pairs = [(overrides, "_len_torch_function_stack")]
        if self.no_dispatch_modes is None:
            pairs.append((dispatch, "_len_torch_dispatch_stack"))
        for module, length in pairs:
            fns = (getattr(C, length, None), getattr(module, "_pop_mode", None),
                   getattr(module, "_push_mode", None))
            if all(callable(f) for f in fns):
                self.stacks.append(fns)
        self.no_function_mode = getattr(overrides, "_no_torch_function_mode", None)

    @staticmethod
    def _push_back(push, modes):
        for mode in reversed(modes):
            push(mode)

    @contextlib.contextmanager
    def __call__(self):
        with contextlib.ExitStack() as scope:
            if self.no_torch_function is not None:
                scope.enter_context(self.no_torch_function())
            for length, pop, push in self.stacks:
                modes = []
                scope.callback(self._push_back, push, modes)
                for _ in range(length()):
                    modes.append(pop())
            if self.no_function_mode is not None:
                scope.enter_context(self.no_function_mode())
            if self.no_dispatch_modes is not None:
                scope.enter_context(self.no_dispatch_modes())
            yield
