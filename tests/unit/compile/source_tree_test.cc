#include "harness/compile/source_tree.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "absl/strings/match.h"
#include "tests/unit/compile/compile_test_support.h"

namespace kiln {
namespace {

using testing::MakeSolution;

TEST_CASE("source paths that could leave the build folder are rejected, naming the field") {
  struct Case {
    std::vector<std::pair<std::string, std::string>> sources;
    std::string prefix;
  };
  std::vector<Case> cases = {
      {{{"main.cc", ""}, {"/etc/passwd", ""}}, "sources[1].path: "},
      {{{"../up.cc", ""}}, "sources[0].path: "},
      {{{"a/../../up.cc", ""}}, "sources[0].path: "},
      {{{"./main.cc", ""}}, "sources[0].path: "},
      {{{"a//b.cc", ""}}, "sources[0].path: "},
      {{{"", ""}}, "sources[0].path: "},
      {{{"dir/", ""}}, "sources[0].path: "},
      {{{"main.cc", ""}, {"main.cc", ""}}, "sources[1].path: "},
      {{{"inc", ""}, {"inc/x.h", ""}}, "sources[1].path: "},
      {{{std::string("a\0b", 3), ""}}, "sources[0].path: "},
  };
  for (const Case& c : cases) {
    absl::Status s = ValidateSourcePaths(MakeSolution(c.sources));
    INFO(s.ToString());
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StartsWith(s.message(), c.prefix));
  }
}

TEST_CASE("sources are written under the folder, subfolders included") {
  testing::ScratchDir dir;
  v1::Solution solution =
      MakeSolution({{"main.cc", "int main;"}, {"include/deep/util.h", "#pragma once\n"}});
  REQUIRE(WriteSources(solution, dir.path()).ok());
  CHECK(*ReadFile(dir.path() + "/main.cc") == "int main;");
  CHECK(*ReadFile(dir.path() + "/include/deep/util.h") == "#pragma once\n");
}

}  // namespace
}  // namespace kiln
