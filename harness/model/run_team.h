// Who a run is for and who wrote it: the one rule every ranking and page uses (docs/report.md,
// "Who is a team").
#ifndef KILN_HARNESS_MODEL_RUN_TEAM_H_
#define KILN_HARNESS_MODEL_RUN_TEAM_H_

#include <string>

#include "kiln/v1/types.pb.h"

namespace kiln {

// The team a run counts for: the principal that submitted it ("local" on a harness without
// --tokens, which serves every caller as "local"). The solution's self-declared author never
// names a team: anyone can write any author into a solution.
std::string TeamOf(const v1::Run& run);

// Who wrote the run's solution, as the solution declares it ("" when it names nobody).
std::string AuthorOf(const v1::Run& run);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_RUN_TEAM_H_
