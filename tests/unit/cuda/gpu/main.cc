// unit_cuda_gpu needs a CUDA GPU. Without one it prints why and exits 77, which ctest reports as
// "Skipped" (SKIP_RETURN_CODE), so a CPU-only run shows the tests were not run rather than
// passing silently.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "harness/worker/open_device.h"

namespace {

constexpr int kSkipped = 77;

// 0 when GPU 0 opens, kSkipped when there is no CUDA device, 1 on any other error.
int ProbeGpu() {
  absl::StatusOr<std::unique_ptr<kiln::Device>> device = kiln::OpenDevice("cuda", 0);
  if (device.ok()) {
    std::printf("[cuda] GPU 0: %s, timer %s\n", (*device)->DeviceName().c_str(),
                (*device)->TimerName().c_str());
    return 0;
  }
  std::printf("%s [cuda] unit_cuda_gpu: %s\n",
              device.status().code() == absl::StatusCode::kFailedPrecondition ||
                      device.status().code() == absl::StatusCode::kUnimplemented
                  ? "SKIPPED"
                  : "FAILED",
              device.status().ToString().c_str());
  return device.status().code() == absl::StatusCode::kFailedPrecondition ||
                 device.status().code() == absl::StatusCode::kUnimplemented
             ? kSkipped
             : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (int probe = ProbeGpu(); probe != 0) return probe;
  std::fflush(stdout);
  return Catch::Session().run(argc, argv);
}
