// kiln demo: the whole loop on one machine. Starts an embedded kiln-harness on a free local
// port in a temporary folder, evaluates the built-in demo solution on the built-in demo
// definition's registered workloads, prints the same progress and table as `kiln submit`.
#include <string>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/evaluation.h"
#include "harness/common/files.h"
#include "harness/definitions/builtins.h"
#include "server/harness_server.h"

namespace kiln::cli {

namespace {

constexpr double kDemoTimeoutS = 1800;

// Removes the demo's data folder however the demo ends.
class TempDir {
 public:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  ~TempDir() { (void)RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

int RunDemo(const Invocation& inv, Console& console) {
  absl::StatusOr<v1::Solution> solution = BuiltinDemoSolution();
  if (!solution.ok()) {
    console.err << "kiln demo: built-in solution: " << solution.status().message() << "\n";
    return kExitUsage;
  }
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-demo");
  if (!dir.ok()) {
    console.err << "kiln demo: " << dir.status().message() << "\n";
    return kExitUsage;
  }
  TempDir data(*dir);

  HarnessOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = data.path();
  options.quiet = true;
  options.worker_path = absl::StrCat(ExecutableDir(), "/kiln-worker");
  absl::StatusOr<std::unique_ptr<HarnessServer>> server = HarnessServer::Start(options);
  if (!server.ok()) {
    console.err << "kiln demo: cannot start the embedded kiln-harness: "
                << server.status().message() << "\n";
    return kExitUsage;
  }
  console.out << "kiln demo: embedded kiln-harness on " << (*server)->address() << " (data in "
              << data.path() << ")\n"
              << std::flush;

  Connection connection((*server)->address());
  v1::EvaluateRequest request;
  request.set_definition(kDemoDefinitionName);
  *request.mutable_solution() = *std::move(solution);
  request.set_mode(inv.args.Get("mode"));
  EvaluationOutcome outcome = StreamEvaluation(connection, request, kDemoTimeoutS, console);
  int code = ReportEvaluation(outcome, /*json=*/false, connection, console);
  (*server)->Drain();
  return code;
}

}  // namespace kiln::cli
