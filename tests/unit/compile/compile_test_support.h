// Shared pieces of the compile unit tests: a scratch folder and solution builders.
#ifndef KILN_TESTS_UNIT_COMPILE_COMPILE_TEST_SUPPORT_H_
#define KILN_TESTS_UNIT_COMPILE_COMPILE_TEST_SUPPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "harness/common/files.h"
#include "kiln/v1/types.pb.h"

namespace kiln::testing {

// A fresh folder, removed with its contents at scope exit.
class ScratchDir {
 public:
  ScratchDir() : path_(*MakeTempDir("", "kiln-compile-test")) {}
  ~ScratchDir() { (void)RemoveTree(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const char* kGoodSource = R"(#include <kiln/abi.h>
#include "util/scale.h"

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  return nargs == 2 && ctx->abi_version == KILN_ABI_VERSION ? kiln_test::Scale(0) : 1;
}
)";

inline const char* kScaleHeader = R"(#pragma once
namespace kiln_test { inline int Scale(int x) { return 2 * x; } }
)";

inline v1::Solution MakeSolution(std::vector<std::pair<std::string, std::string>> sources,
                                 const std::string& entry_point = "main.cc::run",
                                 const std::string& language = "cpp") {
  v1::Solution solution;
  solution.set_name("test_solution");
  solution.set_definition("test_definition");
  solution.mutable_spec()->set_language(language);
  solution.mutable_spec()->set_entry_point(entry_point);
  for (auto& [path, content] : sources) {
    v1::SourceFile* file = solution.add_sources();
    file->set_path(path);
    file->set_content(content);
  }
  return solution;
}

inline v1::Solution GoodSolution() {
  return MakeSolution({{"main.cc", kGoodSource}, {"util/scale.h", kScaleHeader}});
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_COMPILE_COMPILE_TEST_SUPPORT_H_
