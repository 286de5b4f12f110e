#include "client/report.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/table.h"
#include "harness/model/json_interop.h"

namespace kiln::cli {

namespace {

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

std::string RunStateName(v1::RunState state) {
  switch (state) {
    case v1::RUN_QUEUED:
      return "queued";
    case v1::RUN_COMPILING:
      return "compiling";
    case v1::RUN_VERIFYING:
      return "verifying";
    case v1::RUN_TIMING:
      return "timing";
    case v1::RUN_DONE:
      return "done";
    default:
      return "unknown";
  }
}

std::string AxesText(const v1::Workload& workload) {
  std::vector<std::string> parts;
  for (const v1::AxisValue& axis : workload.axes()) {
    parts.push_back(absl::StrCat(axis.name(), "=", axis.value()));
  }
  return absl::StrJoin(parts, ",");
}

std::string TraceTable(const google::protobuf::RepeatedPtrField<v1::Trace>& traces) {
  Table table({{"#", Align::kRight},
               {"workload"},
               {"axes"},
               {"status"},
               {"latency ms", Align::kRight},
               {"ref ms", Align::kRight},
               {"speedup", Align::kRight},
               {"max abs err", Align::kRight},
               {"max rel err", Align::kRight}});
  int index = 0;
  for (const v1::Trace& trace : traces) {
    ++index;
    const v1::Evaluation& e = trace.evaluation();
    bool compared = e.has_correctness();
    table.AddRow({absl::StrCat(index), ShortId(trace.workload().uuid()), AxesText(trace.workload()),
                  Status(trace), FormatMs(e.performance().latency_ms()),
                  FormatMs(e.performance().reference_latency_ms()),
                  FormatSpeedup(e.performance().speedup_factor()),
                  compared ? FormatError(e.correctness().max_absolute_error()) : kAbsent,
                  compared ? FormatError(e.correctness().max_relative_error()) : kAbsent});
  }
  return table.Render();
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
  return line + "\n";
}

std::string FailureDetails(const v1::Run& run) {
  if (run.status() == v1::PASSED) return "";
  std::string out;
  if (!run.reason().empty()) absl::StrAppend(&out, "reason: ", run.reason(), "\n");
  if (run.status() == v1::COMPILE_ERROR && !run.compile_log().empty()) {
    absl::StrAppend(&out, "compiler log:\n",
                    Indent(TailLines(run.compile_log(), kCompileLogLines), "  "));
  }
  // Workloads that failed the same way are reported once.
  struct Failure {
    std::string heading;
    std::string log;
    std::vector<std::string> workloads;
  };
  std::vector<Failure> failures;
  int index = 0;
  for (const v1::Trace& trace : run.traces()) {
    ++index;
    v1::EvaluationStatus s = trace.evaluation().status();
    if (s == v1::PASSED || s == v1::COMPILE_ERROR) continue;
    std::string heading = Status(trace);
    if (!trace.kiln().reason().empty()) absl::StrAppend(&heading, ": ", trace.kiln().reason());
    std::string log = TailLines(trace.evaluation().log(), kLogExcerptLines);
    std::string who = absl::StrCat("#", index, " (", ShortId(trace.workload().uuid()), ")");
    auto it = std::find_if(failures.begin(), failures.end(),
                           [&](const Failure& f) { return f.heading == heading && f.log == log; });
    if (it == failures.end()) {
      failures.push_back({heading, log, {who}});
    } else {
      it->workloads.push_back(who);
    }
  }
  for (const Failure& f : failures) {
    absl::StrAppend(&out, f.workloads.size() == 1 ? "workload " : "workloads ",
                    absl::StrJoin(f.workloads, ", "), ": ", f.heading, "\n", Indent(f.log, "  "));
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
    text = RunStateName(progress.stage());
    if (!progress.message().empty()) absl::StrAppend(&text, " (", progress.message(), ")");
  }
  std::string line = absl::StrCat("[run ", ShortId(progress.run_id()), "] ", text);
  // Repeated identical updates (a heartbeat, the same stage re-announced) print once.
  if (line == last_line_) return;
  last_line_ = line;
  err_ << line << "\n" << std::flush;
}

}  // namespace kiln::cli
