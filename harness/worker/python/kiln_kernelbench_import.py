"""Turns KernelBench problem files into kiln definitions (`kiln defs import --format kernelbench`).

    python3 -B kiln_kernelbench_import.py DIR [--level N]...

DIR holds KernelBench's level folders (level1/19_ReLU.py, ...). For every problem file, in
level then problem-id order, one JSON object per line on stdout:

    {"file": "level1/19_ReLU.py", "level": 1, "problem_id": 19, "problem_name": "ReLU",
     "definition": {...}, "workload": {...}}
or  {"file": ..., "level": ..., "problem_id": ..., "problem_name": ..., "error": "why"}

Progress goes to stderr. Nothing is registered here: kiln's CLI validates and registers.

The definition (named kernelbench_l{LEVEL}_{ID}_{NAME}):
  reference      the problem file, unchanged (class Model, get_inputs(), get_init_inputs())
  inputs         what get_inputs() returns, in order, named after Model.forward's parameters:
                 tensors with their shape (one const axis per dimension) and dtype; Python
                 numbers as scalars
  outputs        what Model.forward returns: "output", or output0, output1, ... for a tuple
  tolerance      KernelBench's by precision: 1e-4 for float32 outputs, 1e-2 for float16/bfloat16
  kernelbench    level, id, name, file, and inputs_source: the problem's module-level code
                 without its classes, which every worker (a candidate's too) runs to make inputs
The shapes are found without allocating the problem's tensors (a Level 1 input can hold billions
of elements): under torch's FakeTensorMode get_inputs(), Model(*get_init_inputs()) and its
forward run on shapes alone. Where fake tensors cannot follow the model, the problem is run for
real on the CPU when its inputs are small enough (--max-real-bytes), else it is reported.
"""
import argparse
import ast
import hashlib
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
import types

FILE_RE = re.compile(r"^(\d+)_(.+)\.py$")
KILN_DTYPES = {  # torch dtype name -> kiln dtype
    "float32": "float32", "float16": "float16", "bfloat16": "bfloat16", "float64": "float64",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "bool": "bool",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
}
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ConversionError(Exception):
    pass


def inputs_source(source, filename):
    """The problem's module-level code without classes: imports, assignments, functions (and
    the module docstring). get_inputs() and get_init_inputs() must be among them."""
    tree = ast.parse(source, filename)
    keep = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign,
            ast.FunctionDef)
    parts = []
    names = set()
    for node in tree.body:
        if isinstance(node, keep):
            segment = ast.get_source_segment(source, node)
            if segment is None:
                raise ConversionError(f"cannot take line {node.lineno} out of the problem file")
            # Decorators belong to the function's segment only from their own line.
            if isinstance(node, ast.FunctionDef) and node.decorator_list:
                first = node.decorator_list[0]
                segment = "\n".join(source.splitlines()[first.lineno - 1:node.end_lineno])
            parts.append(segment)
            if isinstance(node, ast.FunctionDef):
                names.add(node.name)
    for needed in ("get_inputs", "get_init_inputs"):
        if needed not in names:
            raise ConversionError(f"the problem defines no module-level {needed}()")
    header = ("# kiln: the module-level code of the KernelBench problem without its classes; "
              "it makes the inputs.\n")
    return header + "\n\n".join(parts) + "\n"


def load_module(name, source, path):
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def describe(torch, value, what):
    """(kind, shape, dtype) of one input or output."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        if dtype not in KILN_DTYPES:
            raise ConversionError(f"{what} has dtype {dtype}, which kiln does not have")
        return "tensor", [int(d) for d in value.shape], KILN_DTYPES[dtype]
    if isinstance(value, bool):
        return "scalar", None, "bool"
    if isinstance(value, int):
        return "scalar", None, "int64"
    if isinstance(value, float):
        return "scalar", None, "float64"
    raise ConversionError(f"{what} is a {type(value).__name__}, not a tensor or a number")


def forward_names(model_cls, count):
    try:
        params = list(inspect.signature(model_cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) >= count:
        names = names[:count]
        if len(set(names)) == count and all(IDENT_RE.match(n) for n in names) and \
                not any(n.startswith("output") for n in names):
            return names
    return [f"input{i}" for i in range(count)]


def run_problem(torch, module):
    """Model(*get_init_inputs())(*get_inputs()), seeded as KernelBench seeds: (inputs, outputs)."""
    torch.manual_seed(42)
    init_inputs = module.get_init_inputs()
    torch.manual_seed(42)
    model = module.Model(*init_inputs)
    torch.manual_seed(42)
    inputs = module.get_inputs()
    with torch.no_grad():
        out = model(*inputs)
    return list(inputs), out


def trace_shapes(torch, module, max_real_bytes):
    """run_problem on shapes alone, or for real when the inputs are small."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    try:
        with FakeTensorMode():
            return run_problem(torch, module) + ("fake",)
    except Exception as e:  # noqa: BLE001 -- reported below when the real run fails too
        why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    # For real, when the inputs are small: their size is known from a fake get_inputs().
    try:
        with FakeTensorMode():
            torch.manual_seed(42)
            fake_inputs = module.get_inputs()
        nbytes = sum(t.numel() * t.element_size() for t in fake_inputs
                     if isinstance(t, torch.Tensor))
    except Exception as e:  # noqa: BLE001
        raise ConversionError(f"get_inputs() failed: {type(e).__name__}: {e}") from e
    if nbytes > max_real_bytes:
        raise ConversionError(f"the model cannot be traced on shapes alone ({why}), and "
                              f"its inputs ({nbytes} bytes) are too large to run it on the CPU")
    return run_problem(torch, module) + ("cpu",)


def convert(torch, root, rel, max_real_bytes):
    level = int(rel.split("/")[0][len("level"):])
    match = FILE_RE.match(os.path.basename(rel))
    problem_id, problem_name = int(match.group(1)), match.group(2)
    record = {"file": rel, "level": level, "problem_id": problem_id,
              "problem_name": problem_name}
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        gen_source = inputs_source(source, rel)
        problem = load_module("kiln_kernelbench_problem", source, path)
        if not isinstance(getattr(problem, "Model", None), type):
            raise ConversionError("the problem defines no class Model")
        # The inputs must come from the code without classes alone, as in a candidate's worker.
        generator = load_module("kiln_kernelbench_inputs", gen_source, path)
        inputs, out, how = trace_shapes(torch, problem, max_real_bytes)
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            torch.manual_seed(42)
            again = list(generator.get_inputs())
        if [describe(torch, v, "input") for v in again] != \
                [describe(torch, v, "input") for v in inputs]:
            raise ConversionError("get_inputs() gives other inputs without the problem's "
                                  "classes")
    except ConversionError as e:
        record["error"] = str(e)
        return record
    except SyntaxError as e:
        where = f"{rel}:{e.lineno}" + (f":{e.offset}" if e.offset else "")
        record["error"] = f"{where}: SyntaxError: {e.msg}"
        return record
    except Exception as e:  # noqa: BLE001 -- the problem's own code failed
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        # The problem file's innermost line the exception passed, when it passed one.
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
        at = f" ({rel}:{lines[-1]})" if lines else ""
        record["error"] = f"running the problem failed{at}: {last}"
        return record
    try:
        names = forward_names(problem.Model, len(inputs))
        axes, tensors, workload_inputs = {}, {}, {}
        for name, value in zip(names, inputs):
            kind, shape, dtype = describe(torch, value, f"input '{name}'")
            if kind == "scalar":
                tensors[name] = {"shape": None, "dtype": dtype}
                workload_inputs[name] = {"type": "scalar", "value": value}
                continue
            dims = []
            for k, d in enumerate(shape):
                axes[f"{name}_dim{k}"] = {"type": "const", "value": d}
                dims.append(f"{name}_dim{k}")
            tensors[name] = {"shape": dims, "dtype": dtype}
            workload_inputs[name] = {"type": "random"}
        results = list(out) if isinstance(out, (tuple, list)) else [out]
        if not results:
            raise ConversionError("Model.forward returns nothing")
        out_names = ["output"] if len(results) == 1 else [f"output{j}" for j in
                                                          range(len(results))]
        outputs = {}
        precisions = set()
        for name, value in zip(out_names, results):
            kind, shape, dtype = describe(torch, value, f"output '{name}'")
            if kind != "tensor":
                raise ConversionError(f"Model.forward returns a {type(value).__name__} as "
                                      f"{name}; kiln compares tensors")
            dims = []
            for k, d in enumerate(shape):
                axes[f"{name}_dim{k}"] = {"type": "const", "value": d}
                dims.append(f"{name}_dim{k}")
            outputs[name] = {"shape": dims, "dtype": dtype}
            precisions.add(dtype)
    except ConversionError as e:
        record["error"] = str(e)
        return record
    tol = 1e-2 if precisions & {"float16", "bfloat16"} else 1e-4
    doc = inspect.getdoc(problem.Model) or ""
    name = f"kernelbench_l{level}_{problem_id}_{problem_name}"
    record["definition"] = {
        "name": name,
        "op_type": f"kernelbench_level{level}",
        "description": (f"KernelBench level {level} problem {problem_id} ({problem_name}). "
                        + doc.strip().splitlines()[0] if doc.strip() else
                        f"KernelBench level {level} problem {problem_id} ({problem_name})."),
        "tags": ["kernelbench", f"kernelbench:level{level}"],
        "axes": axes,
        "inputs": tensors,
        "outputs": outputs,
        "reference": source,
        "tolerance": {"atol": tol, "rtol": tol, "required_matched_ratio": 1.0},
        "kernelbench": {"level": level, "problem_id": problem_id, "problem_name": problem_name,
                        "file": rel, "inputs_source": gen_source},
    }
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    # A fixed uuid per problem file content: importing again registers the same workload.
    uuid = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    record["workload"] = {"uuid": uuid, "axes": {}, "inputs": workload_inputs}
    record["traced"] = how
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--level", type=int, action="append", default=[])
    parser.add_argument("--max-real-bytes", type=int, default=256 << 20)
    parser.add_argument("--only", action="append", default=[],
                        help="read only the problem that makes this definition (repeatable)")
    opts = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"kiln: importing KernelBench needs torch in this python ({sys.executable}): "
              f"{e!r}", file=sys.stderr)
        return 3
    import warnings
    warnings.filterwarnings("ignore")
    files = []
    for entry in sorted(os.listdir(opts.dir)):
        m = re.match(r"^level(\d+)$", entry)
        if not m or not os.path.isdir(os.path.join(opts.dir, entry)):
            continue
        level = int(m.group(1))
        if opts.level and level not in opts.level:
            continue
        for name in os.listdir(os.path.join(opts.dir, entry)):
            fm = FILE_RE.match(name)
            if fm and (not opts.only or
                       f"kernelbench_l{level}_{int(fm.group(1))}_{fm.group(2)}" in opts.only):
                files.append((level, int(fm.group(1)), f"{entry}/{name}"))
    files.sort()
    if not files and not opts.only:
        print(f"kiln: {opts.dir} has no KernelBench problem files (levelN/ID_NAME.py)"
              + (f" for level {', '.join(map(str, opts.level))}" if opts.level else ""),
              file=sys.stderr)
        return 3
    print(f"kiln: torch {torch.__version__}: {len(files)} KernelBench problems", file=sys.stderr,
          flush=True)
    converted = 0
    for i, (_, _, rel) in enumerate(files):
        record = convert(torch, opts.dir, rel, opts.max_real_bytes)
        converted += "error" not in record
        print(json.dumps(record), flush=True)
        if (i + 1) % 25 == 0 or i + 1 == len(files):
            print(f"kiln: read {i + 1}/{len(files)} problems, {converted} converted",
                  file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
