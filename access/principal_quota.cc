#include "access/principal_quota.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace kiln {

PrincipalQuota::PrincipalQuota(QuotaLimits limits, Clock clock)
    : limits_(limits), clock_(std::move(clock)) {}

absl::StatusOr<std::shared_ptr<void>> PrincipalQuota::Admit(const Principal& principal) {
  if (!HasQuota(principal)) return std::shared_ptr<void>();
  const absl::Time now = clock_();
  std::lock_guard<std::mutex> lock(mu_);
  Usage& usage = usage_[principal.name];
  while (!usage.admitted.empty() && usage.admitted.front() <= now - absl::Hours(1)) {
    usage.admitted.pop_front();
  }
  if (limits_.max_queued > 0 && usage.queued >= limits_.max_queued) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "principal '", principal.name, "' has ", usage.queued,
        " runs queued or running, the limit (--max-queued-per-principal) is ", limits_.max_queued));
  }
  if (limits_.max_runs_per_hour > 0 &&
      static_cast<int>(usage.admitted.size()) >= limits_.max_runs_per_hour) {
    const double wait_s = absl::ToDoubleSeconds(usage.admitted.front() + absl::Hours(1) - now);
    return absl::ResourceExhaustedError(absl::StrCat(
        "principal '", principal.name, "' submitted ", usage.admitted.size(),
        " runs in the last hour, the limit (--max-runs-per-hour) is ", limits_.max_runs_per_hour,
        "; the next one is admitted in ", static_cast<int64_t>(std::ceil(wait_s)), " s"));
  }
  ++usage.queued;
  usage.admitted.push_back(now);
  const std::string name = principal.name;
  // A non-null pointer whose deleter gives the slot back.
  return std::shared_ptr<void>(this, [name](PrincipalQuota* quota) { quota->Release(name); });
}

void PrincipalQuota::Release(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = usage_.find(name);
  if (it == usage_.end()) return;
  --it->second.queued;
  if (it->second.queued == 0 && it->second.admitted.empty()) usage_.erase(it);
}

int PrincipalQuota::queued(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = usage_.find(name);
  return it == usage_.end() ? 0 : it->second.queued;
}

}  // namespace kiln
