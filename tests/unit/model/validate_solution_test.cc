#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "harness/model/validate.h"

namespace kiln {
namespace {

// The message starts with the field path, as validate.h promises.
void CheckInvalid(const absl::Status& s, const std::string& message_prefix) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StartsWith(std::string(s.message()), message_prefix));
}

v1::Definition Gemm() {
  v1::Definition def;
  def.set_name("gemm_n128_k2048");
  return def;
}

v1::Solution Candidate() {
  v1::Solution s;
  s.set_name("gemm_v1");
  s.set_definition("gemm_n128_k2048");
  s.mutable_spec()->set_language("cuda");
  s.mutable_spec()->set_entry_point("src/gemm.cu::gemm");
  v1::SourceFile* main = s.add_sources();
  main->set_path("src/gemm.cu");
  main->set_content("extern \"C\" int gemm() { return 0; }");
  v1::SourceFile* header = s.add_sources();
  header->set_path("src/tile.cuh");
  header->set_content("#pragma once");
  return s;
}

TEST_CASE("a well-formed solution validates") {
  CHECK(ValidateSolution(Gemm(), Candidate(), Limits{}).ok());
  v1::Solution unnamed_definition = Candidate();
  unnamed_definition.clear_definition();
  CHECK(ValidateSolution(Gemm(), unnamed_definition, Limits{}).ok());
  for (const char* language : {"cpp", "cuda", "opencl"}) {
    v1::Solution s = Candidate();
    s.mutable_spec()->set_language(language);
    CHECK(ValidateSolution(Gemm(), s, Limits{}).ok());
  }
  for (const char* language : {"python", "triton"}) {
    v1::Solution s = Candidate();
    s.mutable_spec()->set_language(language);
    s.mutable_sources(0)->set_path("src/gemm.py");
    s.mutable_spec()->set_entry_point("src/gemm.py::gemm");
    CHECK(ValidateSolution(Gemm(), s, Limits{}).ok());
  }
}

TEST_CASE("a python or triton solution's entry point must name a .py file") {
  for (const char* language : {"python", "triton"}) {
    v1::Solution s = Candidate();
    s.mutable_spec()->set_language(language);
    absl::Status status = ValidateSolution(Gemm(), s, Limits{});
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(status.message()),
               Catch::StartsWith("solution.spec.entry_point: 'src/gemm.cu' is not a .py file"));
  }
}

TEST_CASE("a KernelBench ModelNew file for a definition that is not KernelBench is refused") {
  v1::Solution s = Candidate();
  s.mutable_spec()->set_language("python");
  s.mutable_sources(0)->set_path("model_new.py");
  s.mutable_spec()->set_entry_point("model_new.py::ModelNew");
  s.mutable_spec()->set_destination_passing_style(false);
  absl::Status status = ValidateSolution(Gemm(), s, Limits{});
  CheckInvalid(status, "solution.spec.entry_point: 'model_new.py::ModelNew' is a KernelBench "
                       "ModelNew class, and definition 'gemm_n128_k2048' is not a KernelBench "
                       "problem");
  // The same file for a KernelBench problem is what such a problem takes.
  v1::Definition problem = Gemm();
  problem.mutable_kernelbench()->set_level(1);
  CHECK(ValidateSolution(problem, s, Limits{}).ok());
}

TEST_CASE("solution errors start with the path of the field") {
  v1::Solution s = Candidate();
  SECTION("another definition") {
    s.set_definition("gemm_n256_k7168");
    absl::Status st = ValidateSolution(Gemm(), s, Limits{});
    CHECK(st.message() ==
          "solution.definition: 'gemm_n256_k7168' but evaluating "
          "'gemm_n128_k2048'");
  }
  SECTION("an unknown language") {
    s.mutable_spec()->set_language("rust");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.spec.language: 'rust'");
  }
  SECTION("no name") {
    s.clear_name();
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.name: ");
  }
  SECTION("entry point without a function") {
    s.mutable_spec()->set_entry_point("src/gemm.cu");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.spec.entry_point: expected");
  }
  SECTION("entry point with two separators") {
    s.mutable_spec()->set_entry_point("src/gemm.cu::ns::gemm");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.spec.entry_point: expected");
  }
  SECTION("entry point naming something that is not a function") {
    s.mutable_spec()->set_entry_point("src/gemm.cu::gemm(int)");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.spec.entry_point: 'gemm(int)'");
  }
  SECTION("entry point naming a file not among the sources") {
    s.mutable_spec()->set_entry_point("gemm.cu::gemm");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}),
                 "solution.spec.entry_point: 'gemm.cu' is not among the sources");
  }
  SECTION("an absolute source path") {
    s.mutable_sources(1)->set_path("/etc/passwd");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: absolute");
  }
  SECTION("a source path climbing out") {
    s.mutable_sources(1)->set_path("src/../../escape.cuh");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: '..'");
  }
  SECTION("an empty source path") {
    s.mutable_sources(1)->set_path("");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: empty");
  }
  SECTION("a source path naming a folder") {
    s.mutable_sources(1)->set_path("src/");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: ");
  }
  SECTION("a duplicate source path") {
    s.mutable_sources(1)->set_path("src/gemm.cu");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: duplicate");
  }
  SECTION("a duplicate source path in disguise") {
    s.mutable_sources(1)->set_path("./src//gemm.cu");
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources[1].path: duplicate");
  }
  SECTION("no sources") {
    s.clear_sources();
    CheckInvalid(ValidateSolution(Gemm(), s, Limits{}), "solution.sources: ");
  }
}

TEST_CASE("sources over the size limit are refused with both sizes") {
  v1::Solution s = Candidate();
  s.mutable_sources(1)->set_content(std::string(1258291 - s.sources(0).content().size(), 'x'));
  absl::Status st = ValidateSolution(Gemm(), s, Limits{});
  CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  CHECK(st.message() == "solution.sources: 1258291 bytes (1.2 MiB), limit 1048576 bytes");
}

TEST_CASE("too many source files are refused") {
  v1::Solution s = Candidate();
  Limits limits;
  limits.max_source_files = 2;
  CHECK(ValidateSolution(Gemm(), s, limits).ok());
  s.add_sources()->set_path("src/extra.cuh");
  CheckInvalid(ValidateSolution(Gemm(), s, limits), "solution.sources: 3 files, limit 2");
}

TEST_CASE("an entry point splits into file and function") {
  absl::StatusOr<std::pair<std::string, std::string>> ep = SplitEntryPoint("dir/main.py::run");
  REQUIRE(ep.ok());
  CHECK(ep->first == "dir/main.py");
  CHECK(ep->second == "run");
  for (const char* bad : {"main.py", "::run", "main.py::", "a::b::c", ""}) {
    INFO(bad);
    CHECK(SplitEntryPoint(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace kiln
