"""torch's load_inline and load, served by kiln: what a solution's call gets."""

import contextlib
import os
import sys

from kiln_runner.extension_build import ExtensionBuild
from kiln_runner.extension_sources import _as_list, _binding, _flag_words, _signature_stub, _unit
from kiln_runner.frames import _calling_line


def import_cpp_extension():
    """torch.utils.cpp_extension, imported without a word: at import it says where it looks for
    CUDA ("No CUDA runtime is found, ..."), which is not the solution's output (a check's log
    must start with that). Importing it costs about a third of a second after torch; a runner
    started ahead of need imports it then."""
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
    return ext


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
        ext = import_cpp_extension()
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
