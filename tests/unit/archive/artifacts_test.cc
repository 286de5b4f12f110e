#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "harness/common/sha256.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::OpenArchive;
using archive_test::QueryInt;
using archive_test::TempDir;

TEST_CASE("identical artifacts are stored once") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1)).ok());
  REQUIRE(archive->CreateRun(MakeRun("run-2", "gemm", 2)).ok());
  // Each run has its own main.cc and the same include/common.h: three distinct blobs.
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM blobs") == 3);
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM artifacts") == 4);

  auto first = archive->PutArtifact("run-1", "worker_log", "worker.log", "same bytes");
  auto second = archive->PutArtifact("run-2", "worker_log", "worker.log", "same bytes");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first == *second);
  CHECK(*first == Sha256Hex("same bytes"));
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM blobs") == 4);

  auto content = archive->GetArtifact(*first);
  REQUIRE(content.ok());
  CHECK(*content == "same bytes");
}

TEST_CASE("artifacts hold arbitrary bytes, empty ones included") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1)).ok());
  const std::string binary("\0\x01\xff\x00z", 5);
  for (const std::string& bytes : {binary, std::string()}) {
    auto sha = archive->PutArtifact("run-1", "binary", "lib.so", bytes);
    REQUIRE(sha.ok());
    auto content = archive->GetArtifact(*sha);
    REQUIRE(content.ok());
    CHECK(*content == bytes);
  }
  // The second put replaced the first under the same (kind, name).
  auto run = archive->GetRun("run-1", false);
  REQUIRE(run.ok());
  int binaries = 0;
  for (const auto& ref : run->artifacts()) binaries += ref.kind() == "binary" ? 1 : 0;
  CHECK(binaries == 1);
}

TEST_CASE("an artifact of an unknown run or an unknown hash is NOT_FOUND") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  auto put = archive->PutArtifact("nope", "binary", "lib.so", "x");
  CHECK(put.status().code() == absl::StatusCode::kNotFound);
  auto get = archive->GetArtifact(Sha256Hex("never stored"));
  CHECK(get.status().code() == absl::StatusCode::kNotFound);
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM blobs") == 0);  // the failed put rolled back
}

TEST_CASE("settings are absent until put and then replaced") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  auto missing = archive->GetSetting("server_secret");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  REQUIRE(archive->PutSetting("server_secret", "one").ok());
  REQUIRE(archive->PutSetting("server_secret", "two").ok());
  auto value = archive->GetSetting("server_secret");
  REQUIRE(value.ok());
  REQUIRE(value->has_value());
  CHECK(**value == "two");
}

}  // namespace
}  // namespace kiln
