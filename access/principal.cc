#include "access/principal.h"

#include "absl/strings/str_cat.h"

namespace kiln {

Principal LocalOperator() { return Principal{"local", Role::kOperator}; }

const char* RoleName(Role role) {
  switch (role) {
    case Role::kTeam:
      return "team";
    case Role::kAgent:
      return "agent";
    case Role::kOperator:
      return "operator";
  }
  return "team";
}

absl::StatusOr<Role> ParseRole(const std::string& name) {
  for (Role role : {Role::kTeam, Role::kAgent, Role::kOperator}) {
    if (name == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("role '", name, "' is not one of team, agent, operator"));
}

bool MaySeeRun(const Principal& caller, const std::string& owner) {
  return caller.role == Role::kOperator || caller.name == owner;
}

absl::Status CheckRunAccess(const Principal& caller, const std::string& run_id,
                            const std::string& owner) {
  if (MaySeeRun(caller, owner)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("run '", run_id, "' was submitted by another principal"));
}

bool MaySeeOthersScores(const Principal& caller) { return caller.role != Role::kAgent; }

absl::Status RequireOperator(const Principal& caller, const std::string& what) {
  if (caller.role == Role::kOperator) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(what, " needs the operator role ('", caller.name,
                                                  "' is ", RoleName(caller.role), ")"));
}

bool HasQuota(const Principal& caller) { return caller.role != Role::kOperator; }

}  // namespace kiln
