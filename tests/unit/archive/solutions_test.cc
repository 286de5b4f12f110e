// The solution registry as the archive keeps it.
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::OpenArchive;
using archive_test::TempDir;

void PutDefinition(Archive& archive, const std::string& name) {
  v1::Definition def;
  def.set_name(name);
  def.set_op_type("gemm");
  REQUIRE(archive.PutDefinition(def, {}, false).ok());
}

v1::Solution Baseline(const std::string& definition, const std::string& content) {
  v1::Solution s;
  s.set_name("flashinfer_wrapper");
  s.set_definition(definition);
  s.set_author("flashinfer");
  s.mutable_spec()->set_language("python");
  s.mutable_spec()->set_entry_point("main.py::run");
  v1::SourceFile* f = s.add_sources();
  f->set_path("main.py");
  f->set_content(content);
  return s;
}

TEST_CASE("the same content under a name is unchanged, other content a conflict unless replaced") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  PutDefinition(*archive, "gemm");
  auto first = archive->PutSolution("fi", Baseline("gemm", "v1"), false);
  REQUIRE(first.ok());
  CHECK(first->outcome() == "created");
  CHECK(first->solution().sha256().size() == 64);
  CHECK(first->solution().language() == "python");

  auto again = archive->PutSolution("fi", Baseline("gemm", "v1"), false);
  REQUIRE(again.ok());
  CHECK(again->outcome() == "unchanged");
  CHECK(again->solution().created_unix_ms() == first->solution().created_unix_ms());

  auto other = archive->PutSolution("fi", Baseline("gemm", "v2"), false);
  CHECK(absl::IsAlreadyExists(other.status()));
  CHECK_THAT(std::string(other.status().message()), Catch::StartsWith("name: solution 'fi'"));
  CHECK(archive->GetSolution("gemm", "fi")->sources(0).content() == "v1");

  auto replaced = archive->PutSolution("fi", Baseline("gemm", "v2"), true);
  REQUIRE(replaced.ok());
  CHECK(replaced->outcome() == "replaced");
  CHECK(replaced->solution().sha256() != first->solution().sha256());
  CHECK(archive->GetSolution("gemm", "fi")->sources(0).content() == "v2");
}

TEST_CASE("solutions are kept per definition and survive a reopen") {
  TempDir tmp;
  {
    auto archive = OpenArchive(tmp.path());
    PutDefinition(*archive, "gemm");
    PutDefinition(*archive, "rmsnorm");
    REQUIRE(archive->PutSolution("b", Baseline("gemm", "g"), false).ok());
    REQUIRE(archive->PutSolution("a", Baseline("rmsnorm", "r"), false).ok());
    // The same name under another definition is another solution.
    REQUIRE(archive->PutSolution("a", Baseline("gemm", "g2"), false).ok());
  }
  auto archive = OpenArchive(tmp.path());
  auto all = archive->ListSolutions("");
  REQUIRE(all.ok());
  REQUIRE(all->solutions_size() == 3);
  CHECK(all->solutions(0).definition() == "gemm");
  CHECK(all->solutions(0).name() == "a");
  CHECK(all->solutions(1).name() == "b");
  CHECK(all->solutions(2).definition() == "rmsnorm");
  auto gemm = archive->ListSolutions("gemm");
  REQUIRE(gemm.ok());
  CHECK(gemm->solutions_size() == 2);
  CHECK(archive->GetSolution("rmsnorm", "a")->sources(0).content() == "r");
}

TEST_CASE("a solution of an unregistered definition, or a missing one, is NOT_FOUND") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  auto put = archive->PutSolution("fi", Baseline("nope", "x"), false);
  CHECK(absl::IsNotFound(put.status()));
  CHECK_THAT(std::string(put.status().message()), Catch::StartsWith("solution.definition:"));
  auto get = archive->GetSolution("nope", "fi");
  CHECK(absl::IsNotFound(get.status()));
  CHECK(std::string(get.status().message()) ==
        "no solution 'fi' is registered for definition 'nope'");
  CHECK(archive->ListSolutions("")->solutions_size() == 0);
}

}  // namespace
}  // namespace kiln
