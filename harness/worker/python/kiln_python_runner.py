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
            result = self.normalize(self.last)
            self.last = None
            dsts = [self.views(args[self.n_in + j], True) for j in range(self.n_out)]
            if self.guard is not None:
                self.guard.check_disjoint(result, args, nargs, self.views)
            with self.stream(ctx), self.no_grad():
                for j, value in enumerate(result):
                    self.store(j, value, dsts[j])
                if self.guard is not None:
                    self.guard.poison(result)
            return 0
        except Exception as e:
            return self.fail(e)

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
    a returned tensor must not share memory with kiln's input or output buffers. Returned
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
        self.owners = {runner_cls.__name__: runner_cls, Guard.__name__: Guard,
                       OwnWork.__name__: OwnWork}
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

    def poison(self, result):
        torch = self.torch
        seen = set()
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
                value.view(as_int).bitwise_not_()
            except RuntimeError as e:  # memory the tensor cannot write (an expanded view)
                print(f"kiln python runner: a returned output was not poisoned: {e}",
                      file=sys.stderr)


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
    torch.manual_seed(the trial's seed), copied into kiln's input buffers (fill). The code that
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

    def fill(self, views, definition, args, nargs, ctx, seed, stream):
        torch = self.torch
        names = list(definition["inputs"].keys())
        torch.manual_seed(seed)
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
    head = "// kiln: a light <torch/extension.h> for load_inline's {} unit (kiln_python_runner.py)\n"
    return {"cuda": head.format("CUDA") + cuda + alias,
            "cpp": head.format("binding") + tensor +
            "#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n" + alias}


class LoadInline:
    """kiln's torch.utils.cpp_extension.load_inline, installed before a solution is imported.

    In the compile stage (--check; build=True) each call builds its extension into the solution's
    package (PKG_ROOT/kiln_extensions/NAME-KEY/NAME.so), which kiln's compile cache then keeps
    with the package: the sources are written as torch's load_inline writes them (main.cpp with
    <torch/extension.h> and a pybind11 module of `functions`, cuda.cu), the two translation units
    compiled at once (nvcc with the node's -gencode flags, which the harness passes to the check
    as --nvcc and --gencode, and the system c++), then linked. No ninja, no
    TORCH_EXTENSIONS_DIR, nothing shared between solutions.
    In a worker (build=False) a call loads the extension the compile stage built for the same
    arguments; one it did not build is an error: nothing is compiled while a solution runs.
    KEY hashes every argument that changes the binary, and the torch and python versions; the
    nvcc and arches key the compile cache's entry for the package."""

    ARGS = ("name", "cpp_sources", "cuda_sources", "functions", "extra_cflags",
            "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "build_directory",
            "verbose", "with_cuda", "is_python_module", "with_pytorch_error_handling",
            "keep_intermediates", "use_pch")

    def __init__(self, torch, root, build, nvcc="", gencode=""):
        self.torch = torch
        self.root = os.path.join(root, "kiln_extensions")
        self.build = build
        self.nvcc = nvcc
        self.gencode = gencode.split()
        self.loaded = {}

    def install(self):
        # torch.utils.cpp_extension says at import where it looks for CUDA ("No CUDA runtime is
        # found, ..."): not the solution's output, which the check's log must start with.
        import contextlib
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
        ext.load_inline = self.load_inline

    def _args(self, args, kwargs):
        values = dict(zip(self.ARGS, args))
        for k, v in kwargs.items():
            if k not in self.ARGS:
                raise TypeError(f"load_inline() got an unexpected keyword argument '{k}'")
            values[k] = v
        if "name" not in values or "cpp_sources" not in values:
            raise TypeError("load_inline() needs name and cpp_sources")

        def as_list(v):
            if v is None:
                return []
            return [v] if isinstance(v, str) else list(v)

        functions = values.get("functions")
        if isinstance(functions, str):
            functions = [functions]
        return {
            "name": values["name"],
            "cpp_sources": as_list(values["cpp_sources"]),
            "cuda_sources": as_list(values.get("cuda_sources")),
            "functions": functions if isinstance(functions, dict) else as_list(functions),
            "extra_cflags": as_list(values.get("extra_cflags")),
            "extra_cuda_cflags": as_list(values.get("extra_cuda_cflags")),
            "extra_ldflags": as_list(values.get("extra_ldflags")),
            "extra_include_paths": as_list(values.get("extra_include_paths")),
            "with_cuda": values.get("with_cuda"),
            "is_python_module": values.get("is_python_module", True),
            "with_pytorch_error_handling": values.get("with_pytorch_error_handling", True),
            "verbose": bool(values.get("verbose", False)),
        }

    def _key(self, a):
        import hashlib
        import json
        keyed = {k: v for k, v in a.items() if k != "verbose"}
        keyed["torch"] = self.torch.__version__
        keyed["python"] = sys.version
        # Not the nvcc and arches: workers do not know them, and they key the compile cache's
        # entry for the whole package (the Python toolchain's version names them).
        return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:20]

    def load_inline(self, *args, **kwargs):
        a = self._args(args, kwargs)
        name = a["name"]
        if not name.isidentifier():
            raise ValueError(f"load_inline: name '{name}' is not a Python identifier")
        folder = os.path.join(self.root, f"{name}-{self._key(a)}")
        lib = os.path.join(folder, name + ".so")
        if lib in self.loaded:
            return self.loaded[lib]
        if not os.path.exists(os.path.join(folder, "built")):
            if not self.build:
                raise RuntimeError(f"load_inline('{name}'): kiln's compile stage did not build "
                                   f"this extension (its arguments differ from the compile "
                                   f"stage's call, or the call is made only at run time)")
            self._build(a, folder, lib)
        module = self._import(name, lib, a["is_python_module"])
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

    def _sources(self, a):
        """main.cpp and cuda.cu as torch's load_inline writes them."""
        cpp = ["#include <torch/extension.h>"] + a["cpp_sources"]
        functions = a["functions"]
        if functions:
            items = functions.items() if isinstance(functions, dict) else \
                [(f, f) for f in functions]
            binding = "torch::wrap_pybind_function" if a["with_pytorch_error_handling"] else ""
            cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
            for fname, doc in items:
                doc = doc.replace("\\", "\\\\").replace('"', '\\"')
                cpp.append(f'm.def("{fname}", {binding}({fname}), "{doc}");')
            cpp.append("}")
        cu = None
        if a["cuda_sources"]:
            cu = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"] \
                + a["cuda_sources"]
        return "\n".join(cpp) + "\n", ("\n".join(cu) + "\n") if cu else None

    def _build(self, a, folder, lib):
        import shutil
        import subprocess
        import sysconfig
        import time
        import torch.utils.cpp_extension as ext
        torch = self.torch
        os.makedirs(folder, exist_ok=True)
        main_cpp, cuda_cu = self._sources(a)
        with open(os.path.join(folder, "main.cpp"), "w") as f:
            f.write(main_cpp)
        with_cuda = a["with_cuda"] if a["with_cuda"] is not None else cuda_cu is not None
        if cuda_cu is not None:
            with open(os.path.join(folder, "cuda.cu"), "w") as f:
                f.write(cuda_cu)
        nvcc = self.nvcc
        if with_cuda and not nvcc:
            raise RuntimeError(f"load_inline('{a['name']}'): this node has no nvcc for CUDA "
                               f"sources")
        includes = _torch_paths(ext.include_paths, with_cuda) + a["extra_include_paths"] + \
            [sysconfig.get_paths()["include"]]
        defines = [f"-DTORCH_EXTENSION_NAME={a['name']}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
        for attr, macro in (("_PYBIND11_COMPILER_TYPE", "PYBIND11_COMPILER_TYPE"),
                            ("_PYBIND11_STDLIB", "PYBIND11_STDLIB"),
                            ("_PYBIND11_BUILD_ABI", "PYBIND11_BUILD_ABI")):
            value = getattr(torch._C, attr, None)
            if value is not None:
                defines.append(f'-D{macro}="{value}"')
        abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
        defines.append(f"-D_GLIBCXX_USE_CXX11_ABI={abi}")
        inc = [f"-I{p}" for p in includes]
        std = "-std=c++17"
        cxx = os.environ.get("CXX", "c++")
        # <torch/extension.h> is all of torch's C++ API (the nn/optim/data frontend) plus
        # pybind11 and Python.h, and parsing it is most of an extension's build. Each unit is
        # first compiled with a lighter header of the same name found first on its include
        # path (light_extension_headers): the tensor type, TORCH_CHECK, AT_DISPATCH and the
        # common factories (torch:: names are at::'s), and for the binding unit pybind11 with
        # torch's tensor caster. A unit that needs more of torch fails and is compiled with torch's own
        # header, so no source is refused that torch's load_inline builds. With cores to spare
        # both are started at once and the first to succeed, light first, is kept.
        cpp_shim = ["-I" + os.path.join(folder, "kiln_cpp_include")]
        cuda_shim = ["-I" + os.path.join(folder, "kiln_cuda_include")]
        light = light_extension_headers(includes)
        for what, shim in (("cuda", cuda_shim), ("cpp", cpp_shim)):
            d = os.path.join(shim[0][2:], "torch")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "extension.h"), "w") as f:
                f.write(light[what])
        if cuda_cu is not None:
            # torch's cuda.cu starts with <torch/types.h>, all of ATen's operators; the light
            # compile's starts with the light <torch/extension.h> instead.
            with open(os.path.join(folder, "cuda_light.cu"), "w") as f:
                f.write(cuda_cu.replace("#include <torch/types.h>\n",
                                        "#include <torch/extension.h>\n", 1))
        jobs = [("c++", [cxx, "-fPIC", std, "-O3"] + defines, inc + a["extra_cflags"] +
                 ["-c", "main.cpp"], cpp_shim)]
        if cuda_cu is not None:
            jobs.append(("nvcc", [nvcc, "-Xcompiler", "-fPIC", std, "-O3",
                                  "--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__",
                                  "-D__CUDA_NO_HALF_CONVERSIONS__",
                                  "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
                                  "-D__CUDA_NO_HALF2_OPERATORS__"] + self.gencode + defines,
                         inc + a["extra_cuda_cflags"] + ["-c", "cuda.cu"], cuda_shim))
        race = (os.cpu_count() or 1) >= 4
        log = []
        started = time.monotonic()

        def start(what, head, tail, shim):
            out = ("main" if what == "c++" else "cuda") + (".light.o" if shim else ".o")
            if shim and what == "nvcc":
                tail = [("cuda_light.cu" if t == "cuda.cu" else t) for t in tail]
            cmd = head + shim + tail + ["-o", out]
            return {"what": what, "light": bool(shim), "cmd": cmd, "out": out,
                    "proc": subprocess.Popen(cmd, cwd=folder, stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, text=True,
                                             start_new_session=True)}

        # Per unit: its light compile, and its full one (at once when racing, else after a
        # light failure). The first light success wins; else the full compile's outcome.
        units = {}
        for what, head, tail, shim in jobs:
            units[what] = [start(what, head, tail, shim)]
            if race:
                units[what].append(start(what, head, tail, []))
        objects, failed = [], None
        for what, head, tail, shim in jobs:
            chosen = None
            while units[what]:
                job = units[what].pop(0)
                out, _ = job["proc"].communicate()
                kind = "light" if job["light"] else "torch's <torch/extension.h>"
                log.append(f"[{what} {time.monotonic() - started:.1f} s] ({kind}) "
                           f"{' '.join(job['cmd'])}\n{out}")
                if job["proc"].returncode == 0:
                    chosen = job
                    break
                if job["light"]:
                    log.append(f"[{what}] needs more than the light <torch/extension.h>")
                    if not race:
                        units[what].append(start(what, head, tail, []))
                elif failed is None:
                    failed = (what, out)
            for job in units[what]:  # the full compile the light one made unnecessary
                try:
                    os.killpg(job["proc"].pid, 9)  # nvcc's cicc, ptxas and host compiler too
                except ProcessLookupError:
                    pass
                job["proc"].communicate()
                log.append(f"[{what}] ({'light' if job['light'] else 'full'} compile stopped: "
                           f"not needed)")
            if chosen is not None:
                objects.append(chosen["out"])
        if failed is None:
            libs = [f"-L{p}" for p in _torch_paths(ext.library_paths, with_cuda)] + \
                ["-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"]
            if with_cuda:
                libs += ["-lc10_cuda", "-ltorch_cuda", "-lcudart"]
                cudart_dir = os.path.join(os.path.dirname(os.path.dirname(nvcc)), "lib64")
                libs = [f"-L{cudart_dir}"] + libs
            cmd = [cxx, "-shared"] + objects + libs + a["extra_ldflags"] + ["-o", lib]
            r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
            log.append(f"[link {time.monotonic() - started:.1f} s] {' '.join(cmd)}\n"
                       f"{r.stdout}{r.stderr}")
            if r.returncode != 0:
                failed = ("link", r.stdout + r.stderr)
        with open(os.path.join(folder, "build.log"), "w") as f:
            f.write("\n".join(log))
        if a["verbose"] or failed:
            print("\n".join(log), file=sys.stderr if failed else sys.stdout, flush=True)
        if failed:
            shutil.rmtree(folder, ignore_errors=True)
            raise RuntimeError(f"Error building extension '{a['name']}' ({failed[0]}): "
                               + failed[1].strip()[-4000:])
        for f in ("main.o", "cuda.o", "main.light.o", "cuda.light.o"):
            if os.path.exists(os.path.join(folder, f)):
                os.unlink(os.path.join(folder, f))
        with open(os.path.join(folder, "built"), "w") as f:
            f.write(f"{time.monotonic() - started:.2f}\n")
        steps = "; ".join(line.split("]")[0].lstrip("[") for line in log
                          if line.startswith("[") and " s]" in line.split("\n")[0])
        print(f"kiln: load_inline('{a['name']}') built in {time.monotonic() - started:.1f} s "
              f"({steps})", flush=True)


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


def _solution_frame(tb, root):
    """The innermost traceback frame in the solution's own files, as 'file.py:LINE'."""
    where = None
    base = os.path.join(root, PACKAGE) + os.sep
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(base):
            where = f"{frame.filename[len(base):]}:{frame.lineno}"
    return where


def _torch_paths(fn, cuda):
    """torch.utils.cpp_extension.include_paths / library_paths: `cuda=` up to torch 2.5,
    `device_type=` since."""
    import inspect
    if "device_type" in inspect.signature(fn).parameters:
        return fn(device_type="cuda" if cuda else "cpu")
    return fn(cuda=cuda)


def _serve_load_inline(root, build, nvcc="", gencode=""):
    """kiln's load_inline (LoadInline) in place of torch's, when torch imports."""
    try:
        import torch
    except Exception:  # noqa: BLE001 -- the solution's own import reports a missing torch
        return
    LoadInline(torch, root, build, nvcc, gencode).install()


def check_solution(opts):
    """The compile stage: byte-compile, import, find the entry. Exit 0, or 1 with the reason."""
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
        _serve_load_inline(root, build=True, nvcc=opts.nvcc, gencode=opts.gencode)
        fn = load_solution(root, opts.entry)
    except (AttributeError, TypeError) as e:
        print(f"{entry_file}: error: {e}")
        return 1
    except ModuleNotFoundError as e:
        missing = e.name or str(e)
        if missing == PACKAGE or missing.startswith(PACKAGE + "."):
            missing = missing[len(PACKAGE) + 1:].replace(".", "/") + ".py"
            print(f"{entry_file}: error: cannot import module '{missing}' of the solution: "
                  f"no such source")
        else:
            where = _solution_frame(e.__traceback__, root) or entry_file
            print(f"{where}: error: cannot import module '{missing}': it is not installed on "
                  f"this node ({e})")
        return 1
    except Exception as e:
        where = _solution_frame(e.__traceback__, root) or entry_file
        print(f"{where}: error: importing the solution failed: {type(e).__name__}: {e}")
        traceback.print_exc(file=sys.stdout)
        return 1
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
            solution_fn = load_solution(opts.solution, opts.entry)
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
