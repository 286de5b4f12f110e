// kiln runs export --format flashinfer-trace [--definition D] [--status S] [--since T]
//                  [--solutions DIR] > traces.jsonl
//
// Every line is a flashinfer-bench Trace (flashinfer-ai/flashinfer-bench:
// flashinfer_bench/data/trace.py, read by TraceSet.from_path from traces/**/*.jsonl, one
// Trace.model_validate_json per non-empty line). The document rules are TraceToJson's export
// (harness/model/trace_json.cc); the status mapping is in docs/flashinfer-export.md.
//
// Runs come from ListRuns (newest first, followed page by page) and GetRun, and lines are written
// as each run arrives, so an archive of any size streams. Runs that never finished have no
// verdict and are skipped; the counts go to stderr with the progress.
#include "client/export.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/commands.h"
#include "client/connection.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"

namespace kiln::cli {

namespace {

constexpr char kFormat[] = "flashinfer-trace";
constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;  // ListRuns's own limit
constexpr int kDefaultProgressEvery = 100;

std::string Iso8601(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

absl::Status UsageError(absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("kiln runs export: ", message));
}

struct ExportCounts {
  int64_t runs = 0;                // runs whose traces were exported
  int64_t traces = 0;              // lines written
  int64_t unfinished_runs = 0;     // skipped: never got a verdict
  int64_t unfinished_traces = 0;   // their traces, and verdict-less traces of finished runs
  int64_t solutions_written = 0;   // solution files (one per exported name)

  std::string Line() const {
    std::string out = absl::StrCat(traces, " traces of ", runs, " runs exported");
    if (unfinished_runs > 0 || unfinished_traces > 0) {
      absl::StrAppend(&out, "; skipped ", unfinished_traces, " traces without a verdict (",
                      unfinished_runs, " unfinished runs)");
    }
    if (solutions_written > 0) absl::StrAppend(&out, "; ", solutions_written, " solution files");
    return out;
  }
};

absl::Status WriteSolutionFile(const std::string& dir, const v1::Run& run,
                               const std::string& name) {
  const std::string folder = absl::StrCat(dir, "/", SafeFileName(run.definition()));
  if (absl::Status made = MakeDirs(folder); !made.ok()) return made;
  return WriteFile(absl::StrCat(folder, "/", SafeFileName(name), ".json"),
                   FlashinferSolutionJson(run, name));
}

}  // namespace

std::string SolutionNames::NameFor(const v1::Run& run) {
  const std::string& name = run.solution_name();
  const std::string& hash = run.solution_hash();
  auto [it, inserted] = hash_of_name_.emplace(name, hash);
  if (inserted || it->second == hash) return name;
  std::string renamed = absl::StrCat(name, "_", hash.substr(0, 8));
  auto [taken, fresh] = hash_of_name_.emplace(renamed, hash);
  if (!fresh && taken->second != hash) {
    // "<name>_<8 hex>" already names other code (a submission of that very name): the whole hash
    // does not.
    renamed = absl::StrCat(name, "_", hash);
    std::tie(taken, fresh) = hash_of_name_.emplace(renamed, hash);
  }
  if (fresh) ++renamed_;
  return renamed;
}

bool HasVerdict(const v1::Trace& trace) {
  return trace.has_evaluation() && trace.evaluation().status() != v1::STATUS_UNSPECIFIED;
}

std::string FlashinferTraceLine(const v1::Run& run, const v1::Trace& trace,
                                const std::string& solution_name) {
  v1::Trace t = trace;
  if (!solution_name.empty()) t.set_solution(solution_name);
  if (t.solution().empty()) t.set_solution(run.solution_name());
  v1::Evaluation* e = t.mutable_evaluation();
  if (e->environment().hardware().empty() && !run.backend().empty()) {
    e->mutable_environment()->set_hardware(run.backend());
  }
  if (e->timestamp().empty()) {
    const int64_t ms = run.finished_unix_ms() > 0 ? run.finished_unix_ms() : run.created_unix_ms();
    if (ms > 0) e->set_timestamp(Iso8601(ms));
  }
  return TraceToJson(t, /*export_kiln_extensions=*/false, /*indent=*/-1);
}

std::string FlashinferSolutionJson(const v1::Run& run, const std::string& solution_name) {
  v1::Solution s = run.solution();
  if (!solution_name.empty()) s.set_name(solution_name);
  if (s.name().empty()) s.set_name(run.solution_name());
  if (s.definition().empty()) s.set_definition(run.definition());
  if (s.author().empty()) {
    s.set_author(!run.author().empty()      ? run.author()
                 : !run.principal().empty() ? run.principal()
                                            : "unknown");
  }
  if (s.spec().target_hardware().empty()) {
    s.mutable_spec()->add_target_hardware(run.backend().empty() ? "unknown" : run.backend());
  }
  return SolutionToJson(s, /*indent=*/2);
}

absl::StatusOr<absl::Time> ParseSince(std::string_view text, absl::Time now) {
  const std::string s(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, s, &t, &err)) return t;
  if (absl::ParseTime("%Y-%m-%d", s, absl::UTCTimeZone(), &t, &err)) return t;
  if (s.size() >= 2) {
    const char unit = s.back();
    int64_t n = 0;
    if (absl::SimpleAtoi(s.substr(0, s.size() - 1), &n) && n >= 0) {
      switch (unit) {
        case 's': return now - absl::Seconds(n);
        case 'm': return now - absl::Minutes(n);
        case 'h': return now - absl::Hours(n);
        case 'd': return now - absl::Hours(24 * n);
        default: break;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--since: expected a date (2026-11-29), an RFC 3339 time (2026-11-29T12:00:00Z) or an age "
      "(90m, 24h, 7d), got '", s, "'"));
}

std::string SafeFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      c = '_';
    }
  }
  if (out.empty() || out == "." || out == "..") out = absl::StrCat("_", out);
  return out;
}

int RunRunsExport(const Invocation& inv, Console& console) {
  auto usage = [&](const absl::Status& s) {
    console.err << s.message() << "\n";
    return kExitUsage;
  };
  const std::string format = inv.args.Get("format", kFormat);
  if (format != kFormat) {
    return usage(UsageError(absl::StrCat("--format: unknown format '", format,
                                         "' (known: ", kFormat, ")")));
  }
  v1::ListRunsRequest request;
  request.set_definition(inv.args.Get("definition"));
  if (inv.args.Has("status")) {
    absl::StatusOr<v1::EvaluationStatus> status = StatusFlag(inv, "status");
    if (!status.ok()) return usage(status.status());
    request.set_status(*status);
  }
  std::optional<int64_t> since_ms;
  if (inv.args.Has("since")) {
    absl::StatusOr<absl::Time> since = ParseSince(inv.args.Get("since"), absl::Now());
    if (!since.ok()) return usage(UsageError(since.status().message()));
    since_ms = absl::ToUnixMillis(*since);
  }
  absl::StatusOr<int> page_size = IntFlag(inv, "page-size", kDefaultPageSize);
  if (!page_size.ok()) return usage(page_size.status());
  if (*page_size < 1 || *page_size > kMaxPageSize) {
    return usage(UsageError(absl::StrCat("--page-size: expected 1 to ", kMaxPageSize)));
  }
  absl::StatusOr<int> progress_every = IntFlag(inv, "progress-every", kDefaultProgressEvery);
  if (!progress_every.ok()) return usage(progress_every.status());
  const std::string solutions_dir = inv.args.Get("solutions");
  if (inv.args.Has("solutions")) {
    if (solutions_dir.empty()) return usage(UsageError("--solutions: expected a folder"));
    if (absl::Status made = MakeDirs(solutions_dir); !made.ok()) {
      return usage(UsageError(absl::StrCat("--solutions: ", made.message())));
    }
  }
  request.set_limit(*page_size);

  Connection connection(inv);
  if (!request.definition().empty()) {
    // A definition the harness does not have would export nothing and look like success.
    grpc::ClientContext context;
    connection.Prepare(&context, kDefaultCallTimeoutS);
    v1::GetDefinitionRequest get;
    get.set_name(request.definition());
    v1::DefinitionDetail detail;
    grpc::Status found = connection.stub().GetDefinition(&context, get, &detail);
    if (found.error_code() == grpc::StatusCode::NOT_FOUND) {
      return usage(UsageError(absl::StrCat("--definition ", request.definition(),
                                           ": no such definition on this harness (kiln defs "
                                           "list names them)")));
    }
    if (!found.ok()) return connection.Fail(found, console);
  }
  ExportCounts counts;
  SolutionNames names;
  std::set<std::string> solution_files;  // names written this export
  bool done = false;
  while (!done) {
    grpc::ClientContext list_context;
    connection.Prepare(&list_context, kDefaultCallTimeoutS);
    v1::ListRunsResponse page;
    grpc::Status listed = connection.stub().ListRuns(&list_context, request, &page);
    if (!listed.ok()) return connection.Fail(listed, console);
    for (const v1::RunSummary& summary : page.runs()) {
      // Newest first: the first run older than --since ends the export.
      if (since_ms.has_value() && summary.created_unix_ms() < *since_ms) {
        done = true;
        break;
      }
      if (summary.state() != v1::RUN_DONE) {
        ++counts.unfinished_runs;
        counts.unfinished_traces += summary.workload_count();
        continue;
      }
      grpc::ClientContext get_context;
      connection.Prepare(&get_context, kDefaultCallTimeoutS);
      v1::GetRunRequest get;
      get.set_run_id(summary.run_id());
      get.set_include_sources(!solutions_dir.empty());
      v1::Run run;
      grpc::Status got = connection.stub().GetRun(&get_context, get, &run);
      if (!got.ok()) {
        console.err << "kiln runs export: run " << summary.run_id() << ": ";
        return connection.Fail(got, console);
      }
      const std::string name = solutions_dir.empty() ? "" : names.NameFor(run);
      int64_t written = 0;
      for (const v1::Trace& trace : run.traces()) {
        if (!HasVerdict(trace)) {
          ++counts.unfinished_traces;
          continue;
        }
        console.out << FlashinferTraceLine(run, trace, name) << "\n";
        ++written;
      }
      console.out.flush();
      if (!console.out) {
        console.err << "kiln runs export: cannot write to standard output\n";
        return kExitUsage;
      }
      counts.traces += written;
      if (written > 0) ++counts.runs;
      if (!solutions_dir.empty() && written > 0 && solution_files.insert(name).second) {
        if (absl::Status w = WriteSolutionFile(solutions_dir, run, name); !w.ok()) {
          console.err << "kiln runs export: --solutions: " << w.message() << "\n";
          return kExitUsage;
        }
        ++counts.solutions_written;
      }
      if (*progress_every > 0 && counts.runs > 0 && written > 0 &&
          counts.runs % *progress_every == 0) {
        console.err << "kiln runs export: " << counts.Line() << "\n";
      }
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (names.renamed() > 0) {
    console.err << "kiln runs export: " << names.renamed()
                << " solutions renamed <name>_<hash> (their name was used by other code)\n";
  }
  console.err << "kiln runs export: " << counts.Line() << "\n";
  return kExitOk;
}

}  // namespace kiln::cli
