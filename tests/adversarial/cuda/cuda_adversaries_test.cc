// The adversarial corpus, CUDA backend: exploits specific to GPUs. Every adversary is compiled
// with nvcc on every machine that has it ([compile]: needs no GPU, and the forbidden-symbol
// verdict is decided there); [gpu] tests run them through an in-process kiln-harness on GPU 0
// and assert the exact verdict and check. main.cc runs [gpu] only where a GPU opens.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "harness/compile/compiler.h"
#include "harness/compile/forbidden_symbols.h"
#include "harness/compile/nvcc_toolchain.h"
#include "tests/unit/compile/compile_test_support.h"
#include "tests/unit/cuda/cuda_test_support.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

const std::string kHead = R"(#include <kiln/abi.h>
#include <cuda_runtime.h>
#include <stdint.h>
#define ARGS const kiln_tensor* args, int32_t nargs, const kiln_context* ctx
#define N (args[0].shape[0])
#define STREAM ((cudaStream_t)ctx->stream)
__global__ void add(const float* a, const float* b, float* c, int64_t n, int spin) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  for (int k = 0; k < spin; ++k) __nanosleep(1000);  /* a long kernel, on purpose */
}
#define LAUNCH(stream, spin) add<<<(N + 255) / 256, 256, 0, stream>>>( \
    (const float*)args[0].data, (const float*)args[1].data, (float*)args[2].data, N, spin)
)";

struct Adversary {
  const char* name;
  std::string source;
};

const std::vector<Adversary>& Adversaries() {
  static const auto* all = new std::vector<Adversary>{
      {"honest", kHead + R"(
extern "C" int run(ARGS) { LAUNCH(STREAM, 0); return cudaGetLastError() != cudaSuccess; })"},
      {"side_stream", kHead + R"(
extern "C" int run(ARGS) {
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  LAUNCH(side, 2000);  /* about 2 ms; ctx->stream never waits for it */
  return 0;
})"},
      {"pointer_cache", kHead + R"(
static const void* last = nullptr; static float* saved = nullptr;
extern "C" int run(ARGS) {
  size_t bytes = N * sizeof(float);
  if (args[0].data == last) {
    return cudaMemcpyAsync(args[2].data, saved, bytes, cudaMemcpyDeviceToDevice, STREAM) != 0;
  }
  LAUNCH(STREAM, 0);
  if (saved == nullptr) cudaMalloc(&saved, bytes);
  cudaMemcpyAsync(saved, args[2].data, bytes, cudaMemcpyDeviceToDevice, STREAM);
  last = args[0].data;
  return 0;
})"},
      {"first_calls_only", kHead + R"(
static int calls = 0;
extern "C" int run(ARGS) { if (++calls <= 2) LAUNCH(STREAM, 0); return 0; })"},
      {"cublas", kHead + R"(
extern "C" int cublasCreate_v2(void** handle);
extern "C" int run(ARGS) { void* h; cublasCreate_v2(&h); LAUNCH(STREAM, 0); return 0; })"},
  };
  return *all;
}

const Adversary& Find(const std::string& name) {
  for (const Adversary& a : Adversaries()) {
    if (name == a.name) return a;
  }
  throw std::runtime_error("no adversary " + name);
}

v1::Solution Solution(const Adversary& a) {
  v1::Solution s = testing::CudaSolution({{"solution.cu", a.source}}, "solution.cu::run");
  s.set_name(a.name);
  s.set_definition("vector_add_f32");
  s.set_author("adversary");
  s.mutable_spec()->add_target_hardware("gpu");
  return s;
}

TEST_CASE("every CUDA adversary compiles with nvcc", "[compile]") {
  absl::StatusOr<std::unique_ptr<Toolchain>> nvcc = MakeNvccToolchain(testing::KilnIncludeDir());
  if (!nvcc.ok()) {
    WARN("SKIPPED: no nvcc: " << nvcc.status().ToString());
    return;
  }
  testing::ScratchDir cache;
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(*std::move(nvcc));
  Compiler compiler(cache.path(), std::move(toolchains));
  for (const Adversary& a : Adversaries()) {
    INFO(a.name);
    absl::StatusOr<CompileOutput> out = compiler.Compile(Solution(a), "sm_90a");
    REQUIRE(out.ok());
    INFO(out->log);
    REQUIRE(out->ok);
    absl::Status policy = CheckForbiddenSymbols(out->artifact_path, "vector_add_f32", {});
    if (std::string(a.name) == "cublas") {
      CHECK_THAT(std::string(policy.message()),
                 Catch::StartsWith("integrity.forbidden_symbol: solution uses cublasCreate_v2"));
    } else {
      CHECK(policy.ok());
    }
  }
}

// The run of adversary `name` on a CUDA node (GPU 0), kernelbench mode, 1 Mi elements.
v1::Run RunOnGpu(const std::string& name) {
  static auto* node = [] {
    std::string dir = *MakeTempDir("", "kiln-adversarial-cuda");
    HarnessOptions options = testing::TestOptions(dir + "/data");
    options.worker_path = testing::KilnWorkerPath();
    options.backend = "cuda";
    return new testing::TestNode(options);
  }();
  v1::EvaluateRequest request;
  request.set_definition("vector_add_f32");
  *request.mutable_solution() = Solution(Find(name));
  *request.add_workloads() = testing::VectorAddWorkload(1 << 20, "adversary-cuda");
  request.set_mode("kernelbench");
  testing::EvaluateOutcome out = testing::Evaluate(node->stub(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  REQUIRE(run.traces_size() == 1);
  return run;
}

void CheckRejected(const v1::Run& run, const std::string& check) {
  INFO(run.reason());
  CHECK(run.status() == v1::REJECTED);
  CHECK_THAT(run.reason(), Catch::StartsWith(check + ": "));
}

TEST_CASE("honest CUDA control PASSES with a floor below its latency", "[gpu]") {
  v1::Run run = RunOnGpu("honest");
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  const v1::Trace& t = run.traces(0);
  CHECK(t.kiln().speed_of_light().peak_gbps() > 0);
  CHECK(t.kiln().speed_of_light().floor_ms() < t.evaluation().performance().latency_ms());
}

TEST_CASE("work on another stream that ctx->stream never waits for is REJECTED", "[gpu]") {
  CheckRejected(RunOnGpu("side_stream"), "integrity.work_after_return");
}

TEST_CASE("a device-side cache keyed by the input pointer is REJECTED", "[gpu]") {
  CheckRejected(RunOnGpu("pointer_cache"), "integrity.output_caching");
}

TEST_CASE("a kernel launched only on the first calls is REJECTED", "[gpu]") {
  CheckRejected(RunOnGpu("first_calls_only"), "integrity.stale_output");
}

TEST_CASE("cuBLAS without the definition's permission is REJECTED before running", "[gpu]") {
  CheckRejected(RunOnGpu("cublas"), "integrity.forbidden_symbol");
}

}  // namespace
}  // namespace kiln
