// unit_cuda_compile runs on every machine. Tests tagged [nvcc] need nvcc; without one they are
// left out with a visible notice, and the rest (parsers, policies) still run.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "harness/compile/nvcc_toolchain.h"

int main(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  absl::StatusOr<std::string> nvcc = kiln::FindNvcc();
  if (nvcc.ok()) {
    std::printf("[nvcc] using %s\n", nvcc->c_str());
  } else {
    std::printf("SKIPPED [nvcc] tests: %s\n", std::string(nvcc.status().message()).c_str());
    Catch::ConfigData config = session.configData();
    config.testsOrTags.push_back("~[nvcc]");
    session.useConfigData(config);
  }
  return session.run();
}
