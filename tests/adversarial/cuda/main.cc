// unit_adversarial_cuda: the [compile] tests run everywhere (nvcc needs no GPU); the [gpu] tests
// need CUDA GPU 0. Without one it runs [compile] only and then exits 77, which ctest reports as
// "Skipped", so a CPU-only run shows the GPU half was not run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "server/backend.h"

int main(int argc, char** argv) {
  // The harness's own device discovery: what a CUDA node would find.
  absl::StatusOr<std::vector<kiln::NodeBackend>> cuda = kiln::ResolveNodeBackends("cuda");
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (cuda.ok() && !cuda->empty() && !cuda->front().devices.empty()) {
    std::printf("[cuda] GPU 0: %s\n", cuda->front().devices.front().c_str());
    return session.run();
  }
  std::printf("SKIPPED [cuda] unit_adversarial_cuda [gpu]: %s\n",
              cuda.ok() ? "no CUDA device" : cuda.status().ToString().c_str());
  session.configData().testsOrTags = {"[compile]"};
  session.useConfigData(session.configData());
  int rc = session.run();
  return rc != 0 ? rc : 77;
}
