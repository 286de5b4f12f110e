#include "tests/unit/cuda/gpu/gpu_fixture.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>

#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/model/dtype.h"
#include "harness/model/validate.h"
#include "harness/verify/input_generator.h"
#include "harness/worker/worker_client.h"
#include "tests/unit/cuda/compile/nvcc_compiler.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln::testing {
namespace {

// The compile cache, removed when the test program exits.
struct CacheDir {
  std::string path;
  ~CacheDir() {
    if (!path.empty()) (void)RemoveTree(path);
  }
};

std::string Compile() {
  static CacheDir cache;
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-cuda-kernels");
  REQUIRE(dir.ok());
  cache.path = *dir;
  Compiler compiler = NvccCompiler(cache.path);
  absl::StatusOr<CompileOutput> out = compiler.Compile(TestKernelSolution("add"), "cuda");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  return out->artifact_path;
}

v1::TensorSpec Tensor(const std::string& name) {
  v1::TensorSpec t;
  t.set_name(name);
  t.set_dtype(v1::DTYPE_FLOAT32);
  t.add_shape(std::string("n"));
  return t;
}

}  // namespace

const std::string& CudaTestLibrary() {
  static const std::string lib = Compile();
  return lib;
}

v1::Definition VectorAdd() {
  v1::Definition def;
  def.set_name("vector_add");
  v1::Axis* axis = def.add_axes();
  axis->set_name("n");
  axis->set_is_const(false);
  *def.add_inputs() = Tensor("a");
  *def.add_inputs() = Tensor("b");
  *def.add_outputs() = Tensor("c");
  return def;
}

v1::Workload VectorAddWorkload(int64_t n) {
  v1::Workload w;
  w.set_uuid("cuda-test-workload");
  v1::AxisValue* axis = w.add_axes();
  axis->set_name("n");
  axis->set_value(n);
  for (const char* name : {"a", "b"}) {
    v1::WorkloadInput* input = w.add_inputs();
    input->set_name(name);
    input->set_kind(v1::WorkloadInput::RANDOM);
  }
  return w;
}

v1::TimingConfig QuickOfficialTiming() {
  v1::TimingConfig config;
  config.set_mode("official");
  config.set_trials(1);
  config.set_warmup(1);
  config.set_iterations(3);
  config.set_flush_bytes(0);  // the device's default: 2x L2
  return config;
}

CudaJob::CudaJob() {
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-cuda-job");
  REQUIRE(dir.ok());
  dir_ = *dir;
  REQUIRE(MakeDirs(dir_ + "/out").ok());
}

CudaJob::~CudaJob() { (void)RemoveTree(dir_); }

v1::WorkerRequest CudaJob::Request(const std::string& symbol, int64_t n,
                                   std::vector<uint64_t> seeds) const {
  v1::WorkerRequest request;
  *request.mutable_definition() = VectorAdd();
  *request.mutable_workload() = VectorAddWorkload(n);
  request.set_artifact_path(CudaTestLibrary());
  request.set_symbol(symbol);
  request.set_role("candidate");
  for (uint64_t seed : seeds) request.add_trial_seeds(seed);
  request.set_measure(false);
  request.set_output_dir(dir_ + "/out");
  request.set_backend("cuda");
  request.set_device_index(0);
  request.set_blob_root(dir_);
  return request;
}

v1::WorkerResult CudaJob::Run(const v1::WorkerRequest& request, double timeout_s) const {
  WorkerLaunch launch;
  launch.worker_path = KilnWorkerPath();
  launch.job_dir = dir_;
  launch.log_path = dir_ + "/worker.log";
  launch.timeout_s = timeout_s;
  absl::StatusOr<v1::WorkerResult> result = RunWorker(launch, request, nullptr, nullptr);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *result;
}

std::string CudaJob::ReadLog() const {
  absl::StatusOr<std::string> log = ReadFile(dir_ + "/worker.log");
  return log.ok() ? *log : "";
}

std::vector<float> ReadFloats(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  INFO(path);
  REQUIRE(bytes.ok());
  std::vector<float> out(bytes->size() / sizeof(float));
  std::memcpy(out.data(), bytes->data(), out.size() * sizeof(float));
  return out;
}

std::vector<float> GeneratedInput(int64_t n, int index, uint64_t seed) {
  v1::Definition def = VectorAdd();
  v1::Workload workload = VectorAddWorkload(n);
  std::vector<float> values(static_cast<size_t>(n));
  std::vector<int64_t> shape = {n};
  REQUIRE(GenerateInput(def.inputs(index), workload.inputs(index), shape, seed, index, "",
                        values.data())
              .ok());
  return values;
}

}  // namespace kiln::testing
