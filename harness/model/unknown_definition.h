// One wording for a definition name that is not registered, wherever a name is taken (submit,
// leaderboard, report, runs list, solutions, settings): the name, and the names that are, so a
// typo is seen at once.
#ifndef KILN_HARNESS_MODEL_UNKNOWN_DEFINITION_H_
#define KILN_HARNESS_MODEL_UNKNOWN_DEFINITION_H_

#include <string>
#include <vector>

namespace kiln {

// "unknown definition 'rmsnorm_h4069' (registered on this node: gemm_n4096_k4096,
// rmsnorm_h4096)"; at most 20 names, then "and N more (kiln defs list)"; "(no definition is
// registered on this node)" when there is none.
std::string UnknownDefinitionMessage(const std::string& name,
                                     const std::vector<std::string>& registered);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_UNKNOWN_DEFINITION_H_
