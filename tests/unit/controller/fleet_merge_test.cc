// MergeRunPages: the fleet front door's ListRuns, one page from the pages of several harnesses.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "controller/fleet/merge.h"
#include "controller/harness_pool.h"
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

namespace kiln::controller {
namespace {

v1::LeaderboardEntry Entry(const std::string& principal, const std::string& run, int64_t created,
                           double latency, double score, int passed, bool designated = false) {
  v1::LeaderboardEntry e;
  e.set_principal(principal);
  e.set_run_id(run);
  e.set_created_unix_ms(created);
  e.set_mean_latency_ms(latency);
  e.set_score(score);
  e.set_passed_runs(passed);
  e.set_designated(designated);
  return e;
}

v1::Leaderboard Board(const std::string& rule, std::vector<v1::LeaderboardEntry> entries) {
  v1::Leaderboard b;
  b.set_definition("d");
  b.set_mode("official");
  b.set_rule(rule);
  for (auto& e : entries) *b.add_entries() = std::move(e);
  return b;
}

TEST_CASE("the fleet leaderboard takes each team's latest run wherever it ran, a designated one "
          "first, and adds up its passed runs") {
  absl::StatusOr<v1::Leaderboard> merged = MergeLeaderboards(
      {Board("latest", {Entry("red", "r-old", 100, 2.0, 1.5, 2), Entry("blue", "b-1", 300, 1.0, 3.0, 1)}),
       Board("latest", {Entry("red", "r-new", 200, 4.0, 0.5, 1)}),
       Board("latest", {Entry("blue", "b-des", 50, 3.0, 1.0, 4, /*designated=*/true)})});
  REQUIRE(merged.ok());
  REQUIRE(merged->entries_size() == 2);
  // Ranked by score: red's newest (0.5) below blue's designated (1.0).
  CHECK(merged->entries(0).principal() == "blue");
  CHECK(merged->entries(0).run_id() == "b-des");
  CHECK(merged->entries(0).passed_runs() == 5);
  CHECK(merged->entries(1).run_id() == "r-new");
  CHECK(merged->entries(1).passed_runs() == 3);
  CHECK(merged->rule() == "latest");
}

TEST_CASE("rule best takes each team's fastest run over all harnesses") {
  absl::StatusOr<v1::Leaderboard> merged = MergeLeaderboards(
      {Board("best", {Entry("red", "slow", 100, 2.0, 1.0, 1)}),
       Board("best", {Entry("red", "fast", 200, 1.0, 2.0, 1)})});
  REQUIRE(merged.ok());
  REQUIRE(merged->entries_size() == 1);
  CHECK(merged->entries(0).run_id() == "fast");
  CHECK(merged->entries(0).passed_runs() == 2);
}

TEST_CASE("boards of different modes are not merged: the error says to name the mode") {
  v1::Leaderboard other = Board("latest", {});
  other.set_mode("kernelbench");
  absl::StatusOr<v1::Leaderboard> merged = MergeLeaderboards({Board("latest", {}), other});
  REQUIRE_FALSE(merged.ok());
  CHECK(merged.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(merged.status().message()).find("--mode") != std::string::npos);
}

TEST_CASE("a fleet answer names each harness it lacks, with its state, for how long and why") {
  auto health = [](std::string address, HarnessState state, int64_t since, std::string error) {
    HarnessHealth h;
    h.address = std::move(address);
    h.state = state;
    h.since_unix_ms = since;
    h.last_error = std::move(error);
    return h;
  };
  const std::vector<HarnessHealth> fleet = {
      health("10.0.0.1:7777", HarnessState::kHealthy, 1'000, ""),
      health("10.0.0.2:7777", HarnessState::kGone, 58'000, "connection refused"),
      health("10.0.0.3:7777", HarnessState::kSuspect, 99'500, "deadline exceeded"),
      health("10.0.0.4:7777", HarnessState::kHealthy, 90'000, ""),
  };
  // 10.0.0.4 is healthy but had not taken the journal, so it was not asked.
  const std::vector<std::string> left_out =
      LeftOutHarnesses(fleet, {"10.0.0.1:7777"}, 100'000);
  CHECK(left_out == std::vector<std::string>{
                        "10.0.0.2:7777: gone for 42 s (connection refused)",
                        "10.0.0.3:7777: suspect for 0 s (deadline exceeded)",
                        "10.0.0.4:7777: healthy for 10 s (still taking what it missed)"});
  CHECK(LeftOutHarnesses(fleet, {"10.0.0.1:7777", "10.0.0.2:7777", "10.0.0.3:7777",
                                 "10.0.0.4:7777"},
                         100'000)
            .empty());
}

TEST_CASE("the fleet's node info sums the harnesses' counts, lists their devices, runs what any "
          "runs") {
  v1::NodeInfo a, b;
  a.set_version("0.1.0");
  a.add_backends("host");
  a.set_queue_depth(2);
  a.set_running(1);
  a.set_runs_archived(10);
  (*a.mutable_languages())["python"] = "unavailable: python3 cannot import torch";
  (*a.mutable_unavailable_backends())["cuda"] = "no CUDA GPU on this node";
  a.set_profiling("unavailable: no CUDA GPU on this node");
  a.add_devices()->set_name("cpu");
  b.add_backends("cuda");
  b.add_backends("host");
  b.set_queue_depth(3);
  b.set_runs_archived(5);
  (*b.mutable_languages())["python"] = "runs on cuda, host";
  b.set_profiling("available: ncu at /usr/local/cuda/bin/ncu");
  b.add_devices()->set_name("H200");
  const v1::NodeInfo merged = MergeNodeInfos({a, b}, {"10.0.0.1:7777", "10.0.0.2:7777"});
  CHECK(merged.version() == "0.1.0");
  CHECK(merged.queue_depth() == 5);
  CHECK(merged.running() == 1);
  CHECK(merged.runs_archived() == 15);
  CHECK(std::vector<std::string>(merged.backends().begin(), merged.backends().end()) ==
        std::vector<std::string>{"host", "cuda"});
  CHECK(merged.unavailable_backends().empty());  // cuda runs on one of them
  CHECK(merged.languages().at("python") == "runs on cuda, host");
  CHECK(merged.profiling() == "available: ncu at /usr/local/cuda/bin/ncu");
  REQUIRE(merged.devices_size() == 2);
  CHECK(merged.devices(0).harness() == "10.0.0.1:7777");
  CHECK(merged.devices(1).name() == "H200");
  CHECK(merged.devices(1).harness() == "10.0.0.2:7777");

  HarnessHealth up, down;
  up.address = "10.0.0.1:7777";
  up.state = HarnessState::kHealthy;
  up.since_unix_ms = 40'000;
  down.address = "10.0.0.3:7777";
  down.state = HarnessState::kGone;
  down.since_unix_ms = 90'000;
  down.last_error = "connection refused";
  CHECK(FleetHarnesses({up, down}, {"10.0.0.1:7777"}, 100'000) ==
        std::vector<std::string>{"10.0.0.1:7777: healthy for 60 s",
                                 "10.0.0.3:7777: gone for 10 s (connection refused)"});
}

}  // namespace
}  // namespace kiln::controller
