// kiln leaderboard DEFINITION: one run of every team (GetLeaderboard), with the noise of every
// score; --confirm N re-measures the top N together (EvaluateBatch with confirm_runs).
// kiln runs designate RUN_ID / kiln runs undesignate DEFINITION: which run a team's score is.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/evaluation.h"
#include "client/views.h"
#include "harness/model/json_interop.h"
#include "harness/model/speedup_interval.h"
#include "report/definition_report.h"
#include "report/json_output.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

constexpr int kMaxConfirm = 64;  // EvaluateBatch's limit
constexpr double kConfirmTimeoutS = 3600;

// The score, its 95 % interval and the noise mark ("tie" when the interval widened by the noise
// floor holds 1x): the cells the leaderboard and the confirmation table share.
std::vector<std::string> ScoreCells(double value, double low, double high, double noise_floor) {
  const Interval score{low, value, high};
  return {FormatSpeedup(value), FormatSpeedupInterval(score), NoiseMark(score, noise_floor)};
}

// The leaderboard's and the confirmation's first columns: place, team, then ScoreCells.
std::vector<Column> ScoreColumns() {
  return {{"#", Align::kRight}, {"team"},  {"score", Align::kRight}, {"95% interval", Align::kRight},
          {"noise"},            {"status"}};
}

// `head` followed by `tail`.
std::vector<std::string> Row(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

std::string RuleLine(const v1::Leaderboard& board) {
  if (board.rule() == "best") {
    return "rule best: each team's PASSED run of lowest mean latency over all its runs (a view "
           "that only improves with resubmission; the contest ranks one designated run per team)";
  }
  return "rule latest: each team's designated run, else its latest finished run, whatever its "
         "verdict (kiln runs designate RUN_ID chooses it; --best shows each team's best run)";
}

}  // namespace

std::string LeaderboardText(const v1::Leaderboard& board, double noise_floor) {
  std::string out = absl::StrCat(board.definition(), " (mode ", board.mode(), ")\n",
                                 RuleLine(board), "\n");
  if (board.entries().empty()) {
    return out + "no ranked runs yet\n" + LeftOutText(board.left_out());
  }
  std::vector<Column> columns = ScoreColumns();
  columns.insert(columns.end(), {{"passed", Align::kRight},
                                 {"latency ms", Align::kRight},
                                 {"solution"},
                                 {"run"},
                                 {"submitted"},
                                 {"runs passed", Align::kRight}});
  Table table(std::move(columns));
  int place = 0;
  int ties = 0;
  for (const v1::LeaderboardEntry& e : board.entries()) {
    std::vector<std::string> score =
        ScoreCells(e.score(), e.score_ci95_low(), e.score_ci95_high(), noise_floor);
    if (!score[2].empty()) ++ties;
    score.push_back(std::string(StatusName(e.status())));
    table.AddRow(Row(Row({absl::StrCat(++place), e.principal()}, score),
                     {absl::StrCat(e.passed_workloads(), "/", e.workload_count()),
                      FormatMs(e.mean_latency_ms()), e.solution_name(),
                      absl::StrCat(RunLabel(e.run_id()), e.designated() ? " (designated)" : ""),
                      FormatUnixMs(e.created_unix_ms()), absl::StrCat(e.passed_runs())}));
  }
  out += table.Render();
  out +=
      "score: mean over the workloads of reference latency / latency, a workload not PASSED "
      "counting 0; 95% interval: from both latencies' 95% intervals (docs/report.md)\n";
  if (ties > 0) {
    absl::StrAppend(&out, ties, ties == 1 ? " score is a tie" : " scores are ties",
                    " with the reference: the 95% interval, widened by the noise floor (",
                    FormatNoiseFloor(noise_floor),
                    ", reference against itself in two processes), holds 1x (--noise-floor; "
                    "docs/report.md, Ties)\n");
  }
  return out + LeftOutText(board.left_out());
}

namespace {

struct Confirmed {
  const v1::LeaderboardEntry* entry = nullptr;
  const v1::Run* run = nullptr;  // null: no final run came back
  RunScore score;
};

// Re-measures the top `n` entries in one batch; prints the confirmed order.
int Confirm(const Invocation& inv, Connection& connection, const v1::Leaderboard& board, int n,
            double noise_floor, Console& console) {
  const int count = std::min<int>(n, board.entries_size());
  if (count == 0) {
    console.err << "kiln leaderboard: nothing to confirm: no ranked runs\n";
    return kExitFailed;
  }
  v1::EvaluateBatchRequest batch;
  batch.mutable_request()->set_definition(board.definition());
  batch.mutable_request()->set_mode(board.mode());
  for (int i = 0; i < count; ++i) batch.add_confirm_runs(board.entries(i).run_id());
  console.err << "kiln: confirming the top " << count << " of " << board.definition()
              << " in one batch (same inputs, one reference computation)\n";
  BatchOutcome outcome = StreamBatch(connection, batch, kConfirmTimeoutS, console);
  if (!outcome.status.ok() && outcome.runs.empty()) {
    return connection.Fail(outcome.status, console);
  }
  std::vector<Confirmed> confirmed;
  bool all_passed = outcome.status.ok() && !outcome.interrupted;
  for (int i = 0; i < count; ++i) {
    Confirmed c;
    c.entry = &board.entries(i);
    // The confirmation of entry i names it (Run.confirms): through a controller the runs of
    // several harnesses are confirmed one harness after another, not in the board's order.
    for (const auto& [id, run] : outcome.runs) {
      if (run.confirms() == c.entry->run_id()) c.run = &run;
    }
    if (c.run == nullptr && static_cast<size_t>(i) < outcome.run_ids.size()) {
      auto it = outcome.runs.find(outcome.run_ids[static_cast<size_t>(i)]);
      if (it != outcome.runs.end()) c.run = &it->second;
    }
    if (c.run != nullptr) c.score = ScoreRun(*c.run);
    if (c.run == nullptr || c.run->status() != v1::PASSED) all_passed = false;
    confirmed.push_back(c);
  }
  // Entry i was ranked i + 1; the confirmation orders them by their new scores.
  std::vector<size_t> order(confirmed.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return confirmed[a].score.score.value > confirmed[b].score.score.value;
  });
  if (inv.args.Has("json")) {
    Json entries = Json::array();
    for (size_t i : order) {
      const Confirmed& c = confirmed[i];
      entries.push_back({{"principal", c.entry->principal()},
                         {"ranked_run_id", c.entry->run_id()},
                         {"ranked_place", i + 1},
                         {"ranked_score", c.entry->score()},
                         {"run_id", c.run != nullptr ? c.run->run_id() : ""},
                         {"status", c.run != nullptr ? std::string(StatusName(c.run->status()))
                                                     : std::string("NO_RESULT")},
                         {"score", c.score.score.value},
                         {"score_ci95_low", c.score.score.low},
                         {"score_ci95_high", c.score.score.high},
                         {"crosses_one", CrossesOne(c.score.score)},
                         {"tie", WithinNoise(c.score.score, noise_floor)},
                         {"passed_workloads", c.score.passed},
                         {"workload_count", c.score.workloads}});
    }
    Json out = {{"leaderboard", ProtoToJson(board)},
                {"noise_floor", noise_floor},
                {"confirmation", std::move(entries)}};
    console.out << Dump(out);
    return all_passed ? kExitOk : kExitFailed;
  }
  console.out << LeaderboardText(board, noise_floor) << "\nconfirmation: the top " << count
              << " evaluated again together (one batch: same inputs, one reference computation)\n";
  std::vector<Column> columns = ScoreColumns();
  columns.insert(columns.end(), {{"ranked #", Align::kRight},
                                 {"ranked score", Align::kRight},
                                 {"confirmation run"},
                                 {"of run"}});
  Table table(std::move(columns));
  int place = 0;
  for (size_t i : order) {
    const Confirmed& c = confirmed[i];
    const Interval& s = c.score.score;
    std::vector<std::string> score = ScoreCells(s.value, s.low, s.high, noise_floor);
    score.push_back(c.run != nullptr ? std::string(StatusName(c.run->status())) : "NO RESULT");
    table.AddRow(Row(Row({absl::StrCat(++place), c.entry->principal()}, score),
                     {absl::StrCat(i + 1), FormatSpeedup(c.entry->score()),
                      c.run != nullptr ? RunLabel(c.run->run_id()) : kAbsent,
                      RunLabel(c.entry->run_id())}));
  }
  console.out << table.Render();
  if (!outcome.status.ok()) {
    console.err << "kiln leaderboard: the confirmation ended early: "
                << outcome.status.error_message() << "\n";
  }
  return all_passed ? kExitOk : kExitFailed;
}

}  // namespace

int RunLeaderboard(const Invocation& inv, Console& console) {
  int confirm = 0;
  if (inv.args.Has("confirm")) {
    absl::StatusOr<int> n = IntFlag(inv, "confirm", 0);
    if (!n.ok() || *n < 1 || *n > kMaxConfirm) {
      console.err << "kiln leaderboard: --confirm: expected a number of entries from 1 to "
                  << kMaxConfirm << ", got '" << inv.args.Get("confirm") << "'\n";
      return kExitUsage;
    }
    confirm = *n;
  }
  const absl::StatusOr<double> noise_floor = ParseNoiseFloor(inv.args.Get("noise-floor"));
  if (!noise_floor.ok()) {
    console.err << "kiln leaderboard: " << noise_floor.status().message() << "\n";
    return kExitUsage;
  }
  Connection connection(inv);
  v1::LeaderboardRequest request;
  request.set_definition(inv.args.positionals[0]);
  request.set_mode(inv.args.Get("mode"));
  request.set_rule(inv.args.Has("best") ? "best" : "latest");
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::Leaderboard board;
  grpc::Status status = connection.stub().GetLeaderboard(&context, request, &board);
  if (!status.ok()) return connection.Fail(status, console);
  if (confirm > 0) return Confirm(inv, connection, board, confirm, *noise_floor, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(board));
  } else {
    console.out << LeaderboardText(board, *noise_floor);
  }
  return kExitOk;
}

int RunRunsDesignate(const Invocation& inv, Console& console) {
  Connection connection(inv);
  v1::DesignateRunRequest request;
  request.set_run_id(inv.args.positionals[0]);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::DesignateRunResponse response;
  grpc::Status status = connection.stub().DesignateRun(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  console.out << "run " << response.run_id() << " is " << response.principal()
              << "'s designated run on " << response.definition() << " (mode "
              << response.mode() << ")";
  if (!response.previous_run_id().empty() && response.previous_run_id() != response.run_id()) {
    console.out << ", replacing " << response.previous_run_id();
  }
  console.out << "\n";
  return kExitOk;
}

int RunRunsUndesignate(const Invocation& inv, Console& console) {
  Connection connection(inv);
  v1::DesignateRunRequest request;
  request.set_clear(true);
  request.set_definition(inv.args.positionals[0]);
  request.set_mode(inv.args.Get("mode"));
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::DesignateRunResponse response;
  grpc::Status status = connection.stub().DesignateRun(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (response.previous_run_id().empty()) {
    console.out << response.principal() << " had no designated run on " << response.definition()
                << " (mode " << response.mode() << "); its latest run counts\n";
  } else {
    console.out << "run " << response.previous_run_id() << " is no longer designated; "
                << response.principal() << "'s latest run on " << response.definition()
                << " counts\n";
  }
  return kExitOk;
}

}  // namespace kiln::cli
