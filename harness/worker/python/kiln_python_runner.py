"""kiln's Python runner: a kiln worker whose solution is Python code run in-process.

kiln-harness starts it instead of kiln-worker for two kinds of solution:

  a definition's `reference` (flashinfer-bench's `run(...)`, value-returning):
    python3 -B kiln_python_runner.py --core LIB --baseline reference|torch_eager|torch_compile

  a Python or Triton candidate (spec.language "python" | "triton"), from the package the compile
  stage checked (PKG_ROOT/kiln_solution/<the solution's sources>):
    python3 -B kiln_python_runner.py --core LIB --solution PKG_ROOT --entry FILE.py::FUNCTION
                                     --style dps|value

with [--sys-path DIR]... in both, a framed WorkerRequest on fd 3 and WorkerEvents expected on
fd 4, exactly like kiln-worker. LIB (libkiln_worker_python.so) is kiln's worker core: it reads the
request, allocates and fills the inputs on the device, flushes the cache, times every call with
the CUPTI span (the host clock on the host backend), runs every integrity check, computes the
statistic and sends the result. This script only turns kiln's buffers into torch tensors (no
copy: the tensors alias kiln's memory), calls the function on kiln's stream, and hands outputs
back. Timing is never done here.

The compile stage runs the same script without the core:
    python3 -B kiln_python_runner.py --check --solution PKG_ROOT --entry FILE.py::FUNCTION
                                     [--arity N]
which byte-compiles every source (a syntax error names file and line), imports the entry module
(a missing module is named) and checks the entry function.

Calling conventions (flashinfer-bench's):
  dps    fn(*inputs, *outputs): outputs are kiln's buffers, written in place; the return value
         is ignored.
  value  fn(*inputs) returns the outputs: a tensor, or a tuple/list in definition order. kiln
         collects them after every call, outside the timed window: it checks count, shape and
         dtype, refuses a returned tensor that shares memory with kiln's buffers, copies it into
         kiln's (poisoned) output buffer, and then overwrites the returned memory with its
         bitwise complement, so a later call that returns it again without computing it is seen.
Scalars arrive as Python numbers, tensors on the node's device (cpu on the host backend).
"""
import argparse
import contextlib
import ctypes
import os
import re
import sys
import traceback

DTYPES = [  # kiln_dtype of harness/include/kiln/abi.h, in enum order
    "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
    "int64", "int32", "int16", "int8", "bool", "float64",
]
PACKAGE = "kiln_solution"  # the package a solution's sources are imported as

# Return codes of entry/collect understood by the core (harness/worker/evaluation.h).
FAILED, REJECTED, INCORRECT_SHAPE, INCORRECT_DTYPE = 1, 2, 3, 4


class KilnTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class KilnContext(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_int32), ("backend", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("device", ctypes.c_void_p),
                ("context", ctypes.c_void_p)]


ENTRY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(KilnTensor), ctypes.c_int32,
                         ctypes.POINTER(KilnContext))
FILL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(KilnTensor), ctypes.c_int32,
                        ctypes.POINTER(KilnContext), ctypes.c_uint64)


class Refusal(Exception):
    """A failure with the status the core reports for it (REJECTED, INCORRECT_SHAPE, ...)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _DeviceBytes:
    """A CUDA allocation of kiln's seen as bytes by torch.as_tensor (zero copy)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
            "strides": None, "stream": None,  # kiln orders all work on its own stream
        }


def _itemsize(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def _byte_span(torch, t):
    """[start, end) of the memory a tensor's storage occupies."""
    storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    start = storage.data_ptr()
    return start, start + storage.nbytes()


class TensorViews:
    """kiln's buffers as torch tensors, cached per (pointer, dtype, shape)."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        self.cache = {}
        self.torch_dtypes = {}
        for name in DTYPES:
            t = {"float4_e2m1": "float4_e2m1fn_x2"}.get(name, name)
            self.torch_dtypes[name] = getattr(torch, t, None)

    def __call__(self, t, tensor=False):
        dtype = DTYPES[t.dtype]
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.ndim == 0 and not tensor:  # a scalar: host memory, passed as a Python number
            ctype = {"float32": ctypes.c_float, "float64": ctypes.c_double,
                     "int64": ctypes.c_int64, "int32": ctypes.c_int32,
                     "int16": ctypes.c_int16, "int8": ctypes.c_int8,
                     "bool": ctypes.c_bool}.get(dtype)
            if ctype is None:
                raise TypeError(f"scalar of dtype {dtype} is not supported by the runner")
            return ctypes.cast(t.data, ctypes.POINTER(ctype))[0]
        key = (t.data, dtype, shape)
        v = self.cache.get(key)
        if v is not None:
            return v
        torch = self.torch
        torch_dtype = self.torch_dtypes[dtype]
        if torch_dtype is None:
            raise TypeError(f"this torch has no dtype for {dtype}")
        numel = 1
        for d in shape:
            numel *= d
        if dtype == "float4_e2m1":  # two per byte; torch's packed type holds a pair
            shape = shape[:-1] + (shape[-1] // 2,)
            numel //= 2
        if numel == 0:
            v = torch.empty(shape, dtype=torch_dtype, device=self.device)
        else:
            nbytes = numel * _itemsize(torch, torch_dtype)
            if self.device.type == "cuda":
                raw = torch.as_tensor(_DeviceBytes(t.data, nbytes), device=self.device)
            else:  # host memory of kiln's; frombuffer shares it
                raw = torch.frombuffer((ctypes.c_uint8 * nbytes).from_address(t.data),
                                       dtype=torch.uint8)
            v = raw.view(torch_dtype).view(shape)
        self.cache[key] = v
        return v


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


class KernelBench:
    """A KernelBench problem (definition["kernelbench"]), as KernelBench's evaluator runs it.

    Inputs: every trial's are what the problem's get_inputs() returns right after
    torch.manual_seed(the trial's seed), copied into kiln's input buffers (fill); made on the
    GPU when the problem's code allows it (generate_on_device), else on the CPU as KernelBench
    makes them. The code that
    makes them is the problem's module-level code without its classes (kernelbench.inputs_source),
    so a candidate's process never holds Model.
    Models: torch.manual_seed(weight seed); init = get_init_inputs(); torch.manual_seed(weight
    seed); Model(*init) -- and ModelNew(*init) likewise in the candidate's process -- then moved
    to the device, so Model and ModelNew hold the same parameters. The weight seed comes from
    the run's secret seeds (kiln_runner_weight_seed): the same in every worker of a run, unknown
    before it."""

    def __init__(self, torch, problem, folder, device, weight_seed):
        self.torch = torch
        self.device = device
        self.weight_seed = weight_seed
        self.on_device = None  # generate_on_device(), decided on the first fill
        path = os.path.join(folder, "kiln_kernelbench_inputs.py")
        self.inputs_module = _module_from_source("kiln_kernelbench_inputs",
                                                 problem.get("inputs_source", ""), path)
        for needed in ("get_inputs", "get_init_inputs"):
            if not callable(getattr(self.inputs_module, needed, None)):
                raise ValueError(f"the problem's inputs code defines no {needed}()")

    def build(self, cls):
        """cls(*get_init_inputs()) as KernelBench builds Model and ModelNew, on the device."""
        torch = self.torch
        torch.manual_seed(self.weight_seed)
        init = self.inputs_module.get_init_inputs()
        init = [x.to(self.device) if isinstance(x, torch.Tensor) else x for x in init]
        with torch.no_grad():
            torch.manual_seed(self.weight_seed)
            model = cls(*init)
        if isinstance(model, torch.nn.Module):
            model = model.to(self.device)
        return model

    def generate_on_device(self):
        """Whether get_inputs() runs with the device as torch's default device: when it makes
        its tensors on the meta device without error (nothing allocated, no data read), it makes
        them on a GPU the same way, in seconds where the CPU takes a minute for 4 GiB. The test
        depends only on the problem's code and torch, so the reference's and the candidate's
        processes decide alike and draw the same inputs from the same seed. Code that reads
        values (.numpy(), .item(), data-dependent shapes) fails on meta and keeps the CPU."""
        if self.on_device is None:
            torch = self.torch
            self.on_device = False
            # torch.device is a context manager (the default device) from torch 2.0 on.
            if self.device.type == "cuda" and hasattr(torch.device("cpu"), "__enter__"):
                try:
                    with torch.device("meta"):
                        probe = self.inputs_module.get_inputs()
                    self.on_device = isinstance(probe, (list, tuple)) and all(
                        not isinstance(v, torch.Tensor) or v.device.type == "meta"
                        for v in probe)
                except Exception:  # noqa: BLE001 -- the CPU path reports what fails
                    self.on_device = False
        return self.on_device

    def fill(self, views, definition, args, nargs, ctx, seed, stream):
        torch = self.torch
        names = list(definition["inputs"].keys())
        on_device = self.generate_on_device()
        torch.manual_seed(seed)
        if on_device:
            with torch.device(self.device), stream:
                values = self.inputs_module.get_inputs()
        else:
            values = self.inputs_module.get_inputs()
        if not isinstance(values, (list, tuple)) or len(values) != len(names):
            raise ValueError(f"get_inputs() returned {type(values).__name__} of "
                             f"{len(values) if isinstance(values, (list, tuple)) else 1} "
                             f"values; the definition has {len(names)} inputs")
        with stream, torch.no_grad():
            for i, value in enumerate(values):
                if not isinstance(value, torch.Tensor):
                    continue  # a number: the workload's scalar, as imported
                dst = views(args[i], True)
                if tuple(value.shape) != tuple(dst.shape) or value.dtype != dst.dtype:
                    raise ValueError(f"get_inputs() made input '{names[i]}' {value.dtype} "
                                     f"{tuple(value.shape)}; the definition says {dst.dtype} "
                                     f"{tuple(dst.shape)}")
                dst.copy_(value)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def _module_from_source(name, source, path):
    """A real module from source (written to `path`, so tracebacks and torch.compile find it)."""
    import importlib.util
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_reference_model(source, folder, kernelbench):
    """A KernelBench reference: the problem file's Model, built as KernelBench builds it."""
    module = _module_from_source("kiln_reference", source,
                                 os.path.join(folder, "kiln_reference.py"))
    cls = getattr(module, "Model", None)
    if not isinstance(cls, type):
        raise ValueError("the KernelBench problem does not define class Model")
    return kernelbench.build(cls)


def load_reference(source, folder):
    """The definition's run(), from a real module (kiln_reference.py in the worker's folder):
    torch.compile imports the module of the function it compiles, and tracebacks show its
    lines."""
    import importlib.util
    path = os.path.join(folder, "kiln_reference.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("kiln_reference", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["kiln_reference"] = module
    spec.loader.exec_module(module)
    fn = getattr(module, "run", None)
    if not callable(fn):
        raise ValueError("the definition's reference does not define a callable run()")
    return fn


# kiln's lighter <torch/extension.h> for load_inline's two units (LoadInline._build): the tensor
# type, TORCH_CHECK and AT_DISPATCH, and the common factories with torch:: names resolving to
# at::'s (at::empty and torch::empty differ only for tensors that require grad, which kiln's
# calls never make). A factory's own header (ATen/ops/<op>.h) pulls in half of ATen
# (ATen/Context.h, ...) for a few inline wrappers around at::_ops::<op>::call: its text is taken
# from the node's torch without its includes, after the light <ATen/ops/<op>_ops.h>, so it
# always matches the torch it runs with. On a 2-core CPU machine (torch 1.13, nvcc 13) this
# took a one-kernel CUDA unit from 38.2 s to 13.2 s and its binding unit from 21.9 s to 7.9 s.
_LIGHT_FACTORIES = ("empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones",
                    "ones_like", "full", "full_like")


def light_extension_headers(include_dirs):
    """{"cuda": ..., "cpp": ...}: the text of kiln's light <torch/extension.h> per unit."""
    def find(rel):
        for d in include_dirs:
            if os.path.exists(os.path.join(d, rel)):
                return os.path.join(d, rel)
        return None

    lines = ["#pragma once", "#include <ATen/core/Tensor.h>", "#include <ATen/Dispatch.h>",
             "#include <c10/util/Exception.h>"]
    for op in _LIGHT_FACTORIES:
        wrapper, ops = find(f"ATen/ops/{op}.h"), find(f"ATen/ops/{op}_ops.h")
        if wrapper is None or ops is None:
            continue
        with open(wrapper, encoding="utf-8", errors="replace") as f:
            body = [l for l in f.read().splitlines()
                    if not l.lstrip().startswith("#include") and l.strip() != "#pragma once"]
        lines += [f"#include <ATen/ops/{op}_ops.h>", f"// from ATen/ops/{op}.h, without its "
                  f"includes"] + body
    tensor = "\n".join(lines) + "\n"
    cuda = tensor
    if find("c10/cuda/CUDAStream.h") is not None:
        cuda += ("#include <c10/cuda/CUDAStream.h>\n"
                 "namespace at { namespace cuda { using c10::cuda::getCurrentCUDAStream; "
                 "using c10::cuda::CUDAStream; } }\n")
    alias = "namespace torch { using namespace at; }\n"
    bind = "#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n"
    head = "// kiln: a light <torch/extension.h> for load_inline's {} unit (kiln_python_runner.py)\n"
    # cuda_bind: a CUDA unit with its own pybind11 module (load's sources often have one).
    return {"cuda": head.format("CUDA") + cuda + alias,
            "cuda_bind": head.format("CUDA and binding") + cuda + bind + alias,
            "cpp": head.format("binding") + tensor + bind + alias}


class ExtensionBuildError(RuntimeError):
    """An extension load_inline or load could not build: the message ends with the compiler's
    (or the linker's) first error, `log` has every command of the build with its output."""

    def __init__(self, what, first, log):
        super().__init__(f"{what}: {first}")
        self.log = log


# A compiler's error line: gcc's "file:line[:col]: [fatal ]error: msg", nvcc's front end's
# "file(line): [catastrophic ]error[ #n-D]: msg".
_GCC_ERROR = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+):(?:(?P<col>\d+):)? "
                        r"(?:fatal )?error: (?P<msg>.*)$")
_NVCC_ERROR = re.compile(r"^(?P<file>[^\s(][^(\n]*)\((?P<line>\d+)\): "
                         r"(?:catastrophic )?error(?: #[\w-]+)?: (?P<msg>.*)$")
_OPEN, _CLOSE, _NAME = "[‘'\"`]", "[’'\"]", "[^’'\"]+"
# First errors that torch's full <torch/extension.h> may cure where kiln's light one failed: a
# name the compiler did not find (group n, where the diagnostic quotes it) or an incomplete
# type. Anything else (a syntax error, a wrong argument, a missing file) fails the same way
# with torch's header.
_MISSING_DECLARATION = [re.compile(p) for p in (
    rf"{_OPEN}(?P<n>{_NAME}){_CLOSE} was not declared in this scope",
    rf"{_OPEN}(?P<n>{_NAME}){_CLOSE} is not a member of",
    rf"{_OPEN}(?P<n>{_NAME}){_CLOSE} has not been declared",
    rf"{_OPEN}(?P<n>{_NAME}){_CLOSE} (?:in namespace {_OPEN}{_NAME}{_CLOSE} )?does not name a "
    rf"(?:template )?type",
    rf"{_OPEN}(?P<n>{_NAME}){_CLOSE} is not a (?:class, namespace, or enumeration|"
    rf"namespace-name|template)",
    rf"has no member named {_OPEN}(?P<n>{_NAME}){_CLOSE}",
    rf"there are no arguments to {_OPEN}(?P<n>{_NAME}){_CLOSE}",
    rf"incomplete type {_OPEN}(?:(?:struct|class|union) )?(?P<n>{_NAME}){_CLOSE}",
    r"incomplete type",
    r'identifier "(?P<n>[^"]+)" is undefined',
    r'has no member "(?P<n>[^"]+)"',
    r'name followed by "::" must be a class or namespace name',
    # An unknown macro used at file scope (PYBIND11_MODULE(...) { ... }, TORCH_LIBRARY(...)).
    r"this declaration has no storage class or type specifier",
    r"expected constructor, destructor, or type conversion before '\('",
)]


def _first_error(output):
    """(file, message, 'file:line[:col]: error: message') of a compiler's first error, or None
    when its output names none."""
    for line in output.splitlines():
        m = _GCC_ERROR.match(line) or _NVCC_ERROR.match(line)
        if m:
            col = m.groupdict().get("col")
            where = f"{m['file']}:{m['line']}" + (f":{col}" if col else "")
            return m["file"], m["msg"], f"{where}: error: {m['msg']}"
    return None


def _first_problem(output):
    """The line of a failed compile or link that says what went wrong."""
    first = _first_error(output)
    if first is not None:
        return first[2]
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for line in lines:
        if "undefined reference" in line or "cannot find" in line or "error" in line:
            return line
    return lines[-1] if lines else "the compiler failed without a message"


def _as_list(value):
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _flag_words(flags, what):
    """A flag list as torch's build passes it: each flag stripped, all joined by spaces into
    build.ninja's command, which the shell splits into words. So an empty flag vanishes and
    "-O3 -DX=1" is two flags; a string (torch expects a list) is one flag."""
    import shlex
    joined = " ".join(str(f).strip() for f in _as_list(flags))
    try:
        return shlex.split(joined)
    except ValueError as e:
        raise ValueError(f"{what} {joined!r}: {e}") from None


def _signature_stub(fn):
    """A function with fn's parameters and an empty body: a call fn refuses raises the TypeError
    CPython raises for fn, word for word, and nothing of fn runs."""
    import inspect
    kinds = inspect.Parameter
    parameters = list(inspect.signature(fn).parameters.values())
    last_positional_only = max((i for i, p in enumerate(parameters)
                                if p.kind is kinds.POSITIONAL_ONLY), default=-1)
    params, defaults, star = [], {}, False
    for i, p in enumerate(parameters):
        text = p.name
        if p.kind is kinds.VAR_POSITIONAL:
            text, star = "*" + p.name, True
        elif p.kind is kinds.VAR_KEYWORD:
            text = "**" + p.name
        elif p.kind is kinds.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is not p.empty:
            defaults[p.name] = p.default
            text += f"=_defaults[{p.name!r}]"
        params.append(text)
        if i == last_positional_only:
            params.append("/")
    scope = {"_defaults": defaults}
    exec(f"def {fn.__name__}({', '.join(params)}):\n    pass\n", scope)  # noqa: S102
    return scope[fn.__name__]


def _binding(functions, error_handling):
    """The pybind11 module torch's load_inline appends to main.cpp for `functions`."""
    if functions is None:
        return []
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, list):
        functions = {f: f for f in functions}
    elif not isinstance(functions, dict):
        raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(functions)}")
    wrap = "torch::wrap_pybind_function" if error_handling else ""
    lines = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
    for name, doc in functions.items():
        doc = str(doc).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'm.def("{name}", {wrap}({name}), "{doc}");')
    return lines + ["}"]


def _unit(name, text, cuda, path=None, digest=None):
    """One translation unit. light_text: what is compiled first with kiln's light
    <torch/extension.h> on the include path (None: the unit includes nothing it lightens)."""
    import hashlib
    light = text if "torch/extension.h" in text else None
    types = "#include <torch/types.h>\n"
    if cuda and path is None and text.startswith(types):
        # torch's cuda.cu starts with <torch/types.h> (all of ATen's operators); `#line` keeps
        # the diagnostics' file and line numbers those of cuda.cu.
        light = f'#line 1 "{name}"\n#include <torch/extension.h>\n' + text[len(types):]
    return {"name": name, "text": text, "cuda": cuda, "path": path, "light_text": light,
            "digest": digest or hashlib.sha256(text.encode()).hexdigest()}


class LoadInline:
    """kiln's torch.utils.cpp_extension.load_inline and load, installed before a solution is
    imported. Each takes exactly the arguments of the node's torch's own (read from its
    signature, so what that torch refuses raises its own TypeError), with torch's meaning.

    In the compile stage (--check; build=True) each call builds its extension into the solution's
    package (PKG_ROOT/kiln_extensions/NAME-KEY/NAME.so), which kiln's compile cache then keeps
    with the package: load_inline's sources are written as torch writes them (main.cpp with
    <torch/extension.h> and a pybind11 module of `functions`, cuda.cu), load's are compiled where
    they are; the units are compiled at once (ExtensionBuild: nvcc with the node's -gencode flags,
    which the harness passes to the check as --nvcc and --gencode, and the system c++), then
    linked. No ninja, no TORCH_EXTENSIONS_DIR, nothing shared between solutions; build_directory
    is accepted and not used.
    In a worker (build=False) a call loads the extension the compile stage built for the same
    arguments; one it did not build is an error: nothing is compiled while a solution runs.
    KEY hashes every argument that changes the binary (the sources by content, not by path), and
    the torch and python versions; the nvcc and arches key the compile cache's entry for the
    package."""

    # The arguments kiln implements; another one a newer torch adds is refused unless left at
    # its default.
    KNOWN = frozenset((
        "name", "sources", "cpp_sources", "cuda_sources", "sycl_sources", "functions",
        "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags",
        "extra_include_paths", "build_directory", "verbose", "with_cuda", "with_sycl",
        "is_python_module", "is_standalone", "with_pytorch_error_handling",
        "keep_intermediates", "use_pch", "no_implicit_headers"))

    # Calls a worker refused because the compile stage never made them (one made in
    # ModelNew.__init__ or forward rather than at import): "file.py:LINE: load_inline('x') ...".
    # A solution may catch the error and fall back to torch; OwnWork then names the fallback and
    # the refusal instead of letting it read as a solution without a kernel of its own.
    refused = []
    # While a worker imports the solution: a call refused then is one the compile stage made too
    # (same module code) and saw fail, caught by the file; it is not recorded as refused.
    importing = False

    def __init__(self, torch, root, build, nvcc="", gencode="", notes=None):
        self.torch = torch
        self.root = os.path.join(root, "kiln_extensions")
        self.notes = notes if notes is not None else []  # what the builds say (check_solution)
        self.build = build
        self.nvcc = nvcc
        self.gencode = gencode.split()
        self.loaded = {}
        self.torch_fns = {}  # torch's own load_inline and load, whose signatures kiln's take

    def install(self):
        # torch.utils.cpp_extension says at import where it looks for CUDA ("No CUDA runtime is
        # found, ..."): not the solution's output, which the check's log must start with.
        import io
        import logging
        logger = logging.getLogger("torch.utils.cpp_extension")
        level = logger.level
        logger.setLevel(logging.ERROR)
        try:
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                import torch.utils.cpp_extension as ext
        finally:
            logger.setLevel(level)
        for which in ("load_inline", "load"):
            self.torch_fns[which] = getattr(ext, which)
        ext.load_inline = self.load_inline
        ext.load = self.load

    def load_inline(self, *args, **kwargs):
        return self._serve(self._inline_spec(self._bind("load_inline", args, kwargs)))

    def load(self, *args, **kwargs):
        return self._serve(self._files_spec(self._bind("load", args, kwargs)))

    def _bind(self, which, args, kwargs):
        """The call's arguments by name as torch's `which` takes them, its defaults filled in."""
        import inspect
        fn = self.torch_fns[which]
        signature = inspect.signature(fn)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            bound, refused = None, e
        if bound is None:  # torch's own TypeError, not inspect's
            _signature_stub(fn)(*args, **kwargs)
            raise refused
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, param in signature.parameters.items():
            if name in self.KNOWN or param.default is param.empty:
                continue
            value = values.get(name, param.default)
            if value is not param.default and value != param.default:
                raise RuntimeError(f"{which}(): kiln does not implement {name}={value!r} (the "
                                   f"arguments it does: docs/kernelbench.md, load_inline)")
        return values

    def _common(self, which, v):
        name = v["name"]
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{which}: name {name!r} is not a Python identifier")
        if v.get("is_python_module", True) and v.get("is_standalone", False):
            raise ValueError("`is_python_module` and `is_standalone` are mutually exclusive.")
        what = f"{which}('{name}')"
        if v.get("is_standalone", False):
            raise RuntimeError(f"{what}: kiln builds extensions, not executables "
                               f"(is_standalone=True)")
        if _as_list(v.get("sycl_sources")):
            raise RuntimeError(f"{what}: kiln builds C++ and CUDA extensions, not SYCL")
        return {
            "what": what, "name": name,
            "cflags": _flag_words(v.get("extra_cflags"), "extra_cflags"),
            "cuda_cflags": _flag_words(v.get("extra_cuda_cflags"), "extra_cuda_cflags"),
            "ldflags": _flag_words(v.get("extra_ldflags"), "extra_ldflags"),
            "include_paths": [str(p).strip() for p in _as_list(v.get("extra_include_paths"))],
            "with_cuda": v.get("with_cuda"),
            "is_python_module": bool(v.get("is_python_module", True)),
            "verbose": bool(v.get("verbose", False)),
        }

    def _inline_spec(self, v):
        """load_inline's two units, written as torch writes them."""
        spec = self._common("load_inline", v)
        implicit = not v.get("no_implicit_headers", False)
        cpp = (["#include <torch/extension.h>"] if implicit else []) + \
            _as_list(v["cpp_sources"]) + \
            _binding(v.get("functions"), v.get("with_pytorch_error_handling", True))
        cuda = _as_list(v.get("cuda_sources"))
        if spec["with_cuda"] is None:
            spec["with_cuda"] = bool(cuda)
        spec["units"] = [_unit("main.cpp", "\n".join(cpp) + "\n", cuda=False)]
        if cuda:
            head = ["#include <torch/types.h>", "#include <cuda.h>",
                    "#include <cuda_runtime.h>"] if implicit else []
            # torch compiles cuda.cu with nvcc only when with_cuda; else with c++, as it is.
            spec["units"].append(_unit("cuda.cu", "\n".join(head + cuda) + "\n",
                                       cuda=bool(spec["with_cuda"])))
        return spec

    def _files_spec(self, v):
        """load's units: the source files as they are, keyed by their content."""
        import hashlib
        spec = self._common("load", v)
        paths = [os.path.abspath(str(s)) for s in _as_list(v["sources"])]
        if not paths:
            raise ValueError(f"{spec['what']}: no sources")
        is_cuda = [os.path.splitext(p)[1] in (".cu", ".cuh") for p in paths]
        if spec["with_cuda"] is None:
            spec["with_cuda"] = any(is_cuda)
        spec["units"] = []
        for path, cuda in zip(paths, is_cuda):
            if path.endswith(".sycl"):
                raise RuntimeError(f"{spec['what']}: kiln builds C++ and CUDA extensions, not "
                                   f"SYCL ({os.path.basename(path)})")
            with open(path, "rb") as f:
                data = f.read()
            spec["units"].append(_unit(os.path.basename(path), data.decode("utf-8", "replace"),
                                       cuda and bool(spec["with_cuda"]), path=path,
                                       digest=hashlib.sha256(data).hexdigest()))
        return spec

    def _key(self, spec):
        import hashlib
        import json
        keyed = {k: spec[k] for k in ("name", "cflags", "cuda_cflags", "ldflags",
                                      "include_paths", "with_cuda", "is_python_module")}
        keyed["units"] = [(u["name"], u["cuda"], u["digest"]) for u in spec["units"]]
        keyed["torch"] = self.torch.__version__
        keyed["python"] = sys.version
        # Not the nvcc and arches: workers do not know them, and they key the compile cache's
        # entry for the whole package (the Python toolchain's version names them).
        return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:20]

    def _serve(self, spec):
        name = spec["name"]
        folder = os.path.join(self.root, f"{name}-{self._key(spec)}")
        lib = os.path.join(folder, name + ".so")
        if lib in self.loaded:
            return self.loaded[lib]
        failed = os.path.join(folder, "failed")
        if not self.build and os.path.exists(failed):
            with open(failed, encoding="utf-8", errors="replace") as f:
                first = f.read().strip()
            raise RuntimeError(f"Error building extension '{name}' (in kiln's compile stage): "
                               f"{first}")
        if not os.path.exists(os.path.join(folder, "built")):
            if not self.build:
                where = _calling_line()
                if not LoadInline.importing:
                    LoadInline.refused.append(
                        f"{where + ': ' if where else ''}{spec['what']} was not built by kiln's "
                        f"compile stage: kiln builds extensions while the solution is imported and "
                        f"compiles nothing while it runs, so a call made only later (in "
                        f"ModelNew.__init__ or forward), or with other arguments or sources than at "
                        f"import, has no build; make the call at module level")
                raise RuntimeError(f"{spec['what']}: kiln's compile stage did not build this "
                                   f"extension (its arguments or sources differ from the "
                                   f"compile stage's call, or the call is made only at run "
                                   f"time)")
            ExtensionBuild(self, spec, folder, lib).run()
        module = self._import(name, lib, spec["is_python_module"])
        self.loaded[lib] = module
        return module

    def _import(self, name, lib, is_python_module):
        if not is_python_module:
            self.torch.ops.load_library(lib)
            return lib
        import importlib.util
        spec = importlib.util.spec_from_file_location(name, lib)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


class ExtensionBuild:
    """The compile stage's build of one extension (LoadInline): its units compiled at once, then
    linked with torch's libraries, in the order and with the flags torch's build.ninja has.

    <torch/extension.h> is all of torch's C++ API (the nn/optim/data frontend) plus pybind11 and
    Python.h, and parsing it is most of an extension's build. A unit that includes it is first
    compiled with a lighter header of the same name found first on its include path
    (light_extension_headers). When that fails, the unit is compiled with torch's own header only
    if its first error is plausibly a declaration the light header leaves out (full_header_cure):
    a name torch's headers declare, or an error inside a header; any other failure is the
    source's own and is reported at once, with the compiler's first error. So no source is
    refused that torch's load_inline builds, and a syntax error costs one compile. With cores to
    spare both compiles of a unit start at once and the first success, light first, is kept."""

    NVCC_COMMON = ["-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
                   "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
                   "--expt-relaxed-constexpr"]
    _mentions = {}  # word -> the torch header that has it ("" for none), for the process

    def __init__(self, owner, spec, folder, lib):
        import time
        import torch.utils.cpp_extension as ext
        if spec["with_cuda"] and not owner.nvcc:
            raise ExtensionBuildError(spec["what"], "this node has no nvcc for CUDA sources", "")
        if spec["with_cuda"] and owner.torch.version.cuda is None:
            raise ExtensionBuildError(spec["what"], f"this node's torch "
                                      f"{owner.torch.__version__} is built without CUDA: it "
                                      f"has no CUDA libraries to link a CUDA extension with", "")
        self.owner, self.spec, self.folder, self.lib = owner, spec, folder, lib
        self.torch_includes = _torch_paths(ext.include_paths, spec["with_cuda"])
        self.torch_libraries = _torch_paths(ext.library_paths, spec["with_cuda"])
        self.shims = {flavor: os.path.join(folder, f"kiln_{flavor}_include")
                      for flavor in ("cpp", "cuda", "cuda_bind")}
        self.race = (os.cpu_count() or 1) >= 4
        self.env = dict(os.environ, LC_ALL="C")  # diagnostics in plain ASCII, parsed below
        self.log = []
        self.started = time.monotonic()

    def elapsed(self):
        import time
        return time.monotonic() - self.started

    def run(self):
        import shutil
        spec = self.spec
        os.makedirs(self.folder, exist_ok=True)
        try:
            self._prepare()
            objects = self._compile()
            self._link(objects)
        except ExtensionBuildError as e:
            shutil.rmtree(self.folder, ignore_errors=True)
            e.log = "\n".join(self.log)
            # A solution may catch the failure (and fall back to torch); its workers then meet
            # the same call, and must fail it as this build failed, not as a call never made.
            os.makedirs(self.folder, exist_ok=True)
            with open(os.path.join(self.folder, "failed"), "w") as f:
                f.write(str(e).splitlines()[0] if str(e) else "the build failed")
            raise
        self._write_log()
        if spec["verbose"]:
            self.owner.notes.append("\n".join(self.log))
        for name in os.listdir(self.folder):
            if name.endswith((".o", ".o.log")):
                os.unlink(os.path.join(self.folder, name))
        with open(os.path.join(self.folder, "built"), "w") as f:
            f.write(f"{self.elapsed():.2f}\n")
        steps = "; ".join(line.split("]")[0].lstrip("[") for line in self.log
                          if line.startswith("[") and " s]" in line.split("\n")[0])
        self.owner.notes.append(f"kiln: {spec['what']} built in {self.elapsed():.1f} s ({steps})")

    def _write_log(self):
        with open(os.path.join(self.folder, "build.log"), "w") as f:
            f.write("\n".join(self.log))

    def _prepare(self):
        """Sources written, light headers in place, each unit's command around its source."""
        import sysconfig
        torch = self.owner.torch
        spec = self.spec
        light = light_extension_headers(self.torch_includes)
        for flavor, shim in self.shims.items():
            os.makedirs(os.path.join(shim, "torch"), exist_ok=True)
            with open(os.path.join(shim, "torch", "extension.h"), "w") as f:
                f.write(light[flavor])
        defines = [f"-DTORCH_EXTENSION_NAME={spec['name']}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
        for attr, macro in (("_PYBIND11_COMPILER_TYPE", "PYBIND11_COMPILER_TYPE"),
                            ("_PYBIND11_STDLIB", "PYBIND11_STDLIB"),
                            ("_PYBIND11_BUILD_ABI", "PYBIND11_BUILD_ABI")):
            value = getattr(torch._C, attr, None)
            if value is not None:
                defines.append(f'-D{macro}="{value}"')
        user = [f"-I{os.path.abspath(p)}" for p in spec["include_paths"]]
        system = []
        for path in self.torch_includes + [sysconfig.get_paths()["include"]]:
            system += ["-isystem", path]
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
        common = defines + user
        tail = system + [f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
        for unit in spec["units"]:
            self._place(unit)
            unit["head"] = [self._compiler(unit)] + common
            unit["tail"] = tail + self._unit_flags(unit)

    @staticmethod
    def _object(unit):
        return os.path.splitext(unit["name"])[0] + (".cuda" if unit["cuda"] else "")

    def _place(self, unit):
        unit["object"] = self._object(unit)
        names = [self._object(u) for u in self.spec["units"]]
        if names.count(unit["object"]) > 1:  # load()'s a/x.cpp and b/x.cpp
            unit["object"] += f".{self.spec['units'].index(unit)}"
        if unit["path"] is None:
            unit["path"] = os.path.join(self.folder, unit["name"])
            with open(unit["path"], "w") as f:
                f.write(unit["text"])
        unit["light_path"] = None
        if unit["light_text"] is not None:
            unit["light_path"] = unit["path"]
            if unit["light_text"] != unit["text"]:
                unit["light_path"] = os.path.join(self.folder, unit["object"] + ".light" +
                                                  os.path.splitext(unit["name"])[1])
                with open(unit["light_path"], "w") as f:
                    f.write(unit["light_text"])

    def _compiler(self, unit):
        return self.owner.nvcc if unit["cuda"] else os.environ.get("CXX", "c++")

    def _unit_flags(self, unit):
        """What torch passes after the includes, then the solution's flags, which win: torch
        puts -std=c++17 before them for c++ (the last -std counts) and for nvcc only when they
        name none (nvcc refuses some redefinitions); kiln's -O3 likewise (torch gives none)."""
        user = self.spec["cuda_cflags" if unit["cuda"] else "cflags"]
        optimize = [] if any(f.startswith("-O") for f in user) else ["-O3"]
        if not unit["cuda"]:
            return ["-fPIC", "-std=c++17"] + optimize + user
        std = [] if any(f.startswith("-std=") for f in user) else ["-std=c++17"]
        return self.NVCC_COMMON + self.owner.gencode + ["-Xcompiler", "-fPIC"] + optimize + \
            user + std

    def _start(self, unit, light):
        import subprocess
        out = unit["object"] + (".light.o" if light else ".o")
        shim = ["-I" + self.shims[self._flavor(unit)]] if light else []
        source = unit["light_path"] if light else unit["path"]
        if os.path.dirname(source) == self.folder:  # diagnostics name main.cpp, cuda.cu
            source = os.path.basename(source)
        cmd = unit["head"] + shim + unit["tail"] + ["-c", source, "-o", out]
        output = open(os.path.join(self.folder, out + ".log"), "w+")
        proc = subprocess.Popen(cmd, cwd=self.folder, stdout=output, stderr=subprocess.STDOUT,
                                env=self.env, start_new_session=True)
        return {"unit": unit, "light": light, "cmd": cmd, "out": out, "proc": proc,
                "output": output}

    @staticmethod
    def _flavor(unit):
        if not unit["cuda"]:
            return "cpp"
        return "cuda_bind" if "PYBIND11" in unit["text"] or "pybind11" in unit["text"] else "cuda"

    def _kind(self, job):
        if job["light"]:
            return "kiln's light <torch/extension.h>"
        return "torch's <torch/extension.h>" if job["unit"]["light_text"] is not None else \
            "as written"

    def _finished(self, job):
        job["output"].seek(0)
        text = job["output"].read()
        job["output"].close()
        what = "nvcc" if job["unit"]["cuda"] else "c++"
        self.log.append(f"[{what} {self.elapsed():.1f} s] ({self._kind(job)}) "
                        f"{' '.join(job['cmd'])}\n{text}")
        return text

    def _stop(self, jobs):
        for job in jobs:
            try:
                os.killpg(job["proc"].pid, 9)  # nvcc's cicc, ptxas and host compiler too
            except ProcessLookupError:
                pass
            job["proc"].wait()
            job["output"].close()
            self.log.append(f"[{job['unit']['name']}] {self._kind(job)} compile stopped: not "
                            f"needed")

    def _compile(self):
        """Every unit's compiles at once; the object of each unit, or ExtensionBuildError at the
        first unit that fails."""
        import time
        running = []
        for unit in self.spec["units"]:
            light = unit["light_path"] is not None
            if light:
                running.append(self._start(unit, True))
            if not light or self.race:
                running.append(self._start(unit, False))
        done = {}
        while running:
            finished = [job for job in running if job["proc"].poll() is not None]
            if not finished:
                time.sleep(0.02)
                continue
            for job in finished:
                running.remove(job)
                self._settle(job, running, done)
        return [done[unit["name"]] for unit in self.spec["units"]]

    def _settle(self, job, running, done):
        unit = job["unit"]
        output = self._finished(job)
        mine = [j for j in running if j["unit"] is unit]
        if job["proc"].returncode == 0:
            done[unit["name"]] = job["out"]
            self._stop(mine)
            for j in mine:
                running.remove(j)
            return
        if not job["light"] and mine:  # racing: the light compile may still build the unit
            unit["full_failure"] = output
            return
        if job["light"]:
            cure = self.full_header_cure(output, unit)
            if cure is None:
                self.log.append(f"[{unit['name']}] not compiled again with torch's "
                                f"<torch/extension.h>: its first error is the source's own, "
                                f"not a declaration the light header leaves out")
            else:
                self.log.append(f"[{unit['name']}] compiled with torch's <torch/extension.h>: "
                                f"the light header failed on {cure}")
                output = unit.get("full_failure", output)
                if "full_failure" not in unit:
                    if not mine:
                        running.append(self._start(unit, False))
                    return
        self._stop(running)
        running.clear()
        raise ExtensionBuildError(self.spec["what"], self._shown(_first_problem(output)), "")

    def _shown(self, line):
        """A diagnostic with the solution's files named from its package (load's sources)."""
        package = os.path.join(os.path.dirname(self.owner.root), PACKAGE) + os.sep
        return line.replace(package, "").replace(self.folder + os.sep, "")

    def full_header_cure(self, output, unit):
        """Why torch's own header may build what the light one could not (a phrase for the
        log), or None when the first error is the source's own."""
        first = _first_error(output)
        if first is None:
            return "no error line (the compiler stopped)"
        file, message, text = first
        path = os.path.realpath(os.path.join(self.folder, file))
        if path.startswith(self._header_roots()):
            return f"an error in a header ({text})"
        for pattern in _MISSING_DECLARATION:
            m = pattern.search(message)
            if m is None:
                continue
            name = (m.groupdict().get("n") or "").split("<")[0].split("::")[-1].strip(" ()&*")
            if not name:
                return text
            where = self._torch_mentions(name)
            return f"'{name}', which torch's headers declare ({where}): {text}" if where \
                else None
        return None

    def _header_roots(self):
        """Where torch's and kiln's headers are, as compilers name them: a distribution's torch
        include folder may hold links (its c10 folder a link into the system include folder)."""
        roots = set()
        for root in self.torch_includes + list(self.shims.values()):
            roots.add(os.path.realpath(root) + os.sep)
            for child in (os.listdir(root) if os.path.isdir(root) else []):
                roots.add(os.path.realpath(os.path.join(root, child)) + os.sep)
        return tuple(roots)

    def _torch_mentions(self, word):
        """A torch header (relative path) that has `word` as a whole word, or ""."""
        if word in self._mentions:
            return self._mentions[word]
        needle = word.encode()
        pattern = re.compile(rb"(?<![\w$])" + re.escape(needle) + rb"(?![\w$])")
        root = os.path.realpath(self.torch_includes[0])
        found, seen = "", set()
        for folder, dirs, files in os.walk(root, followlinks=True):
            real = os.path.realpath(folder)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if needle in data and pattern.search(data):
                    found = os.path.relpath(path, root)
                    break
            if found:
                break
        self._mentions[word] = found
        return found

    def _link(self, objects):
        import subprocess
        spec = self.spec
        libs = [f"-L{p}" for p in self.torch_libraries] + ["-lc10"]
        if spec["with_cuda"]:
            libs.append("-lc10_cuda")
        libs.append("-ltorch_cpu")
        if spec["with_cuda"]:
            libs.append("-ltorch_cuda")
        libs += ["-ltorch", "-ltorch_python"]
        if spec["with_cuda"]:
            toolkit = os.path.dirname(os.path.dirname(self.owner.nvcc))
            libs += [f"-L{os.path.join(toolkit, 'lib64')}", "-lcudart"]
        cmd = [os.environ.get("CXX", "c++")] + objects + ["-shared"] + spec["ldflags"] + libs + \
            ["-o", self.lib]
        r = subprocess.run(cmd, cwd=self.folder, capture_output=True, text=True, env=self.env)
        self.log.append(f"[link {self.elapsed():.1f} s] {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        if r.returncode != 0:
            raise ExtensionBuildError(spec["what"], self._shown(_first_problem(r.stdout +
                                                                              r.stderr)), "")


def _module_of(entry_file):
    stem = entry_file[:-3] if entry_file.endswith(".py") else entry_file
    return PACKAGE + "." + ".".join(p for p in stem.split("/") if p)


def load_solution(root, entry):
    """The entry function of the package under `root`; raises with a message naming the
    problem."""
    import importlib
    entry_file, _, function = entry.rpartition("::")
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module(_module_of(entry_file))
    fn = getattr(module, function, None)
    if fn is None:
        raise AttributeError(f"no function '{function}' is defined in {entry_file}")
    if not callable(fn):
        raise TypeError(f"'{function}' in {entry_file} is not callable")
    return fn


_NO_GPU_HERE = ("No CUDA GPUs are available", "Found no NVIDIA driver",
                "no CUDA-capable device is detected", "CUDA driver initialization failed",
                "0 active drivers")


def _needs_gpu(e):
    """The first line of an exception (or one it was raised from) that says this process has no
    GPU, when torch is built for CUDA and sees none here (the compile stage's sandbox); else None.
    A node whose torch has no CUDA gets the failure itself."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch.version, "cuda", None) is None:
        return None
    try:
        if torch.cuda.is_available():
            return None
    except Exception:  # noqa: BLE001 -- a torch that cannot even ask has no GPU here
        pass
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        text = str(e)
        if any(p in text for p in _NO_GPU_HERE):
            return f"{type(e).__name__}: {text.strip().splitlines()[0]}"
        e = e.__cause__ or e.__context__
    return None


def _in_solution(filename):
    """`filename` as the solution names it ("kernel.py") when it is one of the solution's own
    files (its package, wherever it lies: the compile cache, or a worker's writable copy), else
    None."""
    marker = os.sep + PACKAGE + os.sep
    at = filename.rfind(marker)
    return filename[at + len(marker):] if at >= 0 else None


def _calling_line():
    """The innermost frame of the current stack in the solution's own files, as
    'file.py:LINE (in f())', or None."""
    frame = sys._getframe(1)
    while frame is not None:
        rel = _in_solution(frame.f_code.co_filename)
        if rel is not None:
            return f"{rel}:{frame.f_lineno} (in {frame.f_code.co_name}())"
        frame = frame.f_back
    return None


def _solution_frame(tb):
    """The innermost traceback frame in the solution's own files, as 'file.py:LINE', or None."""
    where = None
    for frame in traceback.extract_tb(tb):
        rel = _in_solution(frame.filename)
        if rel is not None:
            where = f"{rel}:{frame.lineno}"
    return where


def _torch_paths(fn, cuda):
    """torch.utils.cpp_extension.include_paths / library_paths: `cuda=` up to torch 2.5,
    `device_type=` since."""
    import inspect
    if "device_type" in inspect.signature(fn).parameters:
        return fn(device_type="cuda" if cuda else "cpu")
    return fn(cuda=cuda)


def _writable_package(root, folder):
    """A copy of the solution's package in the worker's own folder, imported instead of the
    compile stage's: a solution may write files next to its sources at import (a kernel.cu it
    builds with load), and the compiled package is read-only in the sandbox and shared by every
    run that hits kiln's compile cache. Its extensions stay where the compile stage built them."""
    import shutil
    copy = os.path.join(folder, "kiln_package")
    shutil.copytree(os.path.join(root, PACKAGE), os.path.join(copy, PACKAGE), symlinks=True,
                    dirs_exist_ok=True)
    return copy


def _serve_load_inline(root, build, nvcc="", gencode="", notes=None):
    """kiln's load_inline (LoadInline) in place of torch's, when torch imports."""
    try:
        import torch
    except Exception:  # noqa: BLE001 -- the solution's own import reports a missing torch
        return
    LoadInline(torch, root, build, nvcc, gencode, notes).install()


def _import_failed(e, where):
    """The compile stage's report of an exception raised while the solution was imported: its
    line, then its traceback (without the import system's frames, and for the TypeError of
    torch's load_inline signature without this runner's: the solution's call is at fault)."""
    print(f"{where}: error: importing the solution failed: {type(e).__name__}: {e}")
    import importlib
    frames = traceback.extract_tb(e.__traceback__)
    hidden = {os.path.realpath(importlib.__file__)}
    if frames and frames[-1].filename == "<string>":  # torch's TypeError, from _signature_stub
        hidden.add(os.path.realpath(__file__))
    # The solution's own frames are named by their path in the solution ("kernel.py"), not the
    # compile cache's; kiln's runner frames (which import it) are not the solution's business.
    if any(_in_solution(f.filename) is not None for f in frames):
        hidden.add(os.path.realpath(__file__))
    shown = []
    for f in frames:
        if f.filename.startswith("<") or os.path.realpath(f.filename) in hidden:
            continue
        name = _in_solution(f.filename) or f.filename
        shown.append(traceback.FrameSummary(name, f.lineno, f.name, line=f.line))
    frames = shown
    print("Traceback (most recent call last):")
    print("".join(traceback.format_list(frames)) +
          "".join(traceback.format_exception_only(type(e), e)), end="")
    return 1


def check_solution(opts):
    """The compile stage: byte-compile, import, find the entry. Exit 0, or 1 with the reason."""
    # What kiln's load_inline says of its builds (verbose logs, times) comes after the check's
    # first line: a failed run's reason is the log's first line that says "error".
    notes = []
    try:
        return _check_solution(opts, notes)
    finally:
        if notes:
            print("\n".join(notes))


def _check_solution(opts, notes):
    root = opts.solution
    base = os.path.join(root, PACKAGE)
    for folder, _, files in sorted(os.walk(base)):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, base)
            with open(path, "rb") as f:
                source = f.read()
            try:
                compile(source, rel, "exec", dont_inherit=True)
            except SyntaxError as e:
                print(f"{rel}:{e.lineno}:{e.offset or 0}: error: {type(e).__name__}: {e.msg}")
                if e.text:
                    print("    " + e.text.rstrip("\n"))
                return 1
            except ValueError as e:  # null bytes
                print(f"{rel}: error: {e}")
                return 1
    entry_file, _, function = opts.entry.rpartition("::")
    try:
        _serve_load_inline(root, build=True, nvcc=opts.nvcc, gencode=opts.gencode,
                           notes=notes)
        fn = load_solution(root, opts.entry)
    except ExtensionBuildError as e:
        # First the solution's line that asked for the build and the compiler's first error:
        # the run's reason is the first line of this log that says "error".
        where = _solution_frame(e.__traceback__) or entry_file
        print(f"{where}: error: {e}")
        if e.log:
            print(e.log)
        return 1
    except (AttributeError, TypeError) as e:
        where = _solution_frame(e.__traceback__)
        if where is None:  # load_solution's own: no such function, or not callable
            print(f"{entry_file}: error: {e}")
            return 1
        return _import_failed(e, where)
    except ModuleNotFoundError as e:
        missing = e.name or str(e)
        if missing == PACKAGE or missing.startswith(PACKAGE + "."):
            missing = missing[len(PACKAGE) + 1:].replace(".", "/") + ".py"
            print(f"{entry_file}: error: cannot import module '{missing}' of the solution: "
                  f"no such source")
        else:
            where = _solution_frame(e.__traceback__) or entry_file
            print(f"{where}: error: cannot import module '{missing}': it is not installed on "
                  f"this node ({e})")
        return 1
    except Exception as e:
        where = _solution_frame(e.__traceback__) or entry_file
        needs = _needs_gpu(e)
        if needs:
            # Contest files make CUDA tensors at import (`torch.tensor(..., device="cuda")`).
            # The compile stage runs without the GPU (it may not disturb a run being timed), so
            # such an import is checked where it will run: the worker imports it on the device
            # and reports any failure there. Builds after this line are not made here.
            print(f"{where}: note: the import uses the GPU ({needs}); the compile stage has "
                  f"none, so the import and the entry point are checked on the device")
            return 0
        return _import_failed(e, where)
    if opts.arity >= 0:
        import inspect
        target = fn
        if isinstance(fn, type):  # a KernelBench ModelNew: its forward takes the inputs
            forward = getattr(fn, "forward", None)
            if not callable(forward):
                print(f"{entry_file}: error: class {function} has no forward()")
                return 1
            target = lambda *args: None  # noqa: E731 -- replaced below
            try:
                params = list(inspect.signature(forward).parameters.values())[1:]
                target.__signature__ = inspect.Signature(params)
            except (TypeError, ValueError):
                target = fn
        try:
            signature = inspect.signature(target)
        except (TypeError, ValueError):
            signature = None
        if signature is not None:
            try:
                signature.bind(*range(opts.arity))
            except TypeError as e:
                shown = f"{function}.forward" if isinstance(fn, type) else function
                print(f"{entry_file}: error: {shown}{signature} cannot take the {opts.arity} "
                      f"positional arguments kiln passes ({opts.arity_note}): {e}")
                return 1
    print(f"{opts.entry}: imported")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--core", help="libkiln_worker_python.so")
    parser.add_argument("--baseline", default="reference",
                        choices=["reference", "torch_eager", "torch_compile"])
    parser.add_argument("--solution", help="the package root of a Python/Triton solution")
    parser.add_argument("--entry", help="FILE.py::FUNCTION")
    parser.add_argument("--style", default="dps", choices=["dps", "value"])
    parser.add_argument("--check", action="store_true", help="compile stage: check and exit")
    parser.add_argument("--spare", action="store_true",
                        help="a candidate started before its solution is known: import torch "
                             "(and triton), then take the solution (package, entry, style) "
                             "from the first request")
    parser.add_argument("--arity", type=int, default=-1)
    parser.add_argument("--nvcc", default="", help="compile stage: the nvcc load_inline builds "
                        "CUDA sources with")
    parser.add_argument("--gencode", default="", help="compile stage: nvcc's -gencode flags")
    parser.add_argument("--arity-note", default="")
    parser.add_argument("--sys-path", action="append", default=[],
                        help="a folder of the node's python path (the harness passes them; "
                             "HOME differs inside the sandbox)")
    opts = parser.parse_args()
    # Inside the sandbox the uid has no passwd entry; torch.compile asks for a user name
    # (getpass.getuser reads these first) and would spawn a pool of compile processes.
    os.environ.setdefault("USER", "kiln")
    os.environ.setdefault("LOGNAME", "kiln")
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    # JIT caches private to this process's folder: nothing compiled by another run is loaded.
    here = os.getcwd()
    os.environ["TRITON_CACHE_DIR"] = os.path.join(here, "triton_cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(here, "inductor_cache")
    os.environ["XDG_CACHE_HOME"] = os.path.join(here, "cache")
    # Read by libgomp when torch loads it: idle OpenMP threads block instead of spinning, so an
    # honest torch thread pool is not taken for work after return.
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["GOMP_SPINCOUNT"] = "0"
    for path in reversed(opts.sys_path):
        if path not in sys.path:
            sys.path.insert(0, path)
    if opts.check:
        return check_solution(opts)
    if not opts.core:
        parser.error("--core is required")
    # Loaded (and every symbol bound) before torch: its libraries must not interpose on kiln's.
    core = ctypes.CDLL(opts.core, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    core.kiln_runner_definition_json.restype = ctypes.c_char_p
    core.kiln_runner_backend.restype = ctypes.c_char_p
    core.kiln_runner_fail.argtypes = [ctypes.c_char_p]
    core.kiln_runner_serve.argtypes = [ENTRY, ENTRY]
    core.kiln_runner_serve_solution.argtypes = [ENTRY, ENTRY]
    core.kiln_runner_note_failure.argtypes = [ctypes.c_char_p]
    core.kiln_runner_artifact_path.restype = ctypes.c_char_p
    core.kiln_runner_symbol.restype = ctypes.c_char_p
    core.kiln_runner_set_fill_inputs.argtypes = [FILL]
    core.kiln_runner_weight_seed.restype = ctypes.c_uint64
    if opts.spare:
        # Ahead of need, on the CPU only (the GPU may be timing another run meanwhile): what
        # every Python candidate imports, then "ready"; the solution and the device's context
        # come with the first request.
        try:
            import torch  # noqa: F401
            try:
                import triton  # noqa: F401
            except Exception:
                pass
        except Exception as e:
            print(f"kiln python runner: spare warm-up: {e!r}", file=sys.stderr, flush=True)
        sys.stderr.flush()
        core.kiln_runner_ready()
    if core.kiln_runner_read_request() != 0:
        return 2
    if opts.spare:
        opts.solution = core.kiln_runner_artifact_path().decode("utf-8")
        opts.entry = core.kiln_runner_symbol().decode("utf-8")
        opts.style = "value" if core.kiln_runner_value_returning() else "dps"

    def fail(message):
        sys.stderr.flush()
        return core.kiln_runner_fail(message.encode("utf-8", "replace"))

    try:
        import json
        import torch
    except Exception as e:
        return fail(f"the Python runner cannot import torch: {e!r}")
    backend = core.kiln_runner_backend().decode()
    candidate = opts.solution is not None
    try:
        if backend == "cuda":
            if not torch.cuda.is_available():
                return fail("torch reports no CUDA device (torch.cuda.is_available() is False)")
            device_index = core.kiln_runner_device_index()
            torch.cuda.set_device(device_index)
            device = torch.device("cuda", device_index)
        elif backend == "host":
            device = torch.device("cpu")
        else:
            return fail(f"the Python runner does not drive backend '{backend}'")
        # The guard captures what it watches before the candidate is imported.
        guard = None
        solution_fn = None
        if candidate:
            first = json.loads(core.kiln_runner_definition_json().decode("utf-8"))
            guard = Guard(torch, Runner, first)
            _serve_load_inline(opts.solution, build=False)
            opts.solution = _writable_package(opts.solution, here)
            LoadInline.importing = True
            try:
                solution_fn = load_solution(opts.solution, opts.entry)
            finally:
                LoadInline.importing = False
    except Exception as e:
        text = traceback.format_exc()
        print(text, file=sys.stderr)
        return fail("the solution cannot be loaded: " + text.strip().splitlines()[-1])

    def note_failure(e):
        if isinstance(e, Refusal):
            line = str(e)
        else:
            lines = [l.strip() for l in f"{type(e).__name__}: {e}".splitlines() if l.strip()]
            line = " | ".join(lines[:4])
            # Where in the solution it was raised: its innermost frame in the solution's files.
            where = _solution_frame(e.__traceback__)
            if where:
                line = f"{where}: {line}"
        core.kiln_runner_note_failure(line[:800].encode("utf-8", "replace"))

    # One request per workload, all of one definition; a new definition (never within a run)
    # loads the reference anew.
    loaded = None  # (definition JSON, weight seed) the runner was built for
    runner = entry = collect = fill = None
    while True:
        definition_json = core.kiln_runner_definition_json().decode("utf-8")
        weight_seed = core.kiln_runner_weight_seed()
        definition = json.loads(definition_json) if (definition_json, weight_seed) != loaded \
            else definition
        kernelbench = None
        if (definition_json, weight_seed) != loaded and definition.get("kernelbench"):
            try:
                kernelbench = KernelBench(torch, definition["kernelbench"], here, device,
                                          weight_seed)
            except Exception as e:
                text = traceback.format_exc()
                print(text, file=sys.stderr)
                return fail("the KernelBench problem's inputs code cannot be loaded: "
                            + text.strip().splitlines()[-1])
        if (definition_json, weight_seed) != loaded:
            try:
                if candidate and kernelbench is not None:
                    # KernelBench: the entry point is ModelNew, built with the problem's
                    # get_init_inputs() under the run's weight seed, then called with the inputs.
                    if not isinstance(solution_fn, type):
                        raise TypeError(f"{opts.entry} is not a class: a KernelBench solution's "
                                        f"entry point is its ModelNew class")
                    fn = kernelbench.build(solution_fn)
                    what = f"KernelBench solution {opts.entry}"
                elif candidate:
                    fn = solution_fn
                    what = f"solution {opts.entry} ({opts.style})"
                else:
                    source = definition.get("reference") or ""
                    if not source.strip():
                        return fail(f"definition '{definition.get('name')}' has no Python reference")
                    if kernelbench is not None:
                        fn = load_reference_model(source, here, kernelbench)
                    else:
                        fn = load_reference(source, here)
                    if opts.baseline == "torch_compile":
                        # Compiled on the first (checked, untimed) call; kiln times the compiled graph.
                        fn = torch.compile(fn)
                    what = opts.baseline
            except Exception as e:
                text = traceback.format_exc()
                print(text, file=sys.stderr)
                subject = "the solution" if candidate else "the definition's reference"
                return fail(f"{subject} cannot be loaded: " + text.strip().splitlines()[-1])
            print(f"kiln python runner: torch {torch.__version__}, {what}, definition "
                  f"{definition.get('name')}, device {device}", file=sys.stderr, flush=True)
            style = opts.style if candidate and kernelbench is None else "value"
            runner = Runner(torch, definition, fn, device, style, note_failure, guard)
            if candidate and (kernelbench is not None
                              or "kiln:require-own-kernel" in definition.get("tags", [])):
                runner.own_work = OwnWork(torch, opts.solution, fn)
            entry = ENTRY(runner.entry)
            collect = ENTRY(runner.collect)
            fill = None
            if kernelbench is not None:
                def fill_inputs(args, nargs, ctx, seed, kb=kernelbench, r=runner, d=definition):
                    try:
                        kb.fill(r.views, d, args, nargs, ctx, seed, r.stream(ctx))
                        return 0
                    except Exception as e:
                        return r.fail(e)
                fill = FILL(fill_inputs)
            core.kiln_runner_set_fill_inputs(fill if fill is not None else FILL())
            loaded = (definition_json, weight_seed)
        if runner.own_work is not None:
            runner.own_work.calls = 0  # each workload's first two calls are watched
        if candidate:
            # A candidate's collector runs after every call: it copies a value-returning
            # solution's outputs and checks the guard for both styles.
            code = core.kiln_runner_serve_solution(entry, collect)
        else:
            code = core.kiln_runner_serve(entry, collect)
        # After a failure the process ends: nothing the solution left running meets the next
        # workload.
        if code != 0 or not core.kiln_runner_last_passed():
            return code
        sys.stdout.flush()
        sys.stderr.flush()
        more = core.kiln_runner_read_request()
        if more == 1:
            return 0
        if more != 0:
            return 2

if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # As kiln-worker: no interpreter teardown after the result is sent (CUDA, torch threads).
    os._exit(code if isinstance(code, int) else 1)
