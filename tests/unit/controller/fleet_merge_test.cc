// MergeRunPages: the fleet front door's ListRuns, one page from the pages of several harnesses.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "controller/fleet/fleet_service.h"
#include "harness/archive/page_token.h"

namespace kiln::controller {
namespace {

v1::ListRunsResponse Page(const std::vector<std::pair<int64_t, std::string>>& runs,
                          bool more = false) {
  v1::ListRunsResponse page;
  for (const auto& [created, id] : runs) {
    v1::RunSummary* r = page.add_runs();
    r->set_created_unix_ms(created);
    r->set_run_id(id);
  }
  if (more) page.set_next_page_token("harness-token");
  return page;
}

std::vector<std::string> Ids(const v1::ListRunsResponse& page) {
  std::vector<std::string> ids;
  for (const v1::RunSummary& r : page.runs()) ids.push_back(r.run_id());
  return ids;
}

TEST_CASE("runs of several harnesses merge newest first, ties broken by run id as a harness does") {
  v1::ListRunsResponse merged =
      MergeRunPages({Page({{300, "c"}, {100, "a"}}), Page({{200, "b"}, {100, "z"}}), Page({})}, 10);
  CHECK(Ids(merged) == std::vector<std::string>{"c", "b", "z", "a"});
  CHECK(merged.next_page_token().empty());
}

TEST_CASE("a merged page stops at the limit and its token names the last run given") {
  v1::ListRunsResponse merged =
      MergeRunPages({Page({{500, "e"}, {300, "c"}}), Page({{400, "d"}, {200, "b"}})}, 3);
  CHECK(Ids(merged) == std::vector<std::string>{"e", "d", "c"});
  REQUIRE_FALSE(merged.next_page_token().empty());
  absl::StatusOr<archive::RunCursor> cursor = archive::DecodePageToken(merged.next_page_token());
  REQUIRE(cursor.ok());
  CHECK(cursor->created_ms == 300);
  CHECK(cursor->run_id == "c");
}

TEST_CASE("a harness with more runs than its page gives the merged page a next token") {
  v1::ListRunsResponse merged = MergeRunPages({Page({{500, "e"}}, /*more=*/true), Page({})}, 5);
  CHECK(Ids(merged) == std::vector<std::string>{"e"});
  REQUIRE_FALSE(merged.next_page_token().empty());
  CHECK(archive::DecodePageToken(merged.next_page_token())->run_id == "e");
}

TEST_CASE("a run two harnesses both list is given once; limit 0 means the default page of 50") {
  std::vector<std::pair<int64_t, std::string>> many;
  for (int i = 0; i < 60; ++i) many.emplace_back(1000 - i, "r" + std::to_string(100 + i));
  v1::ListRunsResponse merged = MergeRunPages({Page(many), Page({{1000, "r100"}})}, 0);
  CHECK(merged.runs_size() == 50);
  CHECK(merged.runs(0).run_id() == "r100");
  CHECK(merged.runs(1).run_id() == "r101");
  CHECK_FALSE(merged.next_page_token().empty());
}

}  // namespace
}  // namespace kiln::controller
