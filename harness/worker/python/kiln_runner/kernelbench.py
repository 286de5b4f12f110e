"""KernelBench problems: inputs from get_inputs(), Model and ModelNew."""

import os
import sys


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
