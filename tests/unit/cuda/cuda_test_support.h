// Shared by the CUDA unit tests: where kiln's headers are, and CUDA solutions built from the
// test kernels.
#ifndef KILN_TESTS_UNIT_CUDA_CUDA_TEST_SUPPORT_H_
#define KILN_TESTS_UNIT_CUDA_CUDA_TEST_SUPPORT_H_

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kiln/v1/types.pb.h"
#include "tests/unit/cuda/test_kernels.h"

namespace kiln::testing {

inline bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// kiln/abi.h's folder: $KILN_INCLUDE_DIR, else the source tree the tests were built from, else
// harness/include under the current folder (a copied checkout).
inline std::string KilnIncludeDir() {
  if (const char* dir = std::getenv("KILN_INCLUDE_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (IsDirectory(KILN_SOURCE_DIR "/harness/include")) return KILN_SOURCE_DIR "/harness/include";
  return std::filesystem::absolute("harness/include").string();
}

// The kiln-worker to run: $KILN_WORKER, else the one of the build the tests belong to, else
// bin/kiln-worker beside this test program's folder (a build folder copied elsewhere).
inline std::string KilnWorkerPath() {
  if (const char* path = std::getenv("KILN_WORKER"); path != nullptr && *path != '\0') return path;
  struct stat st;
  if (::stat(KILN_BINARY_DIR "/bin/kiln-worker", &st) == 0)
    return KILN_BINARY_DIR "/bin/kiln-worker";
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path().parent_path() / "bin" / "kiln-worker").string();
}

// A "cuda" solution of `sources` whose entry point is `file::function`.
inline v1::Solution CudaSolution(std::vector<std::pair<std::string, std::string>> sources,
                                 const std::string& entry_point) {
  v1::Solution solution;
  solution.set_name("cuda_test_solution");
  solution.set_definition("vector_add");
  solution.mutable_spec()->set_language("cuda");
  solution.mutable_spec()->set_entry_point(entry_point);
  for (auto& [path, content] : sources) {
    v1::SourceFile* file = solution.add_sources();
    file->set_path(path);
    file->set_content(content);
  }
  return solution;
}

// The test kernels as one solution with entry point `function`.
inline v1::Solution TestKernelSolution(const std::string& function = "add") {
  return CudaSolution({{"kernels.cu", kCudaTestKernels}}, "kernels.cu::" + function);
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_CUDA_CUDA_TEST_SUPPORT_H_
