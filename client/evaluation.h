// One Evaluate call as the CLI runs it for `kiln submit` and `kiln demo`: stream the events,
// print progress, cancel on Ctrl-C, then print the table (or the JSON object) and choose the
// exit code.
#ifndef KILN_CLIENT_EVALUATION_H_
#define KILN_CLIENT_EVALUATION_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/cli.h"
#include "client/connection.h"
#include "kiln/v1/harness.pb.h"

namespace kiln::cli {

// What an Evaluate or EvaluateBatch stream carried: each run (in the order of its first event)
// with its final Run, whose traces are the streamed ones when the final event has none.
struct StreamedRuns {
  std::vector<std::string> run_ids;
  std::map<std::string, v1::Run> runs;  // final runs, by id
  // The id of the last final run streamed: a one-run call's verdict. Through the controller a
  // run lost with its harness is evaluated again, so the stream admits more than one run.
  std::string last_final;
  grpc::Status status;                  // how the call ended
};

// Reads `reader` to its end; `on_progress(progress, first)` sees every progress event, `first`
// for a run's first one.
StreamedRuns ReadRunEvents(
    grpc::ClientReaderInterface<v1::EvaluateEvent>& reader,
    const std::function<void(const v1::Progress& progress, bool first)>& on_progress);

struct EvaluationOutcome {
  std::string run_id;          // from the first event; empty if none came
  std::optional<v1::Run> run;  // the final event's run
  grpc::Status status;         // how the call ended
  bool interrupted = false;    // cancelled by Ctrl-C
  double timeout_s = 0;        // the call's deadline (--timeout-s), 0 when none was set
  std::string last_stage;      // the last progress line ("workload 1/1: timing")
};

// The outcome of an Evaluate stream (one run): its id and final run, and how the call ended.
EvaluationOutcome OneRun(StreamedRuns streamed);

// Streams Evaluate with a deadline of `timeout_s`, printing progress on console.err. While it
// runs, SIGINT cancels the call (the harness then marks the run CANCELLED).
EvaluationOutcome StreamEvaluation(Connection& connection, const v1::EvaluateRequest& request,
                                   double timeout_s, Console& console);
// The same for a Profile call.
EvaluationOutcome StreamProfile(Connection& connection, const v1::ProfileRequest& request,
                                double timeout_s, Console& console);

// Prints the outcome: the table, summary and failure details on console.out (or with `json`
// one object {"run_id","status","traces"}), errors on console.err. Returns kExitOk iff every
// workload PASSED, kExitFailed for another verdict or a Ctrl-C, kExitUsage for RPC errors.
// A batch (EvaluateBatch): every run's outcome, in the order the solutions were given.
struct BatchOutcome {
  std::vector<std::string> run_ids;  // as the runs were admitted (the solutions' order)
  std::map<std::string, v1::Run> runs;  // final runs, by id
  grpc::Status status;
  bool interrupted = false;
};

// Streams EvaluateBatch as StreamEvaluation streams Evaluate.
BatchOutcome StreamBatch(Connection& connection, const v1::EvaluateBatchRequest& request,
                         double timeout_s, Console& console);

// Prints every run of the batch (text: each run's table and summary under its solution's name;
// json: {"batch_id", "runs": [{"run_id", "solution", "status", "traces"}]}). Exit 0 iff every
// run PASSED.
int ReportBatch(const BatchOutcome& outcome, bool json, Connection& connection, Console& console);

int ReportEvaluation(const EvaluationOutcome& outcome, bool json, Connection& connection,
                     Console& console);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_EVALUATION_H_
