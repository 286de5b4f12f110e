// How a workload's named baseline is run (torch_eager, torch_compile, solution:NAME): by the
// evaluation, which times it beside the reference, and by a profile, which profiles it beside the
// solution. Defined in baselines.cc, with the timing-cache keys and timing the baselines.
#ifndef KILN_SERVER_EVALUATION_BASELINE_PROGRAM_H_
#define KILN_SERVER_EVALUATION_BASELINE_PROGRAM_H_

#include <string>

#include "server/evaluation/role_run.h"
#include "server/evaluation/workload_evaluation.h"
#include "server/node_context.h"

namespace kiln {

struct BaselineProgram {
  RoleProgram program;
  std::string source;       // python (the definition's reference) | solution
  std::string cache_key;    // its latency in the node's timing cache
  std::string missing;      // why it cannot be run ("" when it can)
};

// torch_eager / torch_compile: the Python reference under torch; solution:NAME: the registered
// solution's build, run like a candidate (without the reference's source) but trusted as
// operator-registered code. `ordinal` numbers the solution baselines for their folders.
BaselineProgram BaselineProgramOf(const NodeContext& node, const WorkloadJob& job,
                                  const std::string& name, int ordinal);

// The key of a latency in the node's timing cache: `what` ran (a build's cache key, the Python
// reference's source under a torch), the workload, the mode and its counts, the backend and the
// device.
std::string TimingCacheKeyOf(const NodeContext& node, const WorkloadJob& job, std::string what);

// The key of a reference or baseline latency: what ran (the compiled native reference, or the
// Python reference's source under this torch as `baseline`), then as TimingCacheKeyOf.
std::string TimingCacheKey(const NodeContext& node, const WorkloadJob& job,
                           const std::string& baseline);

// The baselines of a workload whose reference ran: the reference always, then those the run
// asked for, timed (unless cached) by the Python runner with the candidate's protocol on the
// same device slot and inputs. torch_eager is the reference itself when the reference is the
// Python run() (flashinfer-bench's reference is eager torch); torch_compile is run() under
// torch.compile, compiled in the untimed checked call and its outputs compared with the
// reference's.
void AddBaselines(const NodeContext& node, const WorkloadJob& job, const v1::WorkerRequest& base,
                  const RoleRun& ref, const v1::TimingResult& ref_timing, bool ref_cached,
                  const StageFn& on_stage, const std::atomic<bool>* cancel, WorkloadResult& out);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_BASELINE_PROGRAM_H_
