// kiln profile: one call of a solution under Nsight Compute, after it passes the workload.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/evaluation.h"
#include "client/inputs.h"
#include "harness/model/json_interop.h"
#include "harness/model/solution_baseline.h"
#include "harness/profile/profile_proto.h"
#include "harness/profile/profiling_support.h"
#include "report/json_output.h"
#include "report/report.h"

namespace kiln::cli {

namespace {

// Generous: the solution is evaluated first, and ncu's full set replays every kernel dozens of
// times.
constexpr double kDefaultProfileTimeoutS = 1800;

// File names the reports would be saved under ("solution:fast.ncu-rep" -> "solution_fast...").
std::string LocalName(const std::string& artifact) {
  std::string name = artifact.substr(artifact.find('/') + 1);
  for (char& c : name) {
    if (c == ':' || c == '/') c = '_';
  }
  return name;
}

}  // namespace

int RunProfile(const Invocation& inv, Console& console) {
  absl::StatusOr<double> timeout_s = SecondsFlag(inv, "timeout-s", kDefaultProfileTimeoutS);
  if (!timeout_s.ok()) return InputError(timeout_s.status(), console);
  const std::string section = inv.args.Has("section") ? inv.args.Get("section") : "basic";
  if (absl::Status s = ValidateProfileSection(section, "--section"); !s.ok()) {
    return InputError(s, console);
  }
  const std::string solution_path = inv.args.Get("solution");
  absl::StatusOr<v1::Solution> solution = LoadSolution(solution_path);
  if (!solution.ok()) return InputError(solution.status(), console);
  const std::string definition = inv.args.Get("definition");
  if (!solution->definition().empty() && solution->definition() != definition) {
    return InputError(absl::InvalidArgumentError(absl::StrCat(
                          solution_path, ": solution.definition: '", solution->definition(),
                          "' does not match --definition '", definition, "'")),
                      console);
  }
  v1::ProfileRequest request;
  request.set_definition(definition);
  *request.mutable_solution() = *std::move(solution);
  request.set_workload_uuid(inv.args.Get("workload"));
  request.set_section(section);
  request.set_backend(inv.args.Get("backend"));
  if (inv.args.Has("reference")) request.add_also("reference");
  for (const std::string& b : inv.args.GetAll("baseline")) {
    if (std::optional<std::string> name = SolutionBaselineName(b); name.has_value()) {
      if (absl::Status s = ValidateSolutionName(*name, absl::StrCat("--baseline ", b)); !s.ok()) {
        return InputError(s, console);
      }
    }
    request.add_also(b);
  }

  Connection connection(inv);
  EvaluationOutcome outcome = StreamProfile(connection, request, *timeout_s, console);
  const bool json = inv.args.Has("json");
  // Interrupted, refused or ended without a run: reported as an evaluation is.
  if (outcome.interrupted || !outcome.status.ok() || !outcome.run) {
    return ReportEvaluation(outcome, json, connection, console);
  }
  const v1::Run& run = *outcome.run;
  const v1::ProfiledTarget* own = FindProfiledTarget(run.profile(), "solution");
  const bool profiled = run.status() == v1::PASSED && own != nullptr && own->error().empty();
  if (json) {
    console.out << Dump(Json{{"run_id", run.run_id()},
                             {"status", std::string(StatusName(run.status()))},
                             {"traces", TracesToJson(run.traces())},
                             {"profile", ProtoToJson(run.profile())}});
    console.out << std::flush;
    return profiled ? kExitOk : kExitFailed;
  }
  console.out << TraceTable(run.traces()) << SummaryLine(run) << FailureDetails(run);
  const v1::RunProfile& profile = run.profile();
  console.out << "\nNsight Compute, section " << profile.section();
  for (const v1::ProfiledTarget& t : profile.targets()) {
    if (t.error().empty()) {
      console.out << "; " << t.target() << ": " << t.kernels_size()
                  << (t.kernels_size() == 1 ? " kernel" : " kernels") << " in "
                  << absl::StrFormat("%.1f s", t.seconds());
    }
  }
  console.out << "\n" << RenderRunProfile(profile);
  for (const v1::ProfiledTarget& t : profile.targets()) {
    if (t.report_artifact().empty()) continue;
    console.out << "report (" << t.target() << "): kiln runs artifact " << run.run_id() << " "
                << t.report_artifact() << " --output " << LocalName(t.report_artifact())
                << "\n";
  }
  console.out << std::flush;
  return profiled ? kExitOk : kExitFailed;
}

}  // namespace kiln::cli
