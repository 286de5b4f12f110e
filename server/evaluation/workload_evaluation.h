// One workload of a run, on a device slot: the reference worker (timed unless its timing is
// cached), the candidate worker, then the harness's comparison of their outputs. Produces the
// workload's evaluation (status, log, correctness, performance) and kiln's detail.
#ifndef KILN_SERVER_EVALUATION_WORKLOAD_EVALUATION_H_
#define KILN_SERVER_EVALUATION_WORKLOAD_EVALUATION_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/compile/toolchain.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"
#include "server/backend.h"
#include "server/node_context.h"

namespace kiln {

class BatchReferences;

struct WorkloadJob {
  const v1::Definition* definition = nullptr;
  const v1::Workload* workload = nullptr;
  int index = 0;
  std::string run_id;
  std::string mode;
  const NodeBackend* backend = nullptr;
  int device_index = 0;
  const v1::Solution* solution = nullptr;   // the candidate's sources and spec
  const CompileOutput* candidate = nullptr;  // compiled, ok (a Python solution: its package)
  const CompileOutput* reference = nullptr;  // compiled, ok; null for a Python reference
  std::string reference_source;              // python | native_reference (admission.h)
  // torch_eager | torch_compile | solution:NAME
  const std::vector<std::string>* baselines = nullptr;
  // The registered solution of every "solution:NAME" in `baselines`, keyed by that name (as
  // admitted: AdmittedRun::solution_baselines).
  const std::map<std::string, v1::Solution>* solution_baselines = nullptr;
  // Their builds (a Python solution's checked package), keyed the same way; a baseline whose
  // build failed is absent here and has the reason in `baseline_build_errors`.
  const std::map<std::string, CompileOutput>* baseline_builds = nullptr;
  const std::map<std::string, std::string>* baseline_build_errors = nullptr;
  std::string job_dir;  // this workload's folder (one-shot workers); removed by the caller
  // EvaluateBatch: the batch's id seeds the inputs instead of run_id, and its runs share the
  // reference's outputs. Empty / null for a run of its own.
  std::string batch_id;
  BatchReferences* batch = nullptr;
};

struct WorkloadResult {
  v1::Evaluation evaluation;  // status, log, correctness, performance
  v1::TraceDetail detail;
  std::string worker_log;  // the candidate worker's output (tail), for the archive
  // The logs of the baseline workers that ran (name, tail), archived beside it.
  std::vector<std::pair<std::string, std::string>> baseline_logs;
};

// Called on the device slot's thread with RUN_VERIFYING / RUN_TIMING as the workers report their
// stages, and with RUN_STATE_UNSPECIFIED when a worker has ended.
using StageFn = std::function<void(v1::RunState)>;

// Number of trials (fresh inputs each) verified and timed per workload: the mode's (3 for
// official, 1 for kernelbench and robust), as the worker runs them.
int TrialsFor(const std::string& mode, const v1::TimingConfig& config);

// What every worker of the job's workload is sent: the definition, the workload, `trials` input
// seeds (secret: mixed from the node's secret and the run's or batch's id), the timing
// configuration, the backend, the device and the blob root.
v1::WorkerRequest WorkloadBaseRequest(const NodeContext& node, const WorkloadJob& job,
                                      const v1::TimingConfig& config, int trials);

// Called once per workload, as soon as its result is final, with the job's index.
using WorkloadDone = std::function<void(int index, WorkloadResult result)>;

// Whose work on a workload begins (Progress.role): the reference's, the candidate's or the
// baselines'.
inline constexpr char kRoleReference[] = "reference";
inline constexpr char kRoleCandidate[] = "candidate";
inline constexpr char kRoleBaselines[] = "baselines";
using WorkloadStarted = std::function<void(int index, const char* role)>;

// Evaluates a run's workloads (one definition, one candidate, one device slot) in three phases:
//   1. every workload's reference (by the slot's warm reference worker when node.warm is set,
//      else by a worker of its own), timed unless its latency is cached;
//   2. the candidate: one fresh sandboxed process serving the workloads one request at a time,
//      each judged (outputs compared, speed-of-light floor) as soon as its result is in; after a
//      failure ends that process, the next workload gets a new one;
//   3. the baselines, once the candidate's process has ended (nothing of the candidate runs
//      while anything is timed for comparison with it).
// The candidate's folder is `run_dir`/cand; `on_workload(index, role)` is called as each role's
// work on a workload begins. Never fails: every way a workload can end is a status with a reason, and `done`
// is called for every job it reached (a run cancelled before some workloads leaves those to the
// caller, which marks them CANCELLED).
void EvaluateWorkloads(const NodeContext& node, const std::vector<WorkloadJob>& jobs,
                       const std::string& run_dir, const StageFn& on_stage,
                       const WorkloadStarted& on_workload, const std::atomic<bool>* cancel,
                       const WorkloadDone& done);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_WORKLOAD_EVALUATION_H_
