#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/model/json_interop.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

// The traces' workload ids, each as short as it can be and still differ from the others'.
std::vector<std::string> WorkloadIds(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  std::vector<std::string> uuids;
  for (const v1::Trace& trace : traces) uuids.push_back(trace.workload().uuid());
  return UniquePrefixes(uuids);
}

// Lines of a worker or compiler log shown per failure; the full logs stay in `runs show`.
constexpr size_t kLogExcerptLines = 20;
constexpr size_t kCompileLogLines = 60;

std::string Status(const v1::Trace& trace) {
  return std::string(StatusName(trace.evaluation().status()));
}

bool HasLatency(const v1::Trace& trace) {
  return trace.evaluation().has_performance() && trace.evaluation().performance().latency_ms() > 0;
}

}  // namespace

std::string AxesText(const v1::Workload& workload) {
  std::vector<std::string> parts;
  for (const v1::AxisValue& axis : workload.axes()) {
    parts.push_back(absl::StrCat(axis.name(), "=", axis.value()));
  }
  return absl::StrJoin(parts, ",");
}

// Baselines other than the reference that any trace carries, in first-seen order.
std::vector<std::string> ExtraBaselines(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  std::vector<std::string> names;
  for (const v1::Trace& trace : traces) {
    for (const v1::BaselineResult& b : trace.kiln().baselines()) {
      if (b.name() == "reference") continue;
      if (std::find(names.begin(), names.end(), b.name()) == names.end()) names.push_back(b.name());
    }
  }
  return names;
}

const v1::BaselineResult* FindBaseline(const v1::Trace& trace, const std::string& name) {
  for (const v1::BaselineResult& b : trace.kiln().baselines()) {
    if (b.name() == name) return &b;
  }
  return nullptr;
}

std::string TraceTable(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  std::vector<Column> columns = {{"#", Align::kRight},
                                 {"workload"},
                                 {"axes"},
                                 {"status"},
                                 {"latency ms", Align::kRight},
                                 {"ref ms", Align::kRight},
                                 {"speedup", Align::kRight}};
  const std::vector<std::string> extra = ExtraBaselines(traces);
  for (const std::string& name : extra) {
    columns.push_back({absl::StrCat(name, " ms"), Align::kRight});
    columns.push_back({absl::StrCat("vs ", name), Align::kRight});
  }
  columns.push_back({"max abs err", Align::kRight});
  columns.push_back({"max rel err", Align::kRight});
  Table table(columns);
  int index = 0;
  std::string notes;
  const std::vector<std::string> ids = WorkloadIds(traces);
  for (const v1::Trace& trace : traces) {
    ++index;
    const v1::Evaluation& e = trace.evaluation();
    bool compared = e.has_correctness();
    std::vector<std::string> row = {
        absl::StrCat(index), ids[static_cast<size_t>(index - 1)], AxesText(trace.workload()),
        Status(trace), FormatMs(e.performance().latency_ms()),
        FormatMs(e.performance().reference_latency_ms()),
        FormatSpeedup(e.performance().speedup_factor())};
    for (const std::string& name : extra) {
      const v1::BaselineResult* b = FindBaseline(trace, name);
      row.push_back(b != nullptr ? FormatMs(b->latency_ms()) : std::string(kAbsent));
      row.push_back(b != nullptr ? FormatSpeedup(b->speedup()) : std::string(kAbsent));
      if (b != nullptr && !b->note().empty() && b->latency_ms() <= 0) {
        absl::StrAppend(&notes, "  workload ", index, " ", name, ": ", b->note(), "\n");
      }
    }
    row.push_back(compared ? FormatError(e.correctness().max_absolute_error()) : kAbsent);
    row.push_back(compared ? FormatError(e.correctness().max_relative_error()) : kAbsent);
    table.AddRow(std::move(row));
  }
  return table.Render() + notes;
}

double MeanSpeedup(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  double sum = 0;
  int n = 0;
  for (const v1::Trace& trace : traces) {
    double s = trace.evaluation().performance().speedup_factor();
    if (std::isfinite(s) && s > 0) {
      sum += s;
      ++n;
    }
  }
  return n == 0 ? 0 : sum / n;
}

std::string SummaryLine(const v1::Run& run) {
  int passed = 0;
  for (const v1::Trace& trace : run.traces()) {
    if (trace.evaluation().status() == v1::PASSED) ++passed;
  }
  int total = run.traces_size();
  std::string status(StatusName(run.status()));
  if (run.state() != v1::RUN_DONE && run.state() != v1::RUN_STATE_UNSPECIFIED) {
    status = absl::StrCat("running (", RunStateName(run.state()), ")");
  }
  std::string line = absl::StrCat("run ", run.run_id(), ": ", status);
  if (run.status() == v1::PASSED) {
    absl::StrAppend(&line, " (", passed, "/", total, " workloads)");
  } else if (total > 0) {
    absl::StrAppend(&line, " (", passed, "/", total, " workloads passed)");
  }
  double speedup = MeanSpeedup(run.traces());
  if (speedup > 0) absl::StrAppend(&line, ", mean speedup ", FormatSpeedup(speedup));
  if (!run.mode().empty()) absl::StrAppend(&line, ", mode ", run.mode());
  for (const v1::Trace& trace : run.traces()) {
    const std::string& source = trace.kiln().reference_source();
    if (source.empty()) continue;
    absl::StrAppend(&line, ", reference: ",
                    source == "python" ? "the definition's Python run() under torch"
                                       : "native_reference");
    break;
  }
  return line + "\n";
}

namespace {

// Workloads that failed the same way, reported once.
struct Failure {
  std::string status;
  std::string reason;
  std::string log;  // excerpt, without the reason it repeats
  std::vector<std::string> workloads;
};

// What the log adds to the reason: logs often open with the reason itself.
std::string LogBeyondReason(const std::string& log, const std::string& reason) {
  std::string_view rest = log;
  if (!reason.empty() && rest.substr(0, reason.size()) == reason) {
    rest.remove_prefix(reason.size());
    while (!rest.empty() && rest.front() == '\n') rest.remove_prefix(1);
  }
  return TailLines(rest, kLogExcerptLines);
}

std::vector<Failure> GroupFailures(const v1::Run& run) {
  std::vector<Failure> failures;
  int index = 0;
  const std::vector<std::string> ids = WorkloadIds(run.traces());
  for (const v1::Trace& trace : run.traces()) {
    ++index;
    v1::EvaluationStatus s = trace.evaluation().status();
    if (s == v1::PASSED || s == v1::COMPILE_ERROR) continue;
    Failure f{Status(trace),
              trace.kiln().reason(),
              LogBeyondReason(trace.evaluation().log(), trace.kiln().reason()),
              {}};
    std::string who = absl::StrCat("#", index, " (", ids[static_cast<size_t>(index - 1)], ")");
    auto it = std::find_if(failures.begin(), failures.end(), [&](const Failure& g) {
      return g.status == f.status && g.reason == f.reason && g.log == f.log;
    });
    if (it == failures.end()) {
      f.workloads.push_back(who);
      failures.push_back(std::move(f));
    } else {
      it->workloads.push_back(who);
    }
  }
  return failures;
}

}  // namespace

std::string FailureDetails(const v1::Run& run) {
  if (run.status() == v1::PASSED) return "";
  std::vector<Failure> failures = GroupFailures(run);
  bool reason_shown = std::any_of(failures.begin(), failures.end(),
                                  [&](const Failure& f) { return f.reason == run.reason(); });
  std::string out;
  if (!run.reason().empty() && !reason_shown) absl::StrAppend(&out, "reason: ", run.reason(), "\n");
  if (run.status() == v1::COMPILE_ERROR && !run.compile_log().empty()) {
    absl::StrAppend(&out, "compiler log:\n",
                    Indent(TailLines(run.compile_log(), kCompileLogLines), "  "));
  }
  for (const Failure& f : failures) {
    absl::StrAppend(&out, f.workloads.size() == 1 ? "workload " : "workloads ",
                    absl::StrJoin(f.workloads, ", "), ": ", f.status, f.reason.empty() ? "" : ": ",
                    f.reason, "\n", Indent(f.log, "  "));
  }
  // A run that failed at run time: where the worker's whole output (a traceback, the solution's
  // prints) is archived, when it is.
  if (run.status() == v1::RUNTIME_ERROR) {
    for (const v1::Trace& trace : run.traces()) {
      if (trace.evaluation().status() != v1::RUNTIME_ERROR) continue;
      const std::string name = absl::StrCat("w", trace.kiln().workload_index());
      for (const v1::ArtifactRef& a : run.artifacts()) {
        if (a.kind() == "worker_log" && a.name() == name) {
          absl::StrAppend(&out, "the worker's output (traceback, prints): kiln runs artifact ",
                          run.run_id(), " worker_log/", name, "\n");
          break;
        }
      }
      break;
    }
  }
  return out;
}

std::string WorkloadLine(const v1::Trace& trace, int index, int count) {
  const v1::Evaluation& e = trace.evaluation();
  std::string line = absl::StrCat("workload ", index, "/", count, " ", Status(trace));
  if (HasLatency(trace)) {
    absl::StrAppend(&line, " ", FormatMs(e.performance().latency_ms()), " ms");
    if (e.performance().reference_latency_ms() > 0) {
      absl::StrAppend(&line, " (ref ", FormatMs(e.performance().reference_latency_ms()), " ms, ",
                      FormatSpeedup(e.performance().speedup_factor()), ")");
    }
  }
  if (e.status() != v1::PASSED) {
    if (e.has_correctness()) {
      absl::StrAppend(&line, " max abs err ", FormatError(e.correctness().max_absolute_error()),
                      ", max rel err ", FormatError(e.correctness().max_relative_error()));
    }
    if (!trace.kiln().reason().empty()) absl::StrAppend(&line, ": ", trace.kiln().reason());
  }
  return line;
}

void ProgressPrinter::Print(const v1::Progress& progress) {
  std::string text;
  if (progress.has_trace()) {
    text = WorkloadLine(progress.trace(), progress.workload_index() + 1, progress.workload_count());
  } else {
    // Messages often restate the stage ("workload 1/3: verifying"); then they replace it.
    text = RunStateName(progress.stage());
    const std::string& message = progress.message();
    // A note with no stage (the controller moving a run to another harness) is its message.
    if (message.find(text) != std::string::npos ||
        (progress.stage() == v1::RUN_STATE_UNSPECIFIED && !message.empty())) {
      text = message;
    } else if (!message.empty()) {
      absl::StrAppend(&text, " (", message, ")");
    }
  }
  std::string line = absl::StrCat("[run ", RunLabel(progress.run_id()), "] ", text);
  // Repeated identical updates (a heartbeat, the same stage re-announced) print once.
  if (line == last_line_) return;
  last_line_ = line;
  if (!in_place_) {
    err_ << line << "\n" << std::flush;
    return;
  }
  constexpr char kClearLine[] = "\r\033[K";
  bool transient = !progress.has_trace();
  err_ << kClearLine << line << (transient ? "" : "\n") << std::flush;
  transient_shown_ = transient;
}

void ProgressPrinter::Finish() {
  if (transient_shown_) err_ << "\r\033[K" << std::flush;
  transient_shown_ = false;
}

}  // namespace kiln::cli
