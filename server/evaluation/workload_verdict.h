// How a workload's verdict is set from what its workers reported (workload_evaluation.cc): the
// reference's and the candidate's outcomes, the comparison's verdict with the timings, and the
// integrity checks applied to a PASSED timing (the speed-of-light floor, the own-kernel checks).
#ifndef KILN_SERVER_EVALUATION_WORKLOAD_VERDICT_H_
#define KILN_SERVER_EVALUATION_WORKLOAD_VERDICT_H_

#include <atomic>
#include <string>

#include "server/evaluation/output_comparison.h"
#include "server/evaluation/role_run.h"
#include "server/evaluation/workload_evaluation.h"

namespace kiln {

// Sets the workload's status, log and reason.
void SetFailure(WorkloadResult& out, v1::EvaluationStatus status, const std::string& reason,
                const std::string& log);

// The reference's outcome; false (with `out` set) when the workload cannot go on.
bool AcceptReference(const RoleRun& ref, const std::atomic<bool>* cancel, WorkloadResult& out);

// The candidate's outcome as its worker reported it; false (with `out` set) when it failed.
bool AcceptCandidate(const RoleRun& cand, WorkloadResult& out);

// The comparison's verdict, its errors, and for a PASSED one the performance (as
// flashinfer-bench: performance only for a correct candidate).
void ApplyVerdict(const OutputVerdict& verdict, const v1::TimingResult& timing,
                  const v1::TimingResult& ref_timing, WorkloadResult& out);

// The node's peak bandwidth on the candidate's device, measured by a kiln-worker on this device
// slot the first time; 0 when unknown (no floor applies).
double PeakBandwidth(const NodeContext& node, const WorkloadJob& job, v1::WorkerRequest request,
                     const StageFn& on_stage, const std::atomic<bool>* cancel);

// integrity.faster_than_memory: a PASSED candidate faster than the workload's floor is REJECTED.
// Only timings taken after a cache flush are judged (data may sit in cache otherwise).
void ApplyFloor(const WorkloadJob& job, double peak_gbps, WorkloadResult& out);

// integrity.no_own_kernel (own_kernels.h), then integrity.own_kernel_share (own_work.h), whose
// split of the GPU time the trace keeps either way: REJECTED, or a warning where the definition
// allows torch.
void ApplyOwnKernelCheck(const WorkloadJob& job, WorkloadResult& out);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_WORKLOAD_VERDICT_H_
