#!/usr/bin/env python3
"""kiln's Python reference runner: a kiln worker whose solution is a definition's `reference`.

kiln-harness starts it instead of kiln-worker when the definition has a Python `reference`
(flashinfer-bench's `run(...)`) and the node's python3 imports torch:

  python3 kiln_reference_runner.py --core LIB --baseline reference|torch_eager|torch_compile
                                   [--sys-path DIR]...

with a framed WorkerRequest on fd 3 and WorkerEvents expected on fd 4, exactly like kiln-worker.
LIB (libkiln_worker_python.so) is kiln's worker core: it reads the request, allocates and fills
the inputs on the device, flushes the cache, times every call with the CUPTI span, computes the
statistic and sends the result. This script only turns kiln's device buffers into torch tensors
(no copy: the tensors alias kiln's memory through __cuda_array_interface__), calls run() on
kiln's stream, and hands the outputs back. Timing is never done here.

The reference is value-returning, as flashinfer-bench calls it: a timed call is run(*inputs)
alone. After each checked (untimed) call kiln asks for the outputs, which are then copied into
kiln's output buffers for comparison.
"""
import argparse
import ctypes
import os
import sys
import traceback

DTYPES = [  # kiln_dtype of harness/include/kiln/abi.h, in enum order
    "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1",
    "int64", "int32", "int16", "int8", "bool", "float64",
]
KILN_BACKEND_CUDA = 1


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


class _DeviceBytes:
    """A device allocation of kiln's seen as bytes by torch.as_tensor (zero copy)."""

    def __init__(self, ptr, nbytes):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3,
            "strides": None, "stream": None,  # kiln orders all work on its own stream
        }


class Runner:
    def __init__(self, torch, definition, fn, device_index, note_failure):
        self.note_failure = note_failure
        self.torch = torch
        self.fn = fn
        self.device = torch.device("cuda", device_index)
        self.input_names = list(definition["inputs"].keys())
        self.output_names = list(definition["outputs"].keys())
        self.n_in = len(self.input_names)
        self.views = {}     # (ptr, dtype, shape) -> tensor aliasing kiln's buffer
        self.streams = {}   # stream handle -> torch.cuda.ExternalStream
        self.last = None    # the outputs of the last call
        self.torch_dtypes = {}
        for name in DTYPES:
            t = {"float4_e2m1": "float4_e2m1fn_x2"}.get(name, name)
            self.torch_dtypes[name] = getattr(torch, t, None)

    def stream(self, ctx):
        handle = ctx.contents.stream or 0
        s = self.streams.get(handle)
        if s is None:
            s = self.torch.cuda.ExternalStream(handle, device=self.device)
            self.streams[handle] = s
        return s

    def view(self, t):
        dtype = DTYPES[t.dtype]
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.ndim == 0:  # a scalar: host memory, passed as a Python number
            ctype = {"float32": ctypes.c_float, "float64": ctypes.c_double,
                     "int64": ctypes.c_int64, "int32": ctypes.c_int32,
                     "int16": ctypes.c_int16, "int8": ctypes.c_int8,
                     "bool": ctypes.c_bool}.get(dtype)
            if ctype is None:
                raise TypeError(f"scalar of dtype {dtype} is not supported by the runner")
            return ctypes.cast(t.data, ctypes.POINTER(ctype))[0]
        key = (t.data, dtype, shape)
        v = self.views.get(key)
        if v is not None:
            return v
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
            v = self.torch.empty(shape, dtype=torch_dtype, device=self.device)
        else:
            nbytes = numel * _itemsize(self.torch, torch_dtype)
            raw = self.torch.as_tensor(_DeviceBytes(t.data, nbytes), device=self.device)
            v = raw.view(torch_dtype).view(shape)
        self.views[key] = v
        return v

    def entry(self, args, nargs, ctx):
        try:
            inputs = [self.view(args[i]) for i in range(self.n_in)]
            with self.torch.cuda.stream(self.stream(ctx)), self.torch.no_grad():
                result = self.fn(*inputs)
            self.last = self.normalize(result)
            return 0
        except Exception as e:
            traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            self.note_failure(e)
            return 1

    def normalize(self, result):
        torch = self.torch
        if isinstance(result, torch.Tensor):
            result = [result]
        elif isinstance(result, dict):
            result = [result[name] for name in self.output_names]
        elif isinstance(result, (tuple, list)):
            result = list(result)
        else:
            raise TypeError(f"run() returned {type(result).__name__}; expected a tensor or a "
                            f"tuple of {len(self.output_names)} tensors")
        if len(result) != len(self.output_names):
            raise ValueError(f"run() returned {len(result)} outputs; the definition has "
                             f"{len(self.output_names)} ({', '.join(self.output_names)})")
        return result

    def collect(self, args, nargs, ctx):
        try:
            if self.last is None:
                raise RuntimeError("no outputs to collect: the last call failed")
            with self.torch.cuda.stream(self.stream(ctx)):
                for j, value in enumerate(self.last):
                    dst = self.view(args[self.n_in + j])
                    name = self.output_names[j]
                    if not isinstance(value, self.torch.Tensor):
                        value = self.torch.tensor(value, device=self.device)
                    if tuple(value.shape) != tuple(dst.shape):
                        raise ValueError(f"output '{name}': run() returned shape "
                                         f"{tuple(value.shape)}, the definition says "
                                         f"{tuple(dst.shape)}")
                    if value.dtype != dst.dtype:
                        raise ValueError(f"output '{name}': run() returned {value.dtype}, the "
                                         f"definition says {dst.dtype}")
                    dst.copy_(value)
            return 0
        except Exception as e:
            traceback.print_exc()
            sys.stderr.flush()
            self.note_failure(e)
            return 1


def _itemsize(torch, dtype):
    return torch.empty((), dtype=dtype).element_size()


def load_reference(source, folder):
    """The definition's run(), from a real module (kiln_reference.py in the worker's folder): torch.compile
    imports the module of the function it compiles, and tracebacks show its lines."""
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--core", required=True, help="libkiln_worker_python.so")
    parser.add_argument("--baseline", default="reference",
                        choices=["reference", "torch_eager", "torch_compile"])
    parser.add_argument("--sys-path", action="append", default=[],
                        help="a folder of the node's python path (the harness passes them; "
                             "HOME differs inside the sandbox)")
    opts = parser.parse_args()
    # Inside the sandbox the uid has no passwd entry; torch.compile asks for a user name
    # (getpass.getuser reads these first) and would spawn a pool of compile processes.
    os.environ.setdefault("USER", "kiln")
    os.environ.setdefault("LOGNAME", "kiln")
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    # Loaded (and every symbol bound) before torch: its libraries must not interpose on kiln's.
    core = ctypes.CDLL(opts.core, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    core.kiln_runner_definition_json.restype = ctypes.c_char_p
    core.kiln_runner_fail.argtypes = [ctypes.c_char_p]
    core.kiln_runner_serve.argtypes = [ENTRY, ENTRY]
    if core.kiln_runner_read_request() != 0:
        return 2

    def fail(message):
        sys.stderr.flush()
        return core.kiln_runner_fail(message.encode("utf-8", "replace"))

    for path in reversed(opts.sys_path):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        import json
        import torch
    except Exception as e:
        return fail(f"the Python reference runner cannot import torch: {e!r}")
    definition = json.loads(core.kiln_runner_definition_json().decode("utf-8"))
    source = definition.get("reference") or ""
    if not source.strip():
        return fail(f"definition '{definition.get('name')}' has no Python reference")
    try:
        fn = load_reference(source, os.getcwd())
        if opts.baseline == "torch_compile":
            # Compiled on the first (checked, untimed) call; kiln times the compiled graph.
            fn = torch.compile(fn)
        if not torch.cuda.is_available():
            return fail("torch reports no CUDA device (torch.cuda.is_available() is False)")
        device_index = core.kiln_runner_device_index()
        torch.cuda.set_device(device_index)
    except Exception:
        text = traceback.format_exc()
        print(text, file=sys.stderr)
        return fail("the definition's reference cannot be loaded: " + text.strip().splitlines()[-1])
    print(f"kiln reference runner: torch {torch.__version__}, {opts.baseline}, "
          f"definition {definition.get('name')}", file=sys.stderr, flush=True)
    core.kiln_runner_note_failure.argtypes = [ctypes.c_char_p]

    def note_failure(e):
        lines = [l.strip() for l in f"{type(e).__name__}: {e}".splitlines() if l.strip()]
        line = " | ".join(lines[:4])[:600]
        core.kiln_runner_note_failure(line.encode("utf-8", "replace"))

    runner = Runner(torch, definition, fn, device_index, note_failure)
    entry = ENTRY(runner.entry)
    collect = ENTRY(runner.collect)
    return core.kiln_runner_serve(entry, collect)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # As kiln-worker: no interpreter teardown after the result is sent (CUDA, torch threads).
    os._exit(code if isinstance(code, int) else 1)
