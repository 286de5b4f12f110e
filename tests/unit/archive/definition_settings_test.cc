// The settings an operator gives a definition, as the archive keeps them.
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::OpenArchive;
using archive_test::TempDir;

v1::Definition Gemm() {
  v1::Definition def;
  def.set_name("gemm");
  def.set_op_type("gemm");
  def.add_axes()->set_name("M");
  return def;
}

v1::DefinitionSettings Moe() {
  v1::DefinitionSettings s;
  s.set_atol(1);
  s.set_rtol(0.3);
  s.set_required_matched_ratio(0.9);
  return s;
}

TEST_CASE("settings are merged field by field, reset clears them, and they survive a reopen") {
  TempDir tmp;
  {
    auto archive = OpenArchive(tmp.path());
    REQUIRE(archive->PutDefinition(Gemm(), {}, false).ok());
    CHECK(archive->GetDefinitionSettings("gemm")->ByteSizeLong() == 0);
    REQUIRE(archive->UpdateDefinitionSettings("gemm", Moe(), false).ok());
    v1::DefinitionSettings counts;
    counts.set_iterations(5);
    counts.set_warmup(0);
    auto stored = archive->UpdateDefinitionSettings("gemm", counts, false);
    REQUIRE(stored.ok());
    CHECK(stored->atol() == 1);
    CHECK(stored->iterations() == 5);
    CHECK(stored->warmup() == 0);  // zero is a setting, not "unset"
    CHECK_FALSE(stored->has_trials());
  }
  auto archive = OpenArchive(tmp.path());
  auto stored = archive->GetDefinitionSettings("gemm");
  REQUIRE(stored.ok());
  CHECK(stored->rtol() == 0.3);
  CHECK(stored->required_matched_ratio() == 0.9);
  CHECK(stored->iterations() == 5);
  CHECK(stored->has_warmup());
  v1::DefinitionSettings trials;
  trials.set_trials(2);
  auto reset = archive->UpdateDefinitionSettings("gemm", trials, /*reset=*/true);
  REQUIRE(reset.ok());
  CHECK_FALSE(reset->has_atol());
  CHECK(reset->trials() == 2);
  REQUIRE(archive->UpdateDefinitionSettings("gemm", {}, true).ok());
  CHECK(archive->GetDefinitionSettings("gemm")->ByteSizeLong() == 0);
}

TEST_CASE("registering a definition again keeps its settings") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->PutDefinition(Gemm(), {}, false).ok());
  REQUIRE(archive->UpdateDefinitionSettings("gemm", Moe(), false).ok());
  v1::Definition changed = Gemm();
  changed.set_description("a new version of the dataset");
  REQUIRE(archive->PutDefinition(changed, {}, false).ok());
  CHECK(archive->GetDefinitionSettings("gemm")->atol() == 1);
  auto listed = archive->ListDefinitions();
  REQUIRE(listed.ok());
  REQUIRE(listed->definitions_size() == 1);
  CHECK(listed->definitions(0).settings().atol() == 1);
  CHECK_FALSE(listed->definitions(0).settings().has_iterations());
}

TEST_CASE("settings of an unknown definition are NOT_FOUND and nothing is stored") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  CHECK(absl::IsNotFound(archive->UpdateDefinitionSettings("nope", Moe(), false).status()));
  CHECK(absl::IsNotFound(archive->GetDefinitionSettings("nope").status()));
  CHECK(archive_test::QueryInt(tmp.db(), "SELECT COUNT(*) FROM definition_settings") == 0);
}

TEST_CASE("a change of tolerance clears the integrity warning found at the old one") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->PutDefinition(Gemm(), {}, false).ok());
  REQUIRE(archive->PutSetting("integrity_warning:gemm", "zeros pass").ok());
  v1::DefinitionSettings counts;
  counts.set_iterations(5);
  REQUIRE(archive->UpdateDefinitionSettings("gemm", counts, false).ok());
  CHECK(archive->GetSetting("integrity_warning:gemm")->has_value());  // counts: still valid
  REQUIRE(archive->UpdateDefinitionSettings("gemm", Moe(), false).ok());
  CHECK_FALSE(archive->GetSetting("integrity_warning:gemm")->has_value());
}

}  // namespace
}  // namespace kiln
