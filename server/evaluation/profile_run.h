// A profile's Nsight Compute part: one worker per target (the solution, the reference, a
// baseline) run under `ncu --profile-from-start off` in the worker's sandbox, on the run's device
// slot, profiling the one call the worker brackets with cudaProfilerStart/Stop
// (WorkerRequest.profile_call); then the report read back with `ncu --import` (sandboxed too:
// the report was written where the candidate could write) and parsed into kiln's figures.
//
//   ProfileOutcome o = ProfileTarget(node, job, Candidate(job), "solution", "basic", cancel);
//   if (o.target.error().empty()) ... o.target.kernels(), o.report (the .ncu-rep bytes)
#ifndef KILN_SERVER_EVALUATION_PROFILE_RUN_H_
#define KILN_SERVER_EVALUATION_PROFILE_RUN_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "harness/profile/ncu_profile.h"
#include "kiln/v1/types.pb.h"
#include "server/evaluation/role_run.h"
#include "server/evaluation/workload_evaluation.h"
#include "server/node_context.h"

namespace kiln {

// ncu's options for `section` (sets, sections and the metrics kiln reads).
std::vector<std::string> NcuCollectionArgs(const std::string& section);

// The most kernels of one call that are profiled (the first ones launched).
inline constexpr int kMaxProfiledKernels = 50;

// kiln's figures of one kernel, with its direction (DirectionFor), as the proto carries them.
v1::KernelProfile KernelProfileProto(const KernelProfile& kernel);

struct ProfileOutcome {
  v1::ProfiledTarget target;  // kernels, or the error; seconds
  std::string report;         // the .ncu-rep bytes ("" when none was written)
  std::string log;            // the worker's output under ncu (tail), ncu's own lines included
};

// Profiles `program` as `target` ("solution", "reference", torch_eager, torch_compile,
// solution:NAME) on the job's workload and device. The caller holds the device slot and has
// checked that the node can profile (node.profiling). Never fails as a function: the outcome's
// error says what went wrong (the worker's failure, ncu's, the report's).
ProfileOutcome ProfileTarget(const NodeContext& node, const WorkloadJob& job,
                             const RoleProgram& program, const std::string& target,
                             const std::string& section, const std::atomic<bool>* cancel);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_PROFILE_RUN_H_
