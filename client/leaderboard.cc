// kiln leaderboard DEFINITION: the best PASSED run of every principal (GetLeaderboard).
#include <string>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/json_output.h"
#include "client/table.h"

namespace kiln::cli {

namespace {

std::string LeaderboardText(const v1::Leaderboard& board) {
  std::string out = absl::StrCat(board.definition(), " (mode ", board.mode(), ")\n");
  if (board.entries().empty()) return out + "no ranked runs yet\n";
  Table table({{"#", Align::kRight},
               {"team"},
               {"latency ms", Align::kRight},
               {"speedup", Align::kRight},
               {"solution"},
               {"run"},
               {"runs", Align::kRight},
               {"submitted"}});
  int place = 0;
  for (const v1::LeaderboardEntry& e : board.entries()) {
    table.AddRow({absl::StrCat(++place), e.principal(), FormatMs(e.mean_latency_ms()),
                  FormatSpeedup(e.mean_speedup()), e.solution_name(), e.run_id(),
                  absl::StrCat(e.passed_runs()), FormatUnixMs(e.created_unix_ms())});
  }
  return out + table.Render();
}

}  // namespace

int RunLeaderboard(const Invocation& inv, Console& console) {
  Connection connection(inv);
  v1::LeaderboardRequest request;
  request.set_definition(inv.args.positionals[0]);
  request.set_mode(inv.args.Get("mode"));
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::Leaderboard board;
  grpc::Status status = connection.stub().GetLeaderboard(&context, request, &board);
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(board));
  } else {
    console.out << LeaderboardText(board);
  }
  return kExitOk;
}

}  // namespace kiln::cli
