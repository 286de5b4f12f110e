#include <catch2/catch.hpp>
#include <vector>

#include "harness/backend/level_zero/level_zero_device.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/compile/opencl_toolchain.h"
#include "harness/timing/protocol.h"
#include "harness/worker/solution_library.h"
#include "tests/unit/level_zero/level_zero_test_support.h"

namespace kiln {
namespace {

std::string CompileVectorAdd() {
  static std::string cache;
  if (cache.empty()) {
    absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-ze-gpu");
    REQUIRE(dir.ok());
    cache = *dir;
  }
  absl::StatusOr<std::unique_ptr<Toolchain>> opencl =
      MakeOpenClToolchain(std::string(KILN_SOURCE_DIR) + "/harness/include",
                          [](const std::string&) -> absl::StatusOr<v1::Definition> {
                            return testing::VectorAddDefinition();
                          });
  INFO(opencl.status().ToString());
  REQUIRE(opencl.ok());
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(*std::move(opencl));
  Compiler compiler(cache, std::move(toolchains));
  absl::StatusOr<CompileOutput> out = compiler.Compile(testing::VectorAddSolution(), "level_zero");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  return out->artifact_path;
}

TEST_CASE("an OpenCL solution runs on the GPU and computes alpha * x + y", "[level_zero]") {
  absl::StatusOr<std::unique_ptr<LevelZeroDevice>> device = LevelZeroDevice::Open(0);
  INFO(device.status().ToString());
  REQUIRE(device.ok());
  absl::StatusOr<SolutionLibrary> lib = LoadSolution(CompileVectorAdd(), "vector_add");
  INFO(lib.status().ToString());
  REQUIRE(lib.ok());

  constexpr int64_t n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  const int64_t bytes = n * sizeof(float);
  absl::StatusOr<DeviceBuffer> dx = DeviceBuffer::Allocate(**device, bytes);
  absl::StatusOr<DeviceBuffer> dy = DeviceBuffer::Allocate(**device, bytes);
  absl::StatusOr<DeviceBuffer> dout = DeviceBuffer::Allocate(**device, bytes);
  REQUIRE((dx.ok() && dy.ok() && dout.ok()));
  REQUIRE((*device)->CopyToDevice(dx->data(), x.data(), bytes).ok());
  REQUIRE((*device)->CopyToDevice(dy->data(), y.data(), bytes).ok());
  REQUIRE((*device)->Fill(dout->data(), 0xA5, bytes).ok());
  float alpha = 2.0f;
  int64_t shape[1] = {n}, strides[1] = {1};
  kiln_tensor args[4] = {{dx->data(), KILN_FLOAT32, 1, shape, strides},
                         {dy->data(), KILN_FLOAT32, 1, shape, strides},
                         {&alpha, KILN_FLOAT32, 0, nullptr, nullptr},
                         {dout->data(), KILN_FLOAT32, 1, shape, strides}};
  kiln_context ctx = (*device)->Context();
  REQUIRE(lib->entry(args, 4, &ctx) == 0);
  REQUIRE((*device)->Synchronize().ok());
  REQUIRE((*device)->CopyToHost(out.data(), dout->data(), bytes).ok());
  for (int64_t i = 0; i < n; ++i) REQUIRE(out[i] == 2.0f * x[i] + 1.0f);

  for (const char* mode : {"official", "kernelbench", "robust"}) {
    absl::StatusOr<v1::TimingConfig> config = DefaultTimingConfig(mode);
    REQUIRE(config.ok());
    TimedCall work;
    work.prepare_trial = [](int) { return absl::OkStatus(); };
    work.before_call = [](bool) { return absl::OkStatus(); };
    work.call = [&] {
      return lib->entry(args, 4, &ctx) == 0 ? absl::OkStatus()
                                            : absl::InternalError("entry point failed");
    };
    work.after_call = [&](bool) { return (*device)->Synchronize(); };
    absl::StatusOr<v1::TimingResult> timing = RunTimingProtocol(*config, **device, work);
    INFO(mode << ": " << timing.status().ToString());
    REQUIRE(timing.ok());
    CHECK(timing->latency_ms() > 0);
  }
}

}  // namespace
}  // namespace kiln
