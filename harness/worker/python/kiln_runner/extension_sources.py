"""The sources of a load_inline extension as kiln builds them: light headers, bindings,
compiler errors."""

import os
import re



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


def _torch_paths(fn, cuda):
    """torch.utils.cpp_extension.include_paths / library_paths: `cuda=` up to torch 2.5,
    `device_type=` since."""
    import inspect
    if "device_type" in inspect.signature(fn).parameters:
        return fn(device_type="cuda" if cuda else "cpu")
    return fn(cuda=cuda)
