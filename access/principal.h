// Who is calling kiln-harness and what its role lets it do. Roles (DESIGN.md §7):
//   team      submits; sees its own runs in full, and only the scores of other principals;
//   agent     submits; sees its own runs only;
//   operator  sees and does everything (registering definitions included).
#ifndef KILN_ACCESS_PRINCIPAL_H_
#define KILN_ACCESS_PRINCIPAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln {

enum class Role { kTeam, kAgent, kOperator };

struct Principal {
  std::string name;  // as in the tokens file; recorded with every run it submits
  Role role = Role::kTeam;
};

// The principal of a harness started without a tokens file (loopback only).
Principal LocalOperator();
// The principal of runs the harness starts itself (the reference check of an added definition).
// Reserved: a tokens file cannot name it, and leaderboards leave it out.
inline constexpr char kHarnessPrincipal[] = "kiln";

// "team", "agent", "operator".
const char* RoleName(Role role);
// INVALID_ARGUMENT naming the accepted roles.
absl::StatusOr<Role> ParseRole(const std::string& name);

// Whether `caller` may see a run submitted by `owner` in full: sources, logs, errors, artifacts.
bool MaySeeRun(const Principal& caller, const std::string& owner);
// PERMISSION_DENIED naming the run (and never its contents) unless MaySeeRun.
absl::Status CheckRunAccess(const Principal& caller, const std::string& run_id,
                            const std::string& owner);
// Whether `caller` may list other principals' runs as scores (and read leaderboards).
bool MaySeeOthersScores(const Principal& caller);
// PERMISSION_DENIED unless `caller` is an operator; `what` says what was attempted.
absl::Status RequireOperator(const Principal& caller, const std::string& what);
// Whether per-principal quotas apply to `caller` (operators are exempt).
bool HasQuota(const Principal& caller);

}  // namespace kiln

#endif  // KILN_ACCESS_PRINCIPAL_H_
