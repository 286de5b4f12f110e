// Python solutions end to end on the host backend: a real kiln-harness whose --python imports
// torch (Debian's CPU torch in CI), real compile-stage checks and real Python runner workers.
// Destination-passing and value-returning calling conventions, multi-file packages, the
// verdicts a team moving from flashinfer-bench expects, and what `kiln node` says.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "tests/unit/python/python_test_support.h"
#include "tests/unit/server/test_node.h"

namespace kiln::testing {
namespace {

v1::Run Submit(TestNode& node, const v1::Solution& s, int64_t n = 4096) {
  return EvaluatedRun(node, VectorAddRequest(s, n));
}

TEST_CASE("a destination-passing torch solution PASSES and its trace names the runtime") {
  SKIP_WITHOUT_TORCH();
  TestNode& node = PythonNode();
  v1::Run run = Submit(node, PythonSolution("py_dps", R"(import torch

def run(a, b, c):
    torch.add(a, b, out=c)
)"));
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  REQUIRE(run.status() == v1::PASSED);
  const v1::Evaluation& e = run.traces(0).evaluation();
  CHECK(e.performance().latency_ms() > 0);
  CHECK(e.performance().speedup_factor() > 0);
  const auto& libs = e.environment().libs();
  REQUIRE(libs.count("python") == 1);
  CHECK_THAT(libs.at("python"), Catch::Contains("torch"));
}

// Python that prints "kiln-test WHAT started MS" at import: when its interpreter started (wall
// clock in ms, from the process's age in /proc).
std::string StartReporter(const std::string& what) {
  return absl::StrCat(R"py(import os, time

def _started():
    ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    uptime = float(open("/proc/uptime").read().split()[0])
    return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))

print(f"kiln-test )py",
                      what, R"py(started {_started() * 1000:.0f}", flush=True)
)py");
}

const std::string kStartReporter = StartReporter("") + R"py(
import torch

def run(a, b, c):
    torch.add(a, b, out=c)
)py";

// The start time the candidate's worker log reports (ms since the epoch).
double ReportedStart(TestNode& node, const v1::Run& run) {
  const std::string log = WorkerLogs(node.stub(), run.run_id())["w0"];
  const size_t at = log.find("kiln-test started ");
  INFO(log);
  REQUIRE(at != std::string::npos);
  return std::stod(log.substr(at + 18, log.find('\n', at) - at - 18));
}

TEST_CASE("on the host backend every Python candidate starts its own interpreter: no spare") {
  SKIP_WITHOUT_TORCH();
  // A spare warming up (import torch) beside a run timed on the CPU would be in its timing: the
  // host backend keeps none (the GPU suite covers spares).
  TestNode node(NodeWithPython(TestPython()));
  for (const char* name : {"py_started_1", "py_started_2"}) {
    v1::Run run = Submit(node, PythonSolution(name, kStartReporter));
    INFO(run.reason());
    REQUIRE(run.status() == v1::PASSED);
    CHECK(ReportedStart(node, run) >= static_cast<double>(run.created_unix_ms()) - 20);
  }
  CHECK_FALSE(std::filesystem::exists(node.dir() + "/data/jobs/spare"));
}

// A KernelBench-style problem over vector_add_f32's tensors (Python references run on the host
// backend only for KernelBench problems): its inputs code, and the problem file, whose Model
// `prelude` may precede.
constexpr char kAddInputs[] = R"py(import torch

N = 4096

def get_inputs():
    return [torch.rand(N), torch.rand(N)]

def get_init_inputs():
    return []
)py";

std::string AddProblem(const std::string& prelude) {
  return absl::StrCat(prelude, kAddInputs, R"py(

class Model(torch.nn.Module):
    def forward(self, a, b):
        return a + b
)py");
}


// The start time a warm reference worker's log under the node's jobs/warm reports (ms since
// the epoch), and that log.
std::pair<double, std::string> ReferenceStart(TestNode& node) {
  const std::string warm = node.dir() + "/data/jobs/warm";
  for (const auto& entry : std::filesystem::directory_iterator(warm)) {
    if (entry.path().extension() != ".log") continue;
    absl::StatusOr<std::string> log = ReadFile(entry.path().string());
    if (!log.ok()) continue;
    const size_t at = log->find("kiln-test reference started ");
    if (at == std::string::npos) continue;
    return {std::stod(log->substr(at + 28, log->find('\n', at) - at - 28)), *log};
  }
  FAIL("no warm reference worker's log reports its start");
  return {};
}

// Registers a copy of vector_add_f32 named `name` as a KernelBench problem whose file is
// `reference` (no native reference: on the host backend one would be preferred).
void PutPythonOnlyVectorAdd(TestNode& node, const std::string& name,
                            const std::string& reference) {
  v1::Definition def = BuiltinCopy("vector_add_f32");
  REQUIRE(!def.name().empty());
  def.set_name(name);
  def.set_reference(reference);
  def.clear_native_reference();
  v1::KernelBenchProblem* problem = def.mutable_kernelbench();
  problem->set_level(1);
  problem->set_problem_id(1);
  problem->set_problem_name(name);
  problem->set_file("level1/1_" + name + ".py");
  problem->set_inputs_source(kAddInputs);
  grpc::Status status = PutDefinition(node.stub(), def);
  INFO(status.error_message());
  REQUIRE(status.ok());
}

v1::Run SubmitTo(TestNode& node, const std::string& definition, const std::string& name) {
  // A source of its own (the name in a comment): not a compile cache hit.
  v1::Solution solution = PythonSolution(name, absl::StrCat("# ", name, R"py(
import torch

class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return a + b
)py"),
                                         /*dps=*/false);
  solution.mutable_spec()->set_entry_point("kernel.py::ModelNew");
  v1::EvaluateRequest request = VectorAddRequest(solution);
  request.set_definition(definition);
  request.mutable_solution()->set_definition(definition);
  v1::Run run = EvaluatedRun(node, request);
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  CHECK(run.traces(0).kiln().reference_source() == "python");
  return run;
}

int WarmLogs(TestNode& node) {
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(node.dir() + "/data/jobs/warm")) {
    logs += entry.path().extension() == ".log";
  }
  return logs;
}

TEST_CASE("a Python reference no warm worker serves takes a runner started ahead of need") {
  SKIP_WITHOUT_TORCH();
  // Spares are kept on GPU backends only (an import beside a CPU-timed run would be in its
  // timing); this node keeps them on the host backend to check what a GPU node does.
  HarnessOptions options = NodeWithPython(TestPython());
  options.spares_on_host = true;
  TestNode node(options);
  PutPythonOnlyVectorAdd(node, "vector_add_first", AddProblem(""));
  PutPythonOnlyVectorAdd(node, "vector_add_started", AddProblem(StartReporter("reference ")));
  // Run A's reference starts a worker, and a spare beside it for the next new reference.
  SubmitTo(node, "vector_add_first", "py_first");
  CHECK(WarmLogs(node) == 2);
  // Run B's reference, new to the node, ran in a process started before run B existed (during
  // run A, which took seconds): a worker started for run B would report a start after that.
  const v1::Run b = SubmitTo(node, "vector_add_started", "py_second");
  auto [started, log] = ReferenceStart(node);
  INFO(log);
  CHECK(started < static_cast<double>(b.created_unix_ms()) - 200);
  CHECK_THAT(log, Catch::Contains("imported ahead of need"));
  // And the next spare waits.
  CHECK(WarmLogs(node) == 3);
  // The second Python solution's check, in the sandbox, took the check started ahead of need.
  grpc::ClientContext ctx;
  v1::GetRunRequest get;
  get.set_run_id(b.run_id());
  v1::Run archived;
  REQUIRE(node.stub().GetRun(&ctx, get, &archived).ok());
  INFO(archived.compile_log());
  CHECK_THAT(archived.compile_log(), Catch::Contains("ModelNew: imported") &&
                                         Catch::Contains("started ahead of need"));
}

TEST_CASE("a value-returning solution PASSES: its outputs are collected after every call") {
  SKIP_WITHOUT_TORCH();
  v1::Run run = Submit(PythonNode(), PythonSolution("py_value", R"(
def run(a, b):
    return a + b
)",
                                                    /*dps=*/false));
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("a solution that reuses one preallocated output, recomputed every call, PASSES") {
  SKIP_WITHOUT_TORCH();
  // kiln poisons returned memory after collecting it; an honest buffer reused across calls is
  // rewritten by each call, so it passes.
  v1::Run run = Submit(PythonNode(), PythonSolution("py_prealloc", R"(import torch
_out = {}

def run(a, b):
    buf = _out.get(a.shape)
    if buf is None:
        buf = _out[a.shape] = torch.empty_like(a)
    torch.add(a, b, out=buf)
    return buf
)",
                                                    /*dps=*/false));
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("a returned output that is not exactly a torch.Tensor is REJECTED, naming its type") {
  SKIP_WITHOUT_TORCH();
  // Right values, wrong types: a Parameter (torch's own subclass) in a list, and an object
  // imitating a tensor whose every attribute is a computation of its own. Both are refused by
  // type() alone, before kiln reads anything of them.
  v1::Run parameter = Submit(PythonNode(), PythonSolution("py_parameter", R"(import torch

def run(a, b):
    return [torch.nn.Parameter(a + b, requires_grad=False)]
)",
                                                          /*dps=*/false));
  INFO(parameter.reason());
  CHECK(parameter.status() == v1::REJECTED);
  CHECK_THAT(parameter.reason(),
             Catch::StartsWith("integrity.output_not_plain_tensor: output 'c' is a "
                               "torch.nn.parameter.Parameter, not a torch.Tensor"));
  v1::Run imitation = Submit(PythonNode(), PythonSolution("py_imitation", R"(import torch

class Imitation:
    def __init__(self, a, b):
        self.__dict__["operands"] = (a, b)

    def __getattr__(self, name):
        return getattr(torch.add(*self.__dict__["operands"]), name)

def run(a, b):
    return Imitation(a, b)
)",
                                                          /*dps=*/false));
  INFO(imitation.reason());
  CHECK(imitation.status() == v1::REJECTED);
  CHECK_THAT(imitation.reason(),
             Catch::StartsWith("integrity.output_not_plain_tensor: output 'c' is a "
                               "kiln_solution.kernel.Imitation, not a torch.Tensor"));
}

TEST_CASE("a package of several files with relative imports PASSES") {
  SKIP_WITHOUT_TORCH();
  v1::Solution s = PythonSolution("py_package", R"(from .ops.add import add_into

def run(a, b, c):
    add_into(a, b, c)
)");
  v1::SourceFile* helper = s.add_sources();
  helper->set_path("ops/add.py");
  helper->set_content("import torch\n\ndef add_into(a, b, c):\n    torch.add(a, b, out=c)\n");
  v1::Run run = Submit(PythonNode(), s);
  INFO(run.reason() << "\n" << run.traces(0).evaluation().log());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("a wrong solution is INCORRECT_NUMERICAL, with the errors measured") {
  SKIP_WITHOUT_TORCH();
  v1::Run run = Submit(PythonNode(), PythonSolution("py_wrong", R"(
def run(a, b, c):
    c.copy_(a - b)
)"));
  CHECK(run.status() == v1::INCORRECT_NUMERICAL);
  CHECK(run.traces(0).evaluation().correctness().max_absolute_error() > 0.1);
  CHECK_FALSE(run.traces(0).evaluation().has_performance());
}

TEST_CASE("a returned output of the wrong shape or dtype is INCORRECT_SHAPE / INCORRECT_DTYPE") {
  SKIP_WITHOUT_TORCH();
  v1::Run shape = Submit(PythonNode(), PythonSolution("py_shape", R"(
def run(a, b):
    return (a + b)[:-1]
)",
                                                      false));
  CHECK(shape.status() == v1::INCORRECT_SHAPE);
  CHECK_THAT(shape.reason(), Catch::Contains("output 'c'"));
  v1::Run dtype = Submit(PythonNode(), PythonSolution("py_dtype", R"(
def run(a, b):
    return (a + b).double()
)",
                                                      false));
  CHECK(dtype.status() == v1::INCORRECT_DTYPE);
  CHECK_THAT(dtype.reason(), Catch::Contains("torch.float64"));
}

TEST_CASE("an exception in the solution is a RUNTIME_ERROR quoting it") {
  SKIP_WITHOUT_TORCH();
  v1::Run run = Submit(PythonNode(), PythonSolution("py_raises", R"(
def run(a, b, c):
    raise ValueError("no kernel for this shape")
)"));
  CHECK(run.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(run.reason(), Catch::Contains("ValueError: no kernel for this shape"));
}

TEST_CASE("a syntax error and a missing module are COMPILE_ERRORs naming file, line and module") {
  SKIP_WITHOUT_TORCH();
  v1::Run syntax = Submit(PythonNode(), PythonSolution("py_syntax", R"(import torch

def run(a, b, c)
    torch.add(a, b, out=c)
)"));
  CHECK(syntax.status() == v1::COMPILE_ERROR);
  CHECK_THAT(syntax.reason(), Catch::Contains("kernel.py:3"));
  CHECK_THAT(syntax.reason(), Catch::Contains("SyntaxError"));

  v1::Run missing = Submit(PythonNode(), PythonSolution("py_missing", R"(import torch
import flash_linear_attention_not_here

def run(a, b, c):
    torch.add(a, b, out=c)
)"));
  CHECK(missing.status() == v1::COMPILE_ERROR);
  CHECK_THAT(missing.reason(),
             Catch::Contains("cannot import module 'flash_linear_attention_not_here'"));
}

TEST_CASE("a Triton solution on a node without a GPU is refused at admission, saying why") {
  SKIP_WITHOUT_TORCH();
  v1::Solution s = PythonSolution("tr_host", "def run(a, b, c):\n    pass\n");
  s.mutable_spec()->set_language("triton");
  EvaluateOutcome out = Evaluate(PythonNode().stub(), VectorAddRequest(s));
  CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_THAT(out.status.error_message(), Catch::Contains("spec.language: 'triton'"));
}

TEST_CASE("an entry point that is not a .py file is INVALID_ARGUMENT naming the field") {
  SKIP_WITHOUT_TORCH();
  v1::Solution s = PythonSolution("py_bad_entry", "def run(a, b, c):\n    pass\n");
  s.mutable_spec()->set_entry_point("kernel.cu::run");
  s.mutable_sources(0)->set_path("kernel.cu");
  EvaluateOutcome out = Evaluate(PythonNode().stub(), VectorAddRequest(s));
  CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(out.status.error_message(), Catch::Contains("solution.spec.entry_point"));
}

TEST_CASE("the node lists python with its interpreter and torch, and triton with why not") {
  SKIP_WITHOUT_TORCH();
  grpc::ClientContext ctx;
  v1::NodeInfo info;
  REQUIRE(PythonNode().stub().GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info).ok());
  REQUIRE(info.languages().count("python") == 1);
  CHECK_THAT(info.languages().at("python"), Catch::StartsWith("runs on host ("));
  CHECK_THAT(info.languages().at("python"), Catch::Contains("torch "));
  REQUIRE(info.languages().count("triton") == 1);
  CHECK_THAT(info.languages().at("triton"), Catch::StartsWith("unavailable: "));
  CHECK_THAT(info.toolchains().at("python"), Catch::Contains("torch"));
}

TEST_CASE("a node without torch refuses Python solutions at admission and lists why") {
  TestNode node(NodeWithPython("none"));
  v1::Solution s = PythonSolution("py_none", "def run(a, b, c):\n    pass\n");
  EvaluateOutcome out = Evaluate(node.stub(), VectorAddRequest(s));
  CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_THAT(out.status.error_message(), Catch::Contains("spec.language: 'python'"));
  CHECK_THAT(out.status.error_message(), Catch::Contains("--python none"));
  grpc::ClientContext ctx;
  v1::NodeInfo info;
  REQUIRE(node.stub().GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info).ok());
  CHECK_THAT(info.languages().at("python"), Catch::StartsWith("unavailable: "));
  CHECK(info.languages().at("cpp") == "runs on host");
}

}  // namespace
}  // namespace kiln::testing
