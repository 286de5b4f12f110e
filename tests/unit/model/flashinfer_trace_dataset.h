// Where the tests find the contest's flashinfer-trace dataset: $KILN_DATASET_DIR, else the copy
// beside the source tree (../shared/datasets/flashinfer-trace). Fails the test when neither
// exists: a missing dataset must not pass silently.
#ifndef KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_DATASET_H_
#define KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_DATASET_H_

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

inline std::filesystem::path FlashinferTraceDatasetDir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("KILN_DATASET_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
  candidates.emplace_back(fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "datasets" /
                          "flashinfer-trace");
  for (const fs::path& dir : candidates) {
    if (fs::is_directory(dir / "definitions")) return dir;
  }
  std::string tried;
  for (const fs::path& dir : candidates) tried += " " + dir.string();
  FAIL("flashinfer-trace dataset not found (set KILN_DATASET_DIR); tried:" << tried);
  return {};
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_DATASET_H_
