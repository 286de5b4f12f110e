// kiln demo: the whole loop on one machine. Starts an embedded kiln-harness on a free local
// port over a kept data folder (--data-dir), evaluates the built-in demo solution on the built-in demo
// definition's registered workloads, prints the same progress and table as `kiln submit`.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/evaluation.h"
#include "harness/common/files.h"
#include "harness/definitions/builtins.h"
#include "server/evaluation/admission.h"
#include "server/harness_server.h"

namespace kiln::cli {

namespace {

constexpr double kDemoTimeoutS = 1800;

// Where the demo keeps its archive between demos: $XDG_DATA_HOME/kiln/demo, else
// $HOME/.local/share/kiln/demo; "" when neither is set.
std::string DefaultDemoDir() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && *xdg == '/') return absl::StrCat(xdg, "/kiln/demo");
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home == '/') return absl::StrCat(home, "/.local/share/kiln/demo");
  return "";
}

}  // namespace

int RunDemo(const Invocation& inv, Console& console) {
  absl::StatusOr<v1::Solution> solution = BuiltinDemoSolution();
  if (!solution.ok()) {
    console.err << "kiln demo: built-in solution: " << solution.status().message() << "\n";
    return kExitUsage;
  }
  // A bad --mode is refused before anything starts.
  if (inv.args.Has("mode")) {
    if (absl::Status s = ValidateMode(inv.args.Get("mode")); !s.ok()) {
      console.err << "kiln demo: --" << s.message() << "\n";
      return kExitUsage;
    }
  }
  // The archive is kept, so that the run can be looked at afterwards (kiln runs list).
  const std::string dir = inv.args.Get("data-dir", DefaultDemoDir());
  if (dir.empty()) {
    console.err << "kiln demo: --data-dir: no default ($HOME and $XDG_DATA_HOME are unset); "
                   "give a folder\n";
    return kExitUsage;
  }
  if (absl::Status made = MakeDirs(dir, 0700); !made.ok()) {
    console.err << "kiln demo: --data-dir " << dir << ": " << made.message() << "\n";
    return kExitUsage;
  }

  HarnessOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir;
  options.quiet = true;
  options.worker_path = absl::StrCat(ExecutableDir(), "/kiln-worker");
  absl::StatusOr<std::unique_ptr<HarnessServer>> server = HarnessServer::Start(options);
  if (!server.ok()) {
    console.err << "kiln demo: cannot start the embedded kiln-harness: "
                << server.status().message() << "\n";
    return kExitUsage;
  }
  console.out << "kiln demo: embedded kiln-harness on " << (*server)->address() << " (data in "
              << dir << ")\n"
              << std::flush;

  Connection connection((*server)->address());
  v1::EvaluateRequest request;
  request.set_definition(kDemoDefinitionName);
  *request.mutable_solution() = *std::move(solution);
  request.set_mode(inv.args.Get("mode"));
  EvaluationOutcome outcome = StreamEvaluation(connection, request, kDemoTimeoutS, console);
  int code = ReportEvaluation(outcome, /*json=*/false, connection, console);
  (*server)->Drain();
  if (outcome.run_id.empty()) return code;  // no run was made: nothing archived to look at
  // The embedded harness is gone with the demo; its archive stays, for a harness to serve.
  console.out << "\nThe run is archived in " << dir << ". To look at it, serve that folder:\n"
              << "  " << ExecutableDir() << "/kiln-harness --data-dir " << dir
              << " --listen 127.0.0.1:50051 &\n"
              << "  " << ExecutableDir() << "/kiln runs list\n";
  return code;
}

}  // namespace kiln::cli
