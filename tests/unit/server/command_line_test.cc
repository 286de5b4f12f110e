#include "server/command_line.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, test_data_dir, "", "a string flag for these tests");
ABSL_FLAG(int, test_max_queue, 1, "an int flag for these tests");
ABSL_FLAG(bool, test_quiet, false, "a bool flag for these tests");

namespace kiln {
namespace {

std::vector<std::string> Normalize(std::vector<std::string> args) {
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  return NormalizeFlagNames(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE("dashes in flag names become underscores, values are untouched") {
  auto args = Normalize({"prog", "--test-data-dir=/a-b", "--test-max-queue", "-3", "--test-quiet",
                         "pos-arg", "--", "--x-y"});
  CHECK(args == std::vector<std::string>{"prog", "--test_data_dir=/a-b", "--test_max_queue", "-3",
                                         "--test_quiet", "pos-arg", "--", "--x-y"});
}

TEST_CASE("flag checks name unknown flags and bad values as written") {
  CHECK(CheckFlags(Normalize({"prog", "--test-data-dir", "/d", "--test-quiet"})).empty());
  CHECK(CheckFlags(Normalize({"prog", "--notest-quiet"})).empty());
  CHECK(CheckFlags(Normalize({"prog", "--test-max-queues=3"})) == "unknown flag --test-max-queues");
  CHECK_THAT(CheckFlags(Normalize({"prog", "--test-max-queue=many"})),
             Catch::StartsWith("--test-max-queue: "));
  CHECK(CheckFlags(Normalize({"prog", "--test-data-dir"})) == "--test-data-dir needs a value");
}

}  // namespace
}  // namespace kiln
