// The names of registered solutions (solution_baseline.h) and the digest that identifies a
// registered document (solution_digest.h).
#include <catch2/catch.hpp>
#include <string>

#include "harness/model/solution_baseline.h"
#include "harness/model/solution_digest.h"

namespace kiln {
namespace {

v1::Solution Sample() {
  v1::Solution s;
  s.set_name("flashinfer_wrapper_9c4b1e");
  s.set_definition("gemm_n128_k2048");
  s.set_author("flashinfer");
  s.mutable_spec()->set_language("python");
  s.mutable_spec()->set_entry_point("main.py::run");
  s.mutable_spec()->add_dependencies("flashinfer");
  s.mutable_spec()->set_destination_passing_style(false);
  v1::SourceFile* f = s.add_sources();
  f->set_path("main.py");
  f->set_content("def run(A, B):\n    return A @ B.T\n");
  return s;
}

TEST_CASE("solution:NAME names a registered solution; other baselines do not") {
  CHECK(SolutionBaselineName("solution:flashinfer_wrapper_9c4b1e") == "flashinfer_wrapper_9c4b1e");
  CHECK(SolutionBaselineName("solution:") == "");
  CHECK_FALSE(SolutionBaselineName("torch_eager").has_value());
  CHECK(SolutionBaseline("x") == "solution:x");
}

TEST_CASE("registry names are letters, digits and _.+- and name the field when not") {
  CHECK(ValidateSolutionName("gpt-5.2_gemm_n128_k2048_cuda_optimized_r7_c0_high", "name").ok());
  CHECK(std::string(ValidateSolutionName("", "--name").message()) == "--name: empty");
  CHECK(std::string(ValidateSolutionName("a/b", "solution.name").message()) ==
        "solution.name: 'a/b' has a character other than letters, digits and _.+-");
  CHECK_FALSE(ValidateSolutionName(std::string(129, 'a'), "name").ok());
}

TEST_CASE("the digest changes with every field of the document and only with them") {
  const std::string base = SolutionDigest(Sample());
  CHECK(base.size() == 64);
  CHECK(SolutionDigest(Sample()) == base);
  v1::Solution s = Sample();
  s.set_author("someone else");
  CHECK(SolutionDigest(s) != base);
  s = Sample();
  s.set_description("prose");
  CHECK(SolutionDigest(s) != base);
  s = Sample();
  s.mutable_spec()->clear_destination_passing_style();  // unset differs from false
  CHECK(SolutionDigest(s) != base);
  s = Sample();
  s.mutable_sources(0)->set_content(s.sources(0).content() + " ");
  CHECK(SolutionDigest(s) != base);
  s = Sample();
  s.mutable_spec()->clear_dependencies();
  s.mutable_spec()->add_target_hardware("flashinfer");  // moved between lists
  CHECK(SolutionDigest(s) != base);
}

}  // namespace
}  // namespace kiln
