// The adversarial corpus for Python solutions, host backend (torch on the CPU): the exploits a
// Python candidate can try beyond a native one's (caches keyed on data_ptr, returned memory
// reused, work left to a thread, monkey-patching torch or kiln's runner, returning an input,
// reaching for the reference), each evaluated by a real kiln-harness through its Python runner
// and asserting the verdict and the check it names. The honest controls must PASS.
#include <catch2/catch.hpp>
#include <string>

#include "tests/adversarial/adversary_support.h"

namespace kiln::adversarial {
namespace {

#define REQUIRE_TORCH()                                                                    \
  do {                                                                                     \
    if (!HasTorch()) {                                                                     \
      WARN("SKIPPED: no python3 with torch was found when kiln was configured");           \
      return;                                                                              \
    }                                                                                      \
  } while (0)

void CheckRejected(const v1::Run& run, const std::string& check) {
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::REJECTED);
  CHECK_THAT(run.reason(), Catch::StartsWith(check + ": "));
  CHECK_FALSE(run.traces(0).evaluation().has_performance());
}

TEST_CASE("python honest control: torch.add into the output PASSES") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_honest", R"(import torch

def run(a, b, c):
    torch.add(a, b, out=c)
)"),
                         4096);
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("python caching by data_ptr: the same input address replays the first result") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_ptr_cache", R"(import torch
_cache = {}

def run(a, b, c):
    key = (a.data_ptr(), b.data_ptr())
    hit = _cache.get(key)
    if hit is None:
        hit = _cache[key] = a + b
    c.copy_(hit)
)"),
                         4096);
  CheckRejected(run, "integrity.output_caching");
}

TEST_CASE("python value-returning cache: a fresh copy of the first result per address") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_value_cache", R"(import torch
_cache = {}

def run(a, b):
    key = a.data_ptr()
    if key not in _cache:
        _cache[key] = a + b
    return _cache[key].clone()
)",
                                        /*dps=*/false),
                         4096);
  CheckRejected(run, "integrity.output_caching");
}

TEST_CASE("python returned memory reused: the same cached tensor returned on every call") {
  REQUIRE_TORCH();
  // kiln overwrites returned memory with its complement once collected, so the second call
  // returns the poison instead of a result it did not compute, and the runner recognises it.
  v1::Run run = Evaluate(PythonSolution("py_same_storage", R"(import torch
_cache = {}

def run(a, b):
    key = a.data_ptr()
    if key not in _cache:
        _cache[key] = a + b
    return _cache[key]
)",
                                        /*dps=*/false),
                         4096);
  // The determinism call is the first to return it again: a replayed output, named as such.
  CheckRejected(run, "integrity.output_caching");
  CHECK_THAT(run.reason(), Catch::Contains("is the tensor an earlier call returned"));
}

TEST_CASE("python work after return: a thread computes the output after run() returned") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_thread", R"(import threading
import torch

def run(a, b, c):
    threading.Thread(target=lambda: torch.add(a, b, out=c)).start()
)"),
                         1 << 21);
  CheckRejected(run, "integrity.work_after_return");
}

TEST_CASE("python monkey-patching torch: replacing Tensor.copy_ is refused") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_patch_torch", R"(import torch
_copy = torch.Tensor.copy_

def _quiet_copy(self, src, non_blocking=False):
    return _copy(self, src, non_blocking)

torch.Tensor.copy_ = _quiet_copy

def run(a, b, c):
    torch.add(a, b, out=c)
)"),
                         4096);
  CheckRejected(run, "integrity.runner_tampered");
  CHECK_THAT(run.reason(), Catch::Contains("torch.Tensor.copy_"));
}

TEST_CASE("python monkey-patching kiln's runner: replacing its collector is refused") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_patch_runner", R"(import __main__
import torch

def run(a, b):
    __main__.Runner.collect = lambda self, args, nargs, ctx: 0
    return a + b
)",
                                        /*dps=*/false),
                         4096);
  CheckRejected(run, "integrity.runner_tampered");
  CHECK_THAT(run.reason(), Catch::Contains("kiln runner's Runner.collect"));
}

TEST_CASE("python monkey-patching kiln's runner package: replacing its guard's check is refused") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_patch_runner_package", R"(import kiln_runner.guard
import torch

def run(a, b):
    kiln_runner.guard.Guard.check_disjoint = lambda self, *args, **kwargs: None
    return a + b
)",
                                        /*dps=*/false),
                         4096);
  CheckRejected(run, "integrity.runner_tampered");
  CHECK_THAT(run.reason(), Catch::Contains("kiln runner's Guard.check_disjoint"));
}

TEST_CASE("python returning an input: an output that aliases kiln's input buffer is refused") {
  REQUIRE_TORCH();
  // Adds in place into `a` and returns it: the returned memory is kiln's input buffer.
  v1::Run run = Evaluate(PythonSolution("py_alias", R"(
def run(a, b):
    a.add_(b)
    return a
)",
                                        /*dps=*/false),
                         4096);
  CheckRejected(run, "integrity.output_aliases_input");
}

TEST_CASE("python honest value-returning control: torch.add's result returned PASSES") {
  REQUIRE_TORCH();
  v1::Run run = Evaluate(PythonSolution("py_value_honest", R"(import torch

def run(a, b):
    return torch.add(a, b)
)",
                                        /*dps=*/false),
                         4096);
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("python deferred work: a returned tensor subclass computes when kiln reads it") {
  REQUIRE_TORCH();
  // run() returns at once a subclass of an uncomputed tensor whose __torch_function__ adds the
  // inputs the first time the output is touched: by kiln's collector, after the timed call.
  v1::Run run = Evaluate(PythonSolution("py_deferred_subclass", R"(import torch

class Deferred(torch.Tensor):
    @staticmethod
    def __new__(cls, a, b):
        out = torch.Tensor._make_subclass(cls, torch.empty_like(a))
        out.operands = (a, b)
        return out

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for arg in list(args) + list((kwargs or {}).values()):
            if isinstance(arg, Deferred) and arg.__dict__.get("operands") is not None:
                a, b = arg.__dict__.pop("operands")
                with torch._C.DisableTorchFunction():
                    torch.add(a, b, out=arg)
        return super().__torch_function__(func, types, args, kwargs)

def run(a, b):
    return Deferred(a, b)
)",
                                        /*dps=*/false),
                         1 << 20);
  CheckRejected(run, "integrity.output_not_plain_tensor");
  CHECK_THAT(run.reason(), Catch::Contains("output 'c' is a kiln_solution.kernel.Deferred"));
}

TEST_CASE("python deferred work: a torch function mode left entered computes in kiln's copy") {
  REQUIRE_TORCH();
  // A plain tensor is returned uncomputed; a TorchFunctionMode entered at import (never left)
  // adds the inputs into it when kiln's collector copies it. kiln collects with the modes set
  // aside, so the uncomputed tensor is what it gets.
  v1::Run run = Evaluate(PythonSolution("py_deferred_mode", R"(import torch
from torch.overrides import TorchFunctionMode

_pending = {}

class _Finish(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        for arg in args:
            operands = _pending.pop(id(arg), None) if isinstance(arg, torch.Tensor) else None
            if operands is not None:
                torch.add(*operands, out=arg)
        return func(*args, **(kwargs or {}))

_Finish().__enter__()

def run(a, b):
    with torch._C.DisableTorchFunction():
        out = torch.empty_like(a)
    _pending[id(out)] = (a, b)
    return out
)",
                                        /*dps=*/false),
                         1 << 20);
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() != v1::PASSED);
}

TEST_CASE("python reading the reference: the candidate's process has no reference to call") {
  REQUIRE_TORCH();
  // Looks for the reference where a Python process might find it: an imported kiln_reference
  // module, or the definition the worker core holds (read through its C API, found in
  // /proc/self/maps). It calls the reference when it finds one and answers zeros otherwise;
  // PASSED would mean the reference reached the candidate.
  v1::Run run = Evaluate(PythonSolution("py_reference", R"(import ctypes
import json
import sys
import torch

def _reference():
    module = sys.modules.get("kiln_reference")
    if module is not None:
        return module.run
    try:
        import kiln_reference
        return kiln_reference.run
    except ImportError:
        pass
    core = None
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libkiln_worker_python" in line:
                core = line.split()[-1]
                break
    if core is None:
        raise RuntimeError("adversary: the worker core is not mapped")
    lib = ctypes.CDLL(core)
    lib.kiln_runner_definition_json.restype = ctypes.c_char_p
    definition = json.loads(lib.kiln_runner_definition_json())
    if "inputs" not in definition:
        raise RuntimeError("adversary: cannot read the definition")
    source = definition.get("reference") or ""
    if not source.strip():
        print("adversary: no reference found", file=sys.stderr)
        return None
    scope = {}
    exec(source, scope)
    return scope["run"]

def run(a, b):
    reference = _reference()
    if reference is None:
        return torch.zeros_like(a)
    return reference(a, b)
)",
                                        /*dps=*/false),
                         4096);
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::INCORRECT_NUMERICAL);
}

}  // namespace
}  // namespace kiln::adversarial
