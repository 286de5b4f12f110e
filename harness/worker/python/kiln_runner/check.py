"""The compile stage's check of a Python or Triton solution."""

import os

from kiln_runner.abi import PACKAGE
from kiln_runner.extension_sources import ExtensionBuildError
from kiln_runner.frames import _solution_frame
from kiln_runner.solution import _import_failed, _needs_gpu, _serve_load_inline, load_solution


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
