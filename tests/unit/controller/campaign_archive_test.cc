#include "controller/campaign_archive.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "controller/evidence.h"
#include "controller/loop_state.h"

namespace kiln::controller {
namespace {

struct TempDir {
  TempDir() {
    path =
        std::filesystem::temp_directory_path() /
        ("kiln-controller-archive-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
  static inline int counter = 0;
};

CampaignRow Row(const std::string& id) {
  CampaignRow r;
  r.id = id;
  r.name = "n";
  r.definition = "d";
  r.spec_yaml = "definition: d";
  r.spec_files_json = "{}";
  r.created_unix_ms = NowUnixMs();
  return r;
}

TEST_CASE("the controller archive keeps campaigns across reopening") {
  TempDir dir;
  {
    auto archive = CampaignArchive::Open(dir.path);
    REQUIRE(archive.ok());
    REQUIRE((*archive)->CreateCampaign(Row("c1")).ok());
    CampaignRow r = Row("c1");
    r.best_latency_ms = 0.5;
    r.state_json = R"({"round":3})";
    REQUIRE((*archive)->SaveCampaign(r).ok());
  }
  auto archive = CampaignArchive::Open(dir.path);
  REQUIRE(archive.ok());
  auto row = (*archive)->GetCampaign("c1");
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  CHECK((*row)->best_latency_ms == 0.5);
  CHECK(StateFromJson((*row)->state_json).round == 3);
  auto running = (*archive)->RunningCampaignIds();
  REQUIRE(running.ok());
  CHECK(*running == std::vector<std::string>{"c1"});
  auto missing = (*archive)->GetCampaign("nope");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
}

TEST_CASE("events are numbered per campaign and read after a sequence number") {
  TempDir dir;
  auto archive = CampaignArchive::Open(dir.path);
  REQUIRE(archive.ok());
  REQUIRE((*archive)->CreateCampaign(Row("a")).ok());
  REQUIRE((*archive)->CreateCampaign(Row("b")).ok());
  CHECK(*(*archive)->AddEvent("a", "started", "x") == 1);
  CHECK(*(*archive)->AddEvent("a", "round", "y") == 2);
  CHECK(*(*archive)->AddEvent("b", "started", "z") == 1);
  auto events = (*archive)->EventsAfter("a", 1);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 1);
  CHECK((*events)[0].kind == "round");
}

TEST_CASE("a candidate hash is recorded once per campaign and evaluations are upserted") {
  TempDir dir;
  auto archive = CampaignArchive::Open(dir.path);
  REQUIRE(archive.ok());
  REQUIRE((*archive)->CreateCampaign(Row("c")).ok());
  CandidateRow c;
  c.campaign_id = "c";
  c.hash = "h1";
  c.request_id = 1;
  c.solution_json = "{}";
  REQUIRE((*archive)->AddCandidate(c).ok());
  c.request_id = 2;
  REQUIRE((*archive)->AddCandidate(c).ok());  // ignored
  auto got = (*archive)->GetCandidate("c", "h1");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((*got)->request_id == 1);
  CHECK((*archive)->CandidatesOfRequest(2)->empty());

  EvaluationRow e;
  e.campaign_id = "c";
  e.candidate_hash = "h1";
  e.purpose = "first";
  REQUIRE((*archive)->PutEvaluation(e).ok());
  e.run_id = "r1";
  e.harness = "127.0.0.1:1";
  e.state = "done";
  e.mean_latency_ms = 2;
  REQUIRE((*archive)->PutEvaluation(e).ok());
  auto all = (*archive)->Evaluations("c");
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK((*all)[0].run_id == "r1");
  CHECK((*all)[0].state == "done");
}

TEST_CASE("attempts are recorded as admitted and ended by run id, each once") {
  TempDir dir;
  auto archive = *CampaignArchive::Open(dir.path);
  REQUIRE(archive->CreateCampaign(Row("c1")).ok());
  AttemptRow running;
  running.campaign_id = "c1";
  running.candidate_hash = "h";
  running.purpose = "first";
  running.harness = "10.0.0.1:50051";
  running.run_id = "r1";
  REQUIRE(archive->AddAttempt(running).ok());
  AttemptRow broken = running;  // never admitted: recorded ended at once
  broken.run_id = "";
  broken.outcome = "broken";
  broken.detail = "Socket closed";
  REQUIRE(archive->AddAttempt(broken).ok());
  REQUIRE(archive->EndAttempt("c1", "10.0.0.1:50051", "r1", "abandoned", "gone").ok());
  // Ended already; another harness's run id; another campaign: nothing to end.
  CHECK(absl::IsNotFound(archive->EndAttempt("c1", "10.0.0.1:50051", "r1", "verdict", "")));
  CHECK(absl::IsNotFound(archive->EndAttempt("c1", "10.0.0.2:50051", "r1", "verdict", "")));
  CHECK(absl::IsNotFound(archive->EndAttempt("c2", "10.0.0.1:50051", "r1", "verdict", "")));
  auto attempts = *archive->Attempts("c1");
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].run_id == "r1");
  CHECK(attempts[0].outcome == "abandoned");
  CHECK(attempts[0].detail == "gone");
  CHECK(attempts[0].finished_unix_ms >= attempts[0].started_unix_ms);
  CHECK(attempts[1].outcome == "broken");
  CHECK(attempts[1].finished_unix_ms > 0);
  CHECK(archive->Attempts("c2")->empty());
}

TEST_CASE("loop state survives its JSON form") {
  LoopState s;
  s.round = 4;
  s.incumbent_hash = "abc";
  s.incumbent_summary = Json{{"status", "PASSED"}};
  s.history.push_back({"block the loops", "rejected"});
  s.open_request = 9;
  LoopState back = StateFromJson(StateToJson(s));
  CHECK(back.round == 4);
  CHECK(back.incumbent_hash == "abc");
  CHECK(back.incumbent_summary["status"] == "PASSED");
  REQUIRE(back.history.size() == 1);
  CHECK(back.history[0].outcome == "rejected");
  CHECK(back.open_request == 9);
  CHECK(StateFromJson("not json").round == 0);
}

TEST_CASE("a direction that was rejected is not proposed again while others apply") {
  Json summary = {{"status", "PASSED"},
                  {"workloads", Json::array({{{"axes", "m=64"},
                                              {"status", "PASSED"},
                                              {"latency_ms", 1.0},
                                              {"speedup", 2.0},
                                              {"floor_ms", 0.01},
                                              {"floor_ratio", 100.0}}})}};
  std::string first = ChooseDirection(summary, {});
  CHECK_THAT(first, Catch::Contains("roofline"));
  std::string second = ChooseDirection(summary, {{first, "rejected"}});
  CHECK(second != first);
  // Spills in the kernel resources come first.
  summary["resources"] = Json::array(
      {{{"name", "k"}, {"registers", 64}, {"spill_store_bytes", 16}, {"spill_load_bytes", 8}}});
  CHECK_THAT(ChooseDirection(summary, {}), Catch::Contains("spills"));
}

}  // namespace
}  // namespace kiln::controller
