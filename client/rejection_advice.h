// What a contest team should do about a failed integrity check: one sentence per check that a
// REJECTED reason (or a failure reason, or a warning) names, shown by `kiln runs show`.
#ifndef KILN_CLIENT_REJECTION_ADVICE_H_
#define KILN_CLIENT_REJECTION_ADVICE_H_

#include <string>

namespace kiln::cli {

// The advice for the check `reason` starts with ("integrity.input_mutation: ..."), or "" when
// the reason names no integrity check.
std::string RejectionAdvice(const std::string& reason);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_REJECTION_ADVICE_H_
