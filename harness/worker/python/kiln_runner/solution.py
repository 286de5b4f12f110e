"""Importing a solution, and reporting what went wrong in its own terms."""

import os
import sys
import traceback

from kiln_runner.abi import PACKAGE
from kiln_runner.frames import _in_solution
from kiln_runner.load_inline import LoadInline


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


# The folder of kiln's runner: kiln_python_runner.py and this package.
_RUNNER_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def _in_runner(path):
    """Whether a real path is one of kiln's runner files."""
    return path.startswith(_RUNNER_DIR) and _in_solution(path) is None


def _import_failed(e, where):
    """The compile stage's report of an exception raised while the solution was imported: its
    line, then its traceback (without the import system's frames, and for the TypeError of
    torch's load_inline signature without this runner's: the solution's call is at fault)."""
    print(f"{where}: error: importing the solution failed: {type(e).__name__}: {e}")
    import importlib
    frames = traceback.extract_tb(e.__traceback__)
    hidden = {os.path.realpath(importlib.__file__)}
    hide_runner = False
    if frames and frames[-1].filename == "<string>":  # torch's TypeError, from _signature_stub
        hide_runner = True
    # The solution's own frames are named by their path in the solution ("kernel.py"), not the
    # compile cache's; kiln's runner frames (which import it) are not the solution's business.
    if any(_in_solution(f.filename) is not None for f in frames):
        hide_runner = True
    shown = []
    for f in frames:
        path = os.path.realpath(f.filename)
        if f.filename.startswith("<") or path in hidden or (hide_runner and _in_runner(path)):
            continue
        name = _in_solution(f.filename) or f.filename
        shown.append(traceback.FrameSummary(name, f.lineno, f.name, line=f.line))
    frames = shown
    print("Traceback (most recent call last):")
    print("".join(traceback.format_list(frames)) +
          "".join(traceback.format_exception_only(type(e), e)), end="")
    return 1
