// Per-principal admission limits: runs queued or running at once, and runs submitted in any
// sliding hour. Operators are exempt. The hourly window is kept in memory: it starts empty when
// the harness starts.
//
//   PrincipalQuota quota({.max_queued = 4, .max_runs_per_hour = 60});
//   auto hold = quota.Admit(principal);  // RESOURCE_EXHAUSTED naming the limit
//   ...                                  // destroying the last copy of *hold frees the slot
#ifndef KILN_ACCESS_PRINCIPAL_QUOTA_H_
#define KILN_ACCESS_PRINCIPAL_QUOTA_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "access/principal.h"

namespace kiln {

struct QuotaLimits {
  int max_queued = 0;         // per principal, admitted and unfinished; 0: no limit
  int max_runs_per_hour = 0;  // per principal, admissions in any 60 minutes; 0: no limit
};

class PrincipalQuota {
 public:
  using Clock = std::function<absl::Time()>;

  explicit PrincipalQuota(
      QuotaLimits limits, Clock clock = [] { return absl::Now(); });
  PrincipalQuota(const PrincipalQuota&) = delete;
  PrincipalQuota& operator=(const PrincipalQuota&) = delete;

  // Counts one admitted run of `principal`. The returned hold keeps it counted as queued until
  // destroyed (it must not outlive this object). RESOURCE_EXHAUSTED names the limit and its flag.
  absl::StatusOr<std::shared_ptr<void>> Admit(const Principal& principal);

  // Runs of `name` admitted and not yet finished.
  int queued(const std::string& name) const;

 private:
  struct Usage {
    int queued = 0;
    std::deque<absl::Time> admitted;  // within the last hour, oldest first
  };
  void Release(const std::string& name);

  const QuotaLimits limits_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::map<std::string, Usage> usage_;  // guarded by mu_
};

}  // namespace kiln

#endif  // KILN_ACCESS_PRINCIPAL_QUOTA_H_
