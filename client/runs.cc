// kiln runs list | kiln runs show RUN_ID | kiln runs artifacts RUN_ID | kiln runs artifact RUN_ID NAME
#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/rejection_advice.h"
#include "client/views.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/model/json_interop.h"
#include "harness/model/run_team.h"
#include "harness/model/unknown_definition.h"
#include "harness/profile/profile_proto.h"
#include "harness/verify/own_work.h"
#include "report/definition_report.h"
#include "report/json_output.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

// The status column of a run: its verdict once done, else the stage it is in.
std::string RunStatusText(v1::RunState state, v1::EvaluationStatus status) {
  if (state == v1::RUN_DONE || status != v1::STATUS_UNSPECIFIED) {
    return std::string(StatusName(status));
  }
  return RunStateName(state);
}

std::string RunsTable(const v1::ListRunsResponse& response) {
  Table table({{"run"},
               {"created"},
               {"definition"},
               {"solution"},
               {"status"},
               {"workloads", Align::kRight},
               {"mean latency ms", Align::kRight},
               {"mean speedup", Align::kRight}});
  for (const v1::RunSummary& r : response.runs()) {
    // A profile's verdict is that of its evaluation; the mark tells it from a submission.
    const std::string solution =
        r.kind() == "profile" ? absl::StrCat(r.solution_name(), " (profile)") : r.solution_name();
    table.AddRow({r.run_id(), FormatUnixMs(r.created_unix_ms()), r.definition(), solution,
                  RunStatusText(r.state(), r.status()), absl::StrCat(r.workload_count()),
                  FormatMs(r.mean_latency_ms()), FormatSpeedup(r.mean_speedup())});
  }
  return table.Render();
}

// What the run's traces were judged with: the tolerances and, from the first timing, the
// timed-call counts ("" when no trace records them).
std::string ToleranceText(const v1::Run& run) {
  for (const v1::Trace& trace : run.traces()) {
    if (!trace.kiln().has_tolerance()) continue;
    const v1::Tolerance& t = trace.kiln().tolerance();
    return absl::StrCat("atol ", t.atol(), ", rtol ", t.rtol(), ", required matched ratio ",
                        t.required_matched_ratio());
  }
  return "";
}

std::string TimingCountsText(const v1::Run& run) {
  for (const v1::Trace& trace : run.traces()) {
    for (const v1::TimingResult* timing :
         {&trace.kiln().timing(), &trace.kiln().reference_timing()}) {
      if (timing->mode().empty()) continue;
      if (timing->mode() == "robust") {
        return absl::StrCat("robust: ", timing->warmup(), " warmup calls, ", timing->iterations(),
                            " samples");
      }
      return absl::StrCat(timing->mode(), ": ", timing->trials(), " trials of ", timing->warmup(),
                          " warmup + ", timing->iterations(), " timed calls");
    }
  }
  return "";
}

// The share of the timed calls' GPU time the solution's own kernels did: the mean over the
// workloads, then each workload's, or why it was not measured.
std::string OwnKernelsText(const v1::Run& run) {
  std::vector<const v1::OwnWork*> works;
  std::vector<std::string> parts;
  for (const v1::Trace& trace : run.traces()) {
    if (!trace.kiln().has_own_work()) continue;
    works.push_back(&trace.kiln().own_work());
    parts.push_back(absl::StrCat("workload ", trace.kiln().workload_index() + 1, ": ",
                                 integrity::OwnWorkText(trace.kiln().own_work())));
  }
  if (works.empty()) return "";
  const std::optional<double> mean = integrity::MeanShare(works);
  std::string out = mean.has_value()
                        ? absl::StrCat(integrity::ShareText(*mean), " of the GPU time (mean)")
                        : std::string(integrity::OwnWorkText(*works.front()));
  if (mean.has_value() || parts.size() > 1) {
    for (const std::string& part : parts) absl::StrAppend(&out, "\n", std::string(12, ' '), part);
  }
  if (works.front()->min_share() > 0) {
    absl::StrAppend(&out, "\n", std::string(12, ' '), "the definition needs at least ",
                    integrity::ShareText(works.front()->min_share()));
  }
  return out;
}

std::string RunFields(const v1::Run& run) {
  std::string out;
  auto field = [&out](absl::string_view name, absl::string_view value) {
    if (value.empty()) return;
    absl::StrAppend(&out, name, std::string(12 - name.size(), ' '), value, "\n");
  };
  field("run", run.run_id());
  field("definition", run.definition());
  std::string solution = run.solution_name();
  if (!run.solution_hash().empty())
    absl::StrAppend(&solution, " (", ShortId(run.solution_hash(), 12), ")");
  field("solution", solution);
  // The team is who submitted; the author is what the solution says of itself (docs/report.md).
  field("team", TeamOf(run));
  field("author", AuthorOf(run));
  field("status", RunStatusText(run.state(), run.status()));
  field("reason", run.reason());
  field("what to do", RejectionAdvice(run.reason()));
  std::set<std::string> warnings;
  for (const v1::Trace& trace : run.traces()) {
    warnings.insert(trace.kiln().warnings().begin(), trace.kiln().warnings().end());
  }
  for (const std::string& warning : warnings) {
    field("warning", warning);
    field("what to do", RejectionAdvice(warning));
  }
  field("own kernels", OwnKernelsText(run));
  field("state", RunStateName(run.state()));
  // A run in flight: whose work is running ("reference for workload 1/3: timing").
  if (run.state() != v1::RUN_DONE) field("now", run.progress());
  if (run.kind() == "profile") field("kind", "profile (Nsight Compute; never ranked)");
  field("mode", run.mode());
  field("judged with", ToleranceText(run));
  field("timed with", TimingCountsText(run));
  if (!run.baselines().empty()) field("baselines", absl::StrJoin(run.baselines(), ", "));
  field("backend", run.backend());
  // The device it was timed on: which GPU of a multi-GPU node.
  if (!run.device_name().empty()) {
    std::string device = run.device_name();
    if (run.backend() != "host") {
      absl::StrAppend(&device, " (", run.backend() == "cuda" ? "GPU " : "device ",
                      run.device_index(),
                      run.device_pci_bus_id().empty() ? "" : ", " + run.device_pci_bus_id(), ")");
    }
    field("device", device);
  }
  field("created", FormatUnixMs(run.created_unix_ms()));
  if (run.finished_unix_ms() > 0) field("finished", FormatUnixMs(run.finished_unix_ms()));
  field("seconds",
        absl::StrCat("queued ", FormatSeconds(run.queued_s()), ", compiling ",
                     FormatSeconds(run.compile_s()), run.compile_cache_hit() ? " (cache hit)" : "",
                     ", verifying ", FormatSeconds(run.verify_s()), ", timing ",
                     FormatSeconds(run.timing_s())));
  return out;
}

std::string RunSources(const v1::Run& run) {
  std::string out;
  for (const v1::SourceFile& source : run.solution().sources()) {
    absl::StrAppend(&out, "--- ", source.path(), " (", source.content().size(), " bytes)\n",
                    source.content());
    if (!source.content().empty() && source.content().back() != '\n') out += "\n";
  }
  return out;
}

// The run's archived files, one line each: KIND/NAME, size, SHA-256.
std::string ArtifactsTable(const v1::Run& run) {
  Table table({{"artifact"}, {"bytes", Align::kRight}, {"sha256"}});
  for (const v1::ArtifactRef& a : run.artifacts()) {
    table.AddRow({absl::StrCat(a.kind(), "/", a.name()), absl::StrCat(a.size()), a.sha256()});
  }
  return table.Render();
}

// The run RUN_ID (the first positional) as archived; nullopt after reporting a failed call, whose
// exit code is then in *exit_code.
std::optional<v1::Run> FetchRun(const Invocation& inv, Connection& connection, Console& console,
                                bool include_sources, int* exit_code) {
  v1::GetRunRequest request;
  request.set_run_id(inv.args.positionals[0]);
  request.set_include_sources(include_sources);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::Run run;
  grpc::Status status = connection.stub().GetRun(&context, request, &run);
  if (!status.ok()) {
    *exit_code = connection.Fail(status, console);
    return std::nullopt;
  }
  return run;
}

}  // namespace

Json RunShowJson(const v1::Run& run) {
  Json json = ProtoToJson(run);
  json["traces"] = TracesToJson(run.traces());
  return json;
}

int RunRunsList(const Invocation& inv, Console& console) {
  absl::StatusOr<int> limit = IntFlag(inv, "limit", 0);
  if (!limit.ok()) {
    console.err << limit.status().message() << "\n";
    return kExitUsage;
  }
  v1::ListRunsRequest request;
  request.set_definition(inv.args.Get("definition"));
  request.set_limit(*limit);
  request.set_exclude_reference_checks(!inv.args.Has("all"));
  request.set_kind(inv.args.Get("kind"));
  if (inv.args.Has("status")) {
    absl::StatusOr<v1::EvaluationStatus> status = StatusFlag(inv, "status");
    if (!status.ok()) {
      console.err << status.status().message() << "\n";
      return kExitUsage;
    }
    request.set_status(*status);
  }
  Connection connection(inv);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::ListRunsResponse response;
  grpc::Status status = connection.stub().ListRuns(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(response));
  } else if (response.runs().empty()) {
    // An empty list for a definition the node does not have is a typo, not "no runs".
    if (!request.definition().empty()) {
      grpc::ClientContext defs_context;
      connection.Prepare(&defs_context, kDefaultCallTimeoutS);
      v1::ListDefinitionsResponse defs;
      if (connection.stub()
              .ListDefinitions(&defs_context, v1::ListDefinitionsRequest(), &defs)
              .ok() &&
          std::none_of(defs.definitions().begin(), defs.definitions().end(),
                       [&](const v1::DefinitionSummary& d) {
                         return d.name() == request.definition();
                       })) {
        std::vector<std::string> names;
        for (const v1::DefinitionSummary& d : defs.definitions()) names.push_back(d.name());
        console.err << "kiln runs list: --definition: "
                    << UnknownDefinitionMessage(request.definition(), names) << "\n";
        return kExitUsage;
      }
    }
    console.out << "no runs\n" << LeftOutText(response.left_out());
  } else {
    console.out << RunsTable(response);
    if (!response.next_page_token().empty()) console.out << "(more runs: raise --limit)\n";
    console.out << LeftOutText(response.left_out());
  }
  return kExitOk;
}

std::string RunShowText(const v1::Run& run) {
  std::string out = absl::StrCat(RunFields(run), "\n");
  if (!run.traces().empty()) absl::StrAppend(&out, TraceTable(run.traces()));
  absl::StrAppend(&out, SummaryLine(run), FailureDetails(run));
  if (run.kind() == "profile" && run.has_profile()) {
    absl::StrAppend(&out, "\nNsight Compute profile, section ", run.profile().section(), ":\n",
                    RenderRunProfile(run.profile()));
  }
  if (!run.compile_log().empty() && run.status() != v1::COMPILE_ERROR) {
    absl::StrAppend(&out, "\ncompiler log:\n", Indent(run.compile_log(), "  "));
  }
  if (!run.solution().sources().empty()) absl::StrAppend(&out, "\nsources:\n", RunSources(run));
  if (!run.artifacts().empty()) {
    absl::StrAppend(&out, "\nartifacts (kiln runs artifact ", run.run_id(), " KIND/NAME):\n",
                    Indent(ArtifactsTable(run), "  "));
  }
  return out;
}

int RunRunsShow(const Invocation& inv, Console& console) {
  Connection connection(inv);
  int exit_code = kExitOk;
  std::optional<v1::Run> run = FetchRun(inv, connection, console, /*include_sources=*/true,
                                        &exit_code);
  if (!run.has_value()) return exit_code;
  console.out << (inv.args.Has("json") ? Dump(RunShowJson(*run)) : RunShowText(*run));
  return kExitOk;
}

int RunRunsArtifacts(const Invocation& inv, Console& console) {
  Connection connection(inv);
  int exit_code = kExitOk;
  std::optional<v1::Run> run = FetchRun(inv, connection, console, /*include_sources=*/false,
                                        &exit_code);
  if (!run.has_value()) return exit_code;
  if (inv.args.Has("json")) {
    Json list = Json::array();
    for (const v1::ArtifactRef& a : run->artifacts()) {
      list.push_back(
          Json{{"kind", a.kind()}, {"name", a.name()}, {"sha256", a.sha256()}, {"size", a.size()}});
    }
    console.out << Dump(Json{{"run_id", run->run_id()}, {"artifacts", list}});
    return kExitOk;
  }
  if (run->artifacts().empty()) {
    console.out << "run " << run->run_id() << " has no artifacts\n";
    return kExitOk;
  }
  console.out << ArtifactsTable(*run);
  return kExitOk;
}

int RunRunsArtifact(const Invocation& inv, Console& console) {
  // NAME is "KIND/NAME", or a name with --kind, or a bare name that only one kind has.
  std::string kind = inv.args.Get("kind");
  std::string name = inv.args.positionals[1];
  // With --kind, NAME is the whole name (a source's may hold slashes: src/kernel.cu).
  if (const size_t slash = name.find('/'); kind.empty() && slash != std::string::npos) {
    kind = name.substr(0, slash);
    name = name.substr(slash + 1);
  }
  Connection connection(inv);
  int exit_code = kExitOk;
  std::optional<v1::Run> run = FetchRun(inv, connection, console, /*include_sources=*/false,
                                        &exit_code);
  if (!run.has_value()) return exit_code;
  std::vector<const v1::ArtifactRef*> matches;
  std::vector<std::string> all;
  for (const v1::ArtifactRef& a : run->artifacts()) {
    all.push_back(absl::StrCat(a.kind(), "/", a.name()));
    if (a.name() == name && (kind.empty() || a.kind() == kind)) matches.push_back(&a);
  }
  if (matches.empty()) {
    console.err << "kiln runs artifact: run " << run->run_id() << " has no artifact '"
                << (kind.empty() ? name : absl::StrCat(kind, "/", name)) << "'; it has: "
                << (all.empty() ? "none" : absl::StrJoin(all, ", ")) << "\n";
    return kExitUsage;
  }
  if (matches.size() > 1) {
    std::vector<std::string> names;
    for (const v1::ArtifactRef* a : matches) names.push_back(absl::StrCat(a->kind(), "/", a->name()));
    console.err << "kiln runs artifact: '" << name << "' names " << matches.size()
                << " artifacts of run " << run->run_id() << ": " << absl::StrJoin(names, ", ")
                << "; give KIND/NAME or --kind\n";
    return kExitUsage;
  }
  const v1::ArtifactRef& ref = *matches.front();
  v1::GetArtifactRequest request;
  request.set_sha256(ref.sha256());
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::Artifact artifact;
  grpc::Status status = connection.stub().GetArtifact(&context, request, &artifact);
  if (!status.ok()) return connection.Fail(status, console);
  // What the node sent is what the run's record names, or nothing is written.
  if (const std::string got = Sha256Hex(artifact.content()); got != ref.sha256()) {
    console.err << "kiln runs artifact: the node sent " << artifact.content().size()
                << " bytes whose SHA-256 is " << got << ", not the archived " << ref.sha256()
                << "; nothing written\n";
    return kExitFailed;
  }
  const std::string output = inv.args.Get("output");
  if (output.empty() || output == "-") {
    console.out << artifact.content();
    return kExitOk;
  }
  if (absl::Status s = WriteFile(output, artifact.content()); !s.ok()) {
    console.err << "kiln runs artifact: --output: " << s.message() << "\n";
    return kExitFailed;
  }
  console.err << "wrote " << output << " (" << ref.kind() << "/" << ref.name() << ", "
              << artifact.content().size() << " bytes, sha256 " << ref.sha256() << ")\n";
  return kExitOk;
}

}  // namespace kiln::cli
