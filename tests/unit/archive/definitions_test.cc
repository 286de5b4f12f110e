#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::OpenArchive;
using archive_test::TempDir;

v1::Definition MakeDefinition(const std::string& name, const std::string& op_type) {
  v1::Definition def;
  def.set_name(name);
  def.set_op_type(op_type);
  def.set_reference("def run(a):\n    return a\n");
  v1::Axis* axis = def.add_axes();
  axis->set_name("M");
  return def;
}

std::vector<v1::Workload> MakeWorkloads(const std::vector<std::string>& uuids) {
  std::vector<v1::Workload> workloads;
  for (size_t i = 0; i < uuids.size(); ++i) {
    v1::Workload w;
    w.set_uuid(uuids[i]);
    v1::AxisValue* m = w.add_axes();
    m->set_name("M");
    m->set_value(static_cast<int64_t>(i + 1) * 128);
    workloads.push_back(w);
  }
  return workloads;
}

std::vector<std::string> Uuids(const std::vector<v1::Workload>& workloads) {
  std::vector<std::string> uuids;
  for (const auto& w : workloads) uuids.push_back(w.uuid());
  return uuids;
}

TEST_CASE("workloads come back in the order they were stored") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(
      archive
          ->PutDefinition(MakeDefinition("gemm", "gemm"), MakeWorkloads({"zz", "aa", "mm"}), false)
          .ok());
  auto workloads = archive->GetWorkloads("gemm");
  REQUIRE(workloads.ok());
  CHECK(Uuids(*workloads) == std::vector<std::string>{"zz", "aa", "mm"});
  CHECK((*workloads)[1].axes(0).value() == 256);
  auto def = archive->GetDefinition("gemm");
  REQUIRE(def.ok());
  CHECK(def->reference() == "def run(a):\n    return a\n");
}

TEST_CASE("putting a definition replaces it and its workload list") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(
      archive->PutDefinition(MakeDefinition("gemm", "gemm"), MakeWorkloads({"a", "b", "c"}), true)
          .ok());
  v1::Definition replacement = MakeDefinition("gemm", "gemm_v2");
  replacement.mutable_native_reference()->add_sources()->set_path("ref.cc");
  REQUIRE(archive->PutDefinition(replacement, MakeWorkloads({"c", "d"}), false).ok());

  auto workloads = archive->GetWorkloads("gemm");
  REQUIRE(workloads.ok());
  CHECK(Uuids(*workloads) == std::vector<std::string>{"c", "d"});
  auto list = archive->ListDefinitions();
  REQUIRE(list.ok());
  REQUIRE(list->definitions_size() == 1);
  CHECK(list->definitions(0).op_type() == "gemm_v2");
  CHECK(list->definitions(0).workload_count() == 2);
  CHECK_FALSE(list->definitions(0).builtin());
  CHECK(list->definitions(0).has_native_reference());
}

TEST_CASE("a definition with duplicate workload uuids is refused and nothing changes") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->PutDefinition(MakeDefinition("gemm", "gemm"), MakeWorkloads({"a", "b"}), false)
              .ok());
  absl::Status status =
      archive->PutDefinition(MakeDefinition("gemm", "other"), MakeWorkloads({"x", "x"}), false);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("workloads[1].uuid"));
  auto workloads = archive->GetWorkloads("gemm");
  REQUIRE(workloads.ok());
  CHECK(Uuids(*workloads) == std::vector<std::string>{"a", "b"});
  auto def = archive->GetDefinition("gemm");
  REQUIRE(def.ok());
  CHECK(def->op_type() == "gemm");
}

TEST_CASE("definitions are listed by name with counts and flags") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(
      archive->PutDefinition(MakeDefinition("rmsnorm", "norm"), MakeWorkloads({"a"}), true).ok());
  REQUIRE(archive->PutDefinition(MakeDefinition("gemm", "gemm"), {}, false).ok());
  auto list = archive->ListDefinitions();
  REQUIRE(list.ok());
  REQUIRE(list->definitions_size() == 2);
  CHECK(list->definitions(0).name() == "gemm");
  CHECK(list->definitions(0).workload_count() == 0);
  CHECK(list->definitions(1).name() == "rmsnorm");
  CHECK(list->definitions(1).workload_count() == 1);
  CHECK(list->definitions(1).builtin());
  CHECK_FALSE(list->definitions(1).has_native_reference());
}

TEST_CASE("an unknown definition is NOT_FOUND") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  CHECK(archive->GetDefinition("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK(archive->GetWorkloads("nope").status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
