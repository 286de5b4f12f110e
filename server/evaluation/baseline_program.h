// How a workload's named baseline is run (torch_eager, torch_compile, solution:NAME): by the
// evaluation, which times it beside the reference, and by a profile, which profiles it beside the
// solution. Defined in workload_evaluation.cc, beside the timing-cache keys it uses.
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

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_BASELINE_PROGRAM_H_
