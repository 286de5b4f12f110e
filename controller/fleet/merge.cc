#include "controller/fleet/merge.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "controller/harness_pool.h"
#include "harness/archive/page_token.h"
#include "harness/model/leaderboard_order.h"

namespace kiln::controller {
namespace {

constexpr int kDefaultListLimit = 50;  // the harness's default page

// Whether entry `a` is the one a principal's fleet entry should be, over `b`.
bool Preferred(const std::string& rule, const v1::LeaderboardEntry& a,
               const v1::LeaderboardEntry& b) {
  if (rule == "best") {
    if (a.mean_latency_ms() != b.mean_latency_ms()) return a.mean_latency_ms() < b.mean_latency_ms();
    if (a.created_unix_ms() != b.created_unix_ms()) return a.created_unix_ms() < b.created_unix_ms();
    return a.run_id() < b.run_id();
  }
  if (a.designated() != b.designated()) return a.designated();
  if (a.created_unix_ms() != b.created_unix_ms()) return a.created_unix_ms() > b.created_unix_ms();
  return a.run_id() > b.run_id();
}

}  // namespace

v1::ListRunsResponse MergeRunPages(const std::vector<v1::ListRunsResponse>& pages, int limit) {
  if (limit <= 0) limit = kDefaultListLimit;
  std::vector<const v1::RunSummary*> all;
  bool more = false;
  for (const v1::ListRunsResponse& page : pages) {
    for (const v1::RunSummary& run : page.runs()) all.push_back(&run);
    more = more || !page.next_page_token().empty();
  }
  std::sort(all.begin(), all.end(), [](const v1::RunSummary* a, const v1::RunSummary* b) {
    if (a->created_unix_ms() != b->created_unix_ms()) {
      return a->created_unix_ms() > b->created_unix_ms();
    }
    return a->run_id() > b->run_id();
  });
  // One run archived on two harnesses (never by kiln itself; a copied archive) is listed once.
  all.erase(std::unique(all.begin(), all.end(),
                        [](const v1::RunSummary* a, const v1::RunSummary* b) {
                          return a->run_id() == b->run_id();
                        }),
            all.end());
  v1::ListRunsResponse merged;
  const size_t n = std::min(all.size(), static_cast<size_t>(limit));
  for (size_t i = 0; i < n; ++i) *merged.add_runs() = *all[i];
  if (n > 0 && (more || all.size() > n)) {
    const v1::RunSummary& last = *all[n - 1];
    merged.set_next_page_token(
        archive::EncodePageToken({last.created_unix_ms(), last.run_id()}));
  }
  return merged;
}

absl::StatusOr<v1::Leaderboard> MergeLeaderboards(const std::vector<v1::Leaderboard>& boards) {
  v1::Leaderboard merged;
  if (boards.empty()) return merged;
  merged.set_definition(boards[0].definition());
  merged.set_mode(boards[0].mode());
  merged.set_rule(boards[0].rule());
  std::map<std::string, v1::LeaderboardEntry> chosen;  // by principal
  std::map<std::string, int> passed;
  for (const v1::Leaderboard& board : boards) {
    if (board.mode() != merged.mode() || board.rule() != merged.rule()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the harnesses answered for different modes or rules (", merged.mode(), "/",
          merged.rule(), " and ", board.mode(), "/", board.rule(),
          "): name the mode (--mode) so that every harness ranks the same runs"));
    }
    for (const v1::LeaderboardEntry& e : board.entries()) {
      passed[e.principal()] += e.passed_runs();
      auto it = chosen.find(e.principal());
      if (it == chosen.end()) {
        chosen.emplace(e.principal(), e);
      } else if (Preferred(merged.rule(), e, it->second)) {
        it->second = e;
      }
    }
  }
  std::vector<v1::LeaderboardEntry> ranked;
  for (auto& [principal, e] : chosen) {
    e.set_passed_runs(passed[principal]);
    ranked.push_back(std::move(e));
  }
  std::stable_sort(ranked.begin(), ranked.end(), LeaderboardRanksBefore);
  for (v1::LeaderboardEntry& e : ranked) *merged.add_entries() = std::move(e);
  return merged;
}

namespace {

// "ADDRESS: STATE for N s", with why for one that did not answer (`answered` false).
std::string HarnessLine(const HarnessHealth& h, bool answered, int64_t now_unix_ms) {
  const int64_t for_s =
      h.since_unix_ms > 0 ? std::max<int64_t>(0, (now_unix_ms - h.since_unix_ms) / 1000) : 0;
  std::string why;
  if (!answered) {
    why = h.state == HarnessState::kHealthy ? "still taking what it missed" : h.last_error;
  }
  return absl::StrCat(h.address, ": ", HarnessStateName(h.state), " for ", for_s, " s",
                      why.empty() ? "" : absl::StrCat(" (", why, ")"));
}

bool Took(const std::vector<std::string>& took, const std::string& address) {
  return std::find(took.begin(), took.end(), address) != took.end();
}

}  // namespace

std::vector<std::string> LeftOutHarnesses(const std::vector<HarnessHealth>& fleet,
                                          const std::vector<std::string>& took,
                                          int64_t now_unix_ms) {
  std::vector<std::string> out;
  for (const HarnessHealth& h : fleet) {
    if (!Took(took, h.address)) out.push_back(HarnessLine(h, false, now_unix_ms));
  }
  return out;
}

std::vector<std::string> FleetHarnesses(const std::vector<HarnessHealth>& fleet,
                                        const std::vector<std::string>& took,
                                        int64_t now_unix_ms) {
  std::vector<std::string> out;
  for (const HarnessHealth& h : fleet) {
    out.push_back(HarnessLine(h, Took(took, h.address), now_unix_ms));
  }
  return out;
}

v1::NodeInfo MergeNodeInfos(const std::vector<v1::NodeInfo>& infos,
                            const std::vector<std::string>& took) {
  if (infos.empty()) return v1::NodeInfo();
  v1::NodeInfo merged = infos.front();
  merged.clear_devices();
  merged.set_queue_depth(0);
  merged.set_running(0);
  merged.set_runs_archived(0);
  for (size_t i = 0; i < infos.size(); ++i) {
    const v1::NodeInfo& info = infos[i];
    merged.set_queue_depth(merged.queue_depth() + info.queue_depth());
    merged.set_running(merged.running() + info.running());
    merged.set_runs_archived(merged.runs_archived() + info.runs_archived());
    for (const v1::DeviceInfo& d : info.devices()) {
      v1::DeviceInfo* out = merged.add_devices();
      *out = d;
      if (i < took.size()) out->set_harness(took[i]);
    }
    for (const std::string& b : info.backends()) {
      if (std::find(merged.backends().begin(), merged.backends().end(), b) ==
          merged.backends().end()) {
        merged.add_backends(b);
      }
    }
    // A language or profiling one harness can run is the fleet's.
    for (const auto& [language, where] : info.languages()) {
      auto& mine = (*merged.mutable_languages())[language];
      if (mine.empty() || (mine.rfind("unavailable", 0) == 0 && where.rfind("unavailable", 0) != 0)) {
        mine = where;
      }
    }
    if (merged.profiling().rfind("available", 0) != 0 &&
        info.profiling().rfind("available", 0) == 0) {
      merged.set_profiling(info.profiling());
    }
  }
  for (const std::string& b : merged.backends()) merged.mutable_unavailable_backends()->erase(b);
  return merged;
}

}  // namespace kiln::controller
