#include "client/evaluation.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/model/json_interop.h"
#include "report/json_output.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) { g_interrupted.store(true); }

// Turns SIGINT into TryCancel() on `context` while alive. A second Ctrl-C falls back to the
// default action (SA_RESETHAND), so a stuck client can still be killed.
class InterruptCancels {
 public:
  explicit InterruptCancels(grpc::ClientContext* context) : context_(context) {
    g_interrupted.store(false);
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &previous_);
    watcher_ = std::thread([this] { Watch(); });
  }
  ~InterruptCancels() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    watcher_.join();
    sigaction(SIGINT, &previous_, nullptr);
  }
  bool fired() const { return fired_.load(); }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (!fired_ && g_interrupted.load()) {
        fired_ = true;
        context_->TryCancel();
      }
    }
  }

  grpc::ClientContext* context_;
  struct sigaction previous_ {};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> fired_{false};
  std::thread watcher_;
};

void NoteRunId(const std::string& id, const v1::EvaluateRequest& request, Console& console) {
  console.err << "kiln: run " << id << " admitted (definition " << request.definition();
  if (!request.mode().empty()) console.err << ", mode " << request.mode();
  console.err << ")\n" << std::flush;
}

}  // namespace

StreamedRuns ReadRunEvents(
    grpc::ClientReaderInterface<v1::EvaluateEvent>& reader,
    const std::function<void(const v1::Progress& progress, bool first)>& on_progress) {
  StreamedRuns streamed;
  std::map<std::string, google::protobuf::RepeatedPtrField<v1::Trace>> traces;
  v1::EvaluateEvent event;
  while (reader.Read(&event)) {
    if (event.has_progress()) {
      const v1::Progress& p = event.progress();
      const bool first = !p.run_id().empty() && traces.count(p.run_id()) == 0;
      if (first) {
        traces[p.run_id()];
        streamed.run_ids.push_back(p.run_id());
      }
      on_progress(p, first);
      if (p.has_trace()) *traces[p.run_id()].Add() = p.trace();
    } else if (event.has_run()) {
      v1::Run run = event.run();
      if (traces.count(run.run_id()) == 0) streamed.run_ids.push_back(run.run_id());
      // A final run without traces (a server that streamed them already) gets the streamed ones.
      if (run.traces().empty()) *run.mutable_traces() = traces[run.run_id()];
      streamed.last_final = run.run_id();
      streamed.runs[run.run_id()] = std::move(run);
    }
  }
  streamed.status = reader.Finish();
  return streamed;
}

namespace {

// One run's stream: `open` starts the call on `context`; `admitted` is told the run's id.
EvaluationOutcome StreamOneRun(
    Connection& connection, double timeout_s, Console& console,
    const std::function<std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>>(
        grpc::ClientContext*)>& open,
    const std::function<void(const std::string& run_id)>& admitted) {
  grpc::ClientContext context;
  connection.Prepare(&context, timeout_s);
  InterruptCancels interrupts(&context);
  std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader = open(&context);
  ProgressPrinter progress(console.err, console.err_is_tty);
  std::string last_stage;
  StreamedRuns streamed = ReadRunEvents(*reader, [&](const v1::Progress& p, bool first) {
    if (first) admitted(p.run_id());
    if (!p.message().empty()) last_stage = p.message();
    progress.Print(p);
  });
  progress.Finish();
  EvaluationOutcome outcome = OneRun(std::move(streamed));
  outcome.interrupted = interrupts.fired();
  outcome.timeout_s = timeout_s;
  outcome.last_stage = std::move(last_stage);
  return outcome;
}

}  // namespace

EvaluationOutcome StreamEvaluation(Connection& connection, const v1::EvaluateRequest& request,
                                   double timeout_s, Console& console) {
  return StreamOneRun(
      connection, timeout_s, console,
      [&](grpc::ClientContext* context) { return connection.stub().Evaluate(context, request); },
      [&](const std::string& id) { NoteRunId(id, request, console); });
}

EvaluationOutcome StreamProfile(Connection& connection, const v1::ProfileRequest& request,
                                double timeout_s, Console& console) {
  return StreamOneRun(
      connection, timeout_s, console,
      [&](grpc::ClientContext* context) { return connection.stub().Profile(context, request); },
      [&](const std::string& id) {
        console.err << "kiln: profile run " << id << " admitted (definition "
                    << request.definition() << ", section "
                    << (request.section().empty() ? "basic" : request.section()) << ")\n"
                    << std::flush;
      });
}

EvaluationOutcome OneRun(StreamedRuns streamed) {
  EvaluationOutcome outcome;
  outcome.status = streamed.status;
  if (!streamed.last_final.empty()) {
    outcome.run_id = streamed.last_final;
  } else if (!streamed.run_ids.empty()) {
    outcome.run_id = streamed.run_ids.front();
  }
  if (auto it = streamed.runs.find(outcome.run_id); it != streamed.runs.end()) {
    outcome.run = std::move(it->second);
  }
  return outcome;
}

namespace {

int ReportInterrupted(const EvaluationOutcome& outcome, bool json, Console& console) {
  if (json) {
    console.out << Dump(Json{{"run_id", outcome.run_id},
                             {"status", std::string(StatusName(v1::CANCELLED))},
                             {"traces", Json::array()}});
  } else {
    console.out << "run " << (outcome.run_id.empty() ? "(none)" : outcome.run_id)
                << ": CANCELLED (interrupted)\n";
  }
  console.err << "kiln: interrupted; the harness cancels the run\n";
  return kExitFailed;
}

}  // namespace

int ReportEvaluation(const EvaluationOutcome& outcome, bool json, Connection& connection,
                     Console& console) {
  if (outcome.interrupted) return ReportInterrupted(outcome, json, console);
  if (!outcome.status.ok() || !outcome.run) {
    if (outcome.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
        outcome.timeout_s > 0) {
      // Not gRPC's "Deadline Exceeded": which limit ran out, where the run was, what follows.
      console.err << "kiln: --timeout-s " << absl::StrFormat("%g", outcome.timeout_s) << " ran out"
                  << (outcome.last_stage.empty()
                          ? std::string(" before the run was admitted")
                          : absl::StrCat(" with the run at '", outcome.last_stage, "'"))
                  << "; the call ended and the harness cancels the run. A larger --timeout-s "
                     "gives it more time.\n";
    } else if (!outcome.status.ok()) {
      connection.Fail(outcome.status, console);
    } else {
      console.err << "kiln: the harness ended the evaluation without a result\n";
    }
    if (!outcome.run_id.empty()) {
      console.err << "kiln: run " << outcome.run_id << " did not report a verdict; see `kiln "
                  << "runs show " << outcome.run_id << "`\n";
    }
    return kExitUsage;
  }
  const v1::Run& run = *outcome.run;
  if (json) {
    console.out << Dump(Json{{"run_id", run.run_id()},
                             {"status", std::string(StatusName(run.status()))},
                             {"traces", TracesToJson(run.traces())}});
  } else {
    console.out << TraceTable(run.traces()) << SummaryLine(run) << FailureDetails(run);
    // Warnings (a check that was not made, a degenerate definition), each once.
    std::set<std::string> warnings;
    for (const v1::Trace& trace : run.traces()) {
      for (const std::string& w : trace.kiln().warnings()) {
        if (warnings.insert(w).second) console.out << "warning: " << w << "\n";
      }
    }
  }
  console.out << std::flush;
  return run.status() == v1::PASSED ? kExitOk : kExitFailed;
}

BatchOutcome StreamBatch(Connection& connection, const v1::EvaluateBatchRequest& request,
                         double timeout_s, Console& console) {
  BatchOutcome outcome;
  grpc::ClientContext context;
  connection.Prepare(&context, timeout_s);
  InterruptCancels interrupts(&context);
  std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader =
      connection.stub().EvaluateBatch(&context, request);
  ProgressPrinter progress(console.err, /*in_place=*/false);  // several runs interleave
  int admitted = 0;
  StreamedRuns streamed = ReadRunEvents(*reader, [&](const v1::Progress& p, bool first) {
    if (first) {
      const int i = admitted++;
      console.err << "kiln: run " << p.run_id() << " admitted ("
                  << (i < request.solutions_size()
                          ? absl::StrCat("solution ", request.solutions(i).name())
                      : i < request.confirm_runs_size()
                          ? absl::StrCat("confirmation ", i + 1, " of ",
                                         request.confirm_runs_size())
                          : std::string("batch run"))
                  << ")\n" << std::flush;
    }
    progress.Print(p);
  });
  progress.Finish();
  outcome.run_ids = std::move(streamed.run_ids);
  outcome.runs = std::move(streamed.runs);
  outcome.status = streamed.status;
  outcome.interrupted = interrupts.fired();
  return outcome;
}

int ReportBatch(const BatchOutcome& outcome, bool json, Connection& connection, Console& console) {
  if (!outcome.status.ok() && outcome.runs.empty()) {
    connection.Fail(outcome.status, console);
    return outcome.interrupted ? kExitFailed : kExitUsage;
  }
  bool all_passed = outcome.status.ok() && !outcome.runs.empty();
  Json runs = Json::array();
  std::string batch_id;
  for (const std::string& id : outcome.run_ids) {
    auto it = outcome.runs.find(id);
    if (it == outcome.runs.end()) {
      all_passed = false;
      console.err << "kiln: run " << id << " did not report a verdict; see `kiln runs show " << id
                  << "`\n";
      continue;
    }
    const v1::Run& run = it->second;
    all_passed &= run.status() == v1::PASSED;
    if (batch_id.empty() && !run.traces().empty()) batch_id = run.traces(0).kiln().batch_id();
    if (json) {
      runs.push_back(Json{{"run_id", run.run_id()},
                          {"solution", run.solution_name()},
                          {"status", std::string(StatusName(run.status()))},
                          {"traces", TracesToJson(run.traces())}});
    } else {
      console.out << "== " << run.solution_name() << " (run " << run.run_id() << ")\n"
                  << TraceTable(run.traces()) << SummaryLine(run) << FailureDetails(run) << "\n";
    }
  }
  if (json) console.out << Dump(Json{{"batch_id", batch_id}, {"runs", runs}});
  if (!outcome.status.ok()) connection.Fail(outcome.status, console);
  console.out << std::flush;
  return all_passed ? kExitOk : kExitFailed;
}

}  // namespace kiln::cli
