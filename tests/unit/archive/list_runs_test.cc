#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::OpenArchive;
using archive_test::TempDir;

// 30 finished runs over two definitions and three statuses; several share a creation time so
// that pagination must break ties by id.
void Populate(Archive& archive) {
  const v1::EvaluationStatus statuses[] = {v1::PASSED, v1::COMPILE_ERROR, v1::TIMEOUT};
  std::vector<v1::Run> runs;
  for (int i = 0; i < 30; ++i) {
    v1::Run run = MakeRun("run-" + std::to_string(100 + i), i % 2 == 0 ? "gemm" : "rmsnorm",
                          1000 + (i / 3) * 10);
    run.set_state(v1::RUN_DONE);
    run.set_status(statuses[i % 3]);
    runs.push_back(run);
  }
  REQUIRE(archive.ImportRuns(runs).ok());
}

std::vector<v1::RunSummary> ListAll(Archive& archive, RunFilter filter) {
  std::vector<v1::RunSummary> all;
  for (int pages = 0; pages < 100; ++pages) {
    auto page = archive.ListRuns(filter);
    REQUIRE(page.ok());
    CHECK(page->runs_size() <= filter.limit);
    all.insert(all.end(), page->runs().begin(), page->runs().end());
    if (page->next_page_token().empty()) return all;
    filter.page_token = page->next_page_token();
  }
  FAIL("pagination did not end");
  return all;
}

bool NewerFirst(const v1::RunSummary& a, const v1::RunSummary& b) {
  return a.created_unix_ms() > b.created_unix_ms() ||
         (a.created_unix_ms() == b.created_unix_ms() && a.run_id() > b.run_id());
}

TEST_CASE("runs are listed newest first") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  Populate(*archive);
  auto page = archive->ListRuns({});
  REQUIRE(page.ok());
  REQUIRE(page->runs_size() == 30);
  CHECK(page->next_page_token().empty());
  for (int i = 1; i < page->runs_size(); ++i) CHECK(NewerFirst(page->runs(i - 1), page->runs(i)));
}

TEST_CASE("pages cover every run exactly once, in order") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  Populate(*archive);
  for (int limit : {1, 4, 7, 29, 30}) {
    INFO("limit " << limit);
    RunFilter filter;
    filter.limit = limit;
    std::vector<v1::RunSummary> all = ListAll(*archive, filter);
    std::set<std::string> ids;
    for (const auto& run : all) ids.insert(run.run_id());
    CHECK(all.size() == 30);
    CHECK(ids.size() == 30);
    for (size_t i = 1; i < all.size(); ++i) CHECK(NewerFirst(all[i - 1], all[i]));
  }
}

TEST_CASE("runs added between pages cause no duplicates or omissions of older runs") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  Populate(*archive);
  RunFilter filter;
  filter.limit = 10;
  auto first = archive->ListRuns(filter);
  REQUIRE(first.ok());
  REQUIRE(archive->CreateRun(MakeRun("run-new", "gemm", 99999)).ok());
  filter.page_token = first->next_page_token();
  std::vector<v1::RunSummary> rest = ListAll(*archive, filter);
  std::set<std::string> ids;
  for (const auto& run : first->runs()) ids.insert(run.run_id());
  for (const auto& run : rest) CHECK(ids.insert(run.run_id()).second);
  CHECK(ids.size() == 30);
  CHECK(ids.count("run-new") == 0);
}

TEST_CASE("listing filters by definition and by status") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  Populate(*archive);
  RunFilter by_definition;
  by_definition.definition = "gemm";
  by_definition.limit = 4;
  auto gemm = ListAll(*archive, by_definition);
  CHECK(gemm.size() == 15);
  for (const auto& run : gemm) CHECK(run.definition() == "gemm");

  RunFilter by_status;
  by_status.status = v1::TIMEOUT;
  by_status.limit = 3;
  auto timeouts = ListAll(*archive, by_status);
  CHECK(timeouts.size() == 10);
  for (const auto& run : timeouts) CHECK(run.status() == v1::TIMEOUT);

  RunFilter both;
  both.definition = "rmsnorm";
  both.status = v1::PASSED;
  both.limit = 2;
  auto passed = ListAll(*archive, both);
  CHECK(passed.size() == 5);
  for (const auto& run : passed) {
    CHECK(run.definition() == "rmsnorm");
    CHECK(run.status() == v1::PASSED);
  }
}

TEST_CASE("a limit outside 1..1000 is refused and named") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  for (int limit : {-1, 1001}) {
    RunFilter filter;
    filter.limit = limit;
    auto page = archive->ListRuns(filter);
    REQUIRE(!page.ok());
    CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(page.status().message()), Catch::Contains("limit"));
  }
  RunFilter largest;
  largest.limit = 1000;
  CHECK(archive->ListRuns(largest).ok());
}

TEST_CASE("a limit of zero means the default page of 50") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  std::vector<v1::Run> runs;
  for (int i = 0; i < 60; ++i) runs.push_back(MakeRun("r" + std::to_string(i), "gemm", i + 1));
  REQUIRE(archive->ImportRuns(runs).ok());
  RunFilter filter;
  filter.limit = 0;
  auto page = archive->ListRuns(filter);
  REQUIRE(page.ok());
  CHECK(page->runs_size() == 50);
  CHECK_FALSE(page->next_page_token().empty());
}

TEST_CASE("a malformed page token is refused and named") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  RunFilter filter;
  filter.page_token = "garbage";
  auto page = archive->ListRuns(filter);
  REQUIRE(!page.ok());
  CHECK(page.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(page.status().message()), Catch::Contains("page_token"));
}

}  // namespace
}  // namespace kiln
