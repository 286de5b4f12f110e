// The adversarial corpus for Python and Triton solutions on the CUDA backend: what a Python
// candidate can try on a GPU (work left on a side torch stream, a cache keyed on data_ptr,
// monkey-patching torch.cuda, returning an input, reaching for the reference), each run through
// an in-process kiln-harness on GPU 0 with the node's python3 (torch, triton), asserting the
// verdict and the check it names. [gpu]: main.cc runs these only where a GPU opens.
#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/unit/cuda/cuda_test_support.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

v1::Run RunPython(const std::string& name, const std::string& source, bool dps = true,
                  const std::string& language = "python") {
  static auto* node = [] {
    std::string dir = *MakeTempDir("", "kiln-adversarial-python-cuda");
    HarnessOptions options = testing::TestOptions(dir + "/data");
    options.worker_path = testing::KilnWorkerPath();
    options.backend = "cuda";
    options.python = "python3";  // the node's, with torch and triton
    return new testing::TestNode(options);
  }();
  v1::EvaluateRequest request;
  request.set_definition("vector_add_f32");
  v1::Solution* s = request.mutable_solution();
  s->set_name(name);
  s->set_definition("vector_add_f32");
  s->set_author("adversary");
  s->mutable_spec()->set_language(language);
  s->mutable_spec()->add_target_hardware("gpu");
  s->mutable_spec()->set_entry_point("kernel.py::run");
  s->mutable_spec()->set_destination_passing_style(dps);
  v1::SourceFile* f = s->add_sources();
  f->set_path("kernel.py");
  f->set_content(source);
  *request.add_workloads() = testing::VectorAddWorkload(1 << 20, "adversary-python-cuda");
  request.set_mode("kernelbench");
  testing::EvaluateOutcome out = testing::Evaluate(node->stub(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  REQUIRE(run.traces_size() == 1);
  return run;
}

void CheckRejected(const v1::Run& run, const std::string& check) {
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::REJECTED);
  CHECK_THAT(run.reason(), Catch::StartsWith(check + ": "));
}

TEST_CASE("python honest controls on the GPU: torch and Triton PASS", "[gpu]") {
  v1::Run torch_run = RunPython("py_honest", "import torch\n\ndef run(a, b, c):\n"
                                             "    torch.add(a, b, out=c)\n");
  INFO(torch_run.reason() << "\n" << torch_run.traces(0).evaluation().log());
  CHECK(torch_run.status() == v1::PASSED);
  v1::Run triton_run = RunPython("tr_honest", R"(import triton
import triton.language as tl

@triton.jit
def add(a, b, c, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(c + i, tl.load(a + i, mask=m) + tl.load(b + i, mask=m), mask=m)

def run(a, b, c):
    n = a.numel()
    add[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024)
)",
                                 true, "triton");
  INFO(triton_run.reason() << "\n" << triton_run.traces(0).evaluation().log());
  CHECK(triton_run.status() == v1::PASSED);
}

TEST_CASE("python work on a side torch stream that kiln's stream never waits for", "[gpu]") {
  CheckRejected(RunPython("py_side_stream", R"(import torch
_side = []

def run(a, b, c):
    if not _side:
        _side.append(torch.cuda.Stream())
    with torch.cuda.stream(_side[0]):
        torch.cuda._sleep(2000000)
        torch.add(a, b, out=c)
)"),
                "integrity.work_after_return");
}

TEST_CASE("python value-returning work on a side stream is named work_after_return", "[gpu]") {
  // The output is made on a side stream and returned unjoined: the caching allocator hands the
  // side stream the block of the output kiln collected (and poisoned) a call earlier, so a read
  // on kiln's stream still sees the poison. That is unfinished work, not a replayed output.
  CheckRejected(RunPython("py_side_stream_value", R"(import torch
_side = []

def run(a, b):
    if not _side:
        _side.append(torch.cuda.Stream())
    with torch.cuda.stream(_side[0]):
        torch.cuda._sleep(2000000)
        c = a + b
    return c
)",
                          false),
                "integrity.work_after_return");
}

TEST_CASE("python cache keyed on data_ptr on the GPU", "[gpu]") {
  CheckRejected(RunPython("py_ptr_cache", R"(import torch
_cache = {}

def run(a, b, c):
    key = (a.data_ptr(), b.data_ptr())
    if key not in _cache:
        _cache[key] = a + b
    c.copy_(_cache[key])
)"),
                "integrity.output_caching");
}

TEST_CASE("python monkey-patching torch.cuda.synchronize", "[gpu]") {
  v1::Run run = RunPython("py_patch_sync", R"(import torch
torch.cuda.synchronize = lambda device=None: None

def run(a, b, c):
    torch.add(a, b, out=c)
)");
  CheckRejected(run, "integrity.runner_tampered");
  CHECK_THAT(run.reason(), Catch::Contains("torch.cuda.synchronize"));
}

TEST_CASE("python returning an input buffer on the GPU", "[gpu]") {
  CheckRejected(RunPython("py_alias", "def run(a, b):\n    a.add_(b)\n    return a\n", false),
                "integrity.output_aliases_input");
}

TEST_CASE("python reaching for the reference on the GPU finds none", "[gpu]") {
  v1::Run run = RunPython("py_reference", R"(import sys
import torch

def run(a, b):
    module = sys.modules.get("kiln_reference")
    if module is not None:
        return module.run(a, b)
    try:
        import kiln_reference
        return kiln_reference.run(a, b)
    except ImportError:
        return torch.zeros_like(a)
)",
                          false);
  INFO(run.reason());
  CHECK(run.status() == v1::INCORRECT_NUMERICAL);
}

}  // namespace
}  // namespace kiln
