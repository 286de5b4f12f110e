"""kiln's Python runner: a kiln worker whose solution is Python code run in-process."""

import argparse
import ctypes
import os
import sys
import time
import traceback

from kiln_runner.abi import ENTRY, FILL, Refusal
from kiln_runner.check import check_solution
from kiln_runner.frames import _solution_frame
from kiln_runner.guard import Guard
from kiln_runner.kernelbench import KernelBench, load_reference, load_reference_model
from kiln_runner.load_inline import LoadInline, import_cpp_extension
from kiln_runner.own_work import OwnWork
from kiln_runner.runner import Runner
from kiln_runner.solution import _serve_load_inline, _writable_package, load_solution


def _import_ahead(solutions, say=None, candidate=False):
    """What a runner started ahead of need imports before it knows what it runs: torch and, for
    solutions (checks and candidates), torch.utils.cpp_extension (which kiln's load_inline takes
    the place of) and triton. A failure is left for the first request to report. With `say` (a
    runner whose log is its own, not a check's) the log says which it was. A `candidate` also
    computes Triton's cache key (_triton_key_ahead), which a check never needs."""
    try:
        import torch
        if solutions:
            import_cpp_extension()
    except Exception as e:
        if say:
            print(f"kiln python runner: {say}: {e!r}", file=sys.stderr, flush=True)
        return
    hashed = ""
    if solutions:
        try:
            import triton  # noqa: F401
        except Exception:
            pass
        else:
            hashed = _triton_key_ahead() if candidate else ""
    if say:
        print(f"kiln python runner: {say}: torch {torch.__version__} imported ahead of need"
              f"{hashed}", file=sys.stderr, flush=True)


def _triton_key_ahead():
    """Triton's first compile in a process (a kernel's first launch, its disk cache warm or not)
    starts with triton_key(): a SHA-256 of Triton's compiler sources and of libtriton, hundreds
    of MiB, kept for the process. It depends on the installed Triton alone, so a runner started
    ahead of need computes it then, on the CPU, instead of inside the candidate's first call.
    Returns what the log says of it ("" when this Triton has no such function)."""
    key = None
    for module in ("triton.runtime.cache", "triton.compiler.compiler"):
        try:
            key = getattr(__import__(module, fromlist=["triton_key"]), "triton_key", None)
        except Exception:
            key = None
        if key is not None:
            break
    if key is None:
        return ""
    start = time.monotonic()
    try:
        key()
    except Exception as e:
        return f", Triton's cache key not computed ({type(e).__name__})"
    return f", Triton's cache key computed ({(time.monotonic() - start) * 1000:.0f} ms)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--core", help="libkiln_worker_python.so")
    parser.add_argument("--baseline", default="reference",
                        choices=["reference", "torch_eager", "torch_compile"])
    parser.add_argument("--solution", help="the package root of a Python/Triton solution")
    parser.add_argument("--entry", help="FILE.py::FUNCTION")
    parser.add_argument("--style", default="dps", choices=["dps", "value"])
    parser.add_argument("--check", action="store_true", help="compile stage: check and exit")
    parser.add_argument("--args-fd", type=int, default=-1,
                        help="compile stage, started ahead of need: import torch (and triton), "
                             "then read the solution to check (JSON: solution, entry, arity, "
                             "arity_note) from this fd")
    parser.add_argument("--spare", action="store_true",
                        help="a candidate started before its solution is known: import torch "
                             "(and triton), then take the solution (package, entry, style) "
                             "from the first request")
    parser.add_argument("--warm", action="store_true",
                        help="a reference runner started before it is needed: import torch, "
                             "then wait for the first request (its definition comes with it)")
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
        if opts.args_fd >= 0:
            # What solutions import, before the solution is known; then the solution.
            _import_ahead(solutions=True)
            with os.fdopen(opts.args_fd, "rb") as f:
                given = f.read()
            if not given:
                return 2  # the harness ended without a solution for this check
            import json
            given = json.loads(given.decode("utf-8"))
            opts.solution = given["solution"]
            opts.entry = given["entry"]
            opts.arity = int(given.get("arity", -1))
            opts.arity_note = given.get("arity_note", "")
            code = check_solution(opts)
            # Last, so that the log starts as a fresh check's does.
            print("kiln: the check's interpreter was started ahead of need", flush=True)
            return code
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
        _import_ahead(solutions=True, say="spare warm-up", candidate=True)
        sys.stderr.flush()
        core.kiln_runner_ready()
    elif opts.warm:
        # Ahead of need, on the CPU only, like a spare: the import every reference starts with.
        _import_ahead(solutions=False, say="warm-up")
        core.kiln_runner_ready()
    if core.kiln_runner_read_request() != 0:
        return 2
    # Where the first request's time goes before the core serves it (the log's first line on
    # the solution says it): milliseconds since the request, per step.
    requested = time.monotonic()
    marks = []

    def mark(step):
        marks.append(f"{step} +{(time.monotonic() - requested) * 1000:.0f} ms")
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
    mark("torch")
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
        mark("device")
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
            mark("solution imported")
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
            if loaded is None:
                mark("built")
            print(f"kiln python runner: torch {torch.__version__}, {what}, definition "
                  f"{definition.get('name')}, device {device}"
                  + (f" (after its request: {', '.join(marks)})" if loaded is None else ""),
                  file=sys.stderr, flush=True)
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
