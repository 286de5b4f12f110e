#include "controller/promotion.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace kiln::controller {

bool AllPassed(const Json& s) {
  if (!s.is_object()) return false;
  if (s.value("status", "") != "PASSED") return false;
  const Json workloads = s.value("workloads", Json::array());
  if (workloads.empty()) return false;
  for (const auto& w : workloads) {
    if (w.value("status", "") != "PASSED") return false;
  }
  return s.value("mean_latency_ms", 0.0) > 0;
}

PromotionDecision PreliminaryDecision(const Json& first, double incumbent_latency_ms,
                                      double incumbent_noise, const PromotionSpec& rule) {
  PromotionDecision d;
  if (!AllPassed(first)) {  // also covers a summary that is not an object
    d.reason = "not every workload PASSED";
    return d;
  }
  d.latency_ms = first.value("mean_latency_ms", 0.0);
  d.noise = std::max({rule.min_improvement, first.value("relative_noise", 0.0), incumbent_noise});
  if (incumbent_latency_ms <= 0) {
    d.promote = true;
    d.reason = "no incumbent latency yet";
    return d;
  }
  double gain = 1 - d.latency_ms / incumbent_latency_ms;
  d.promote = gain > d.noise;
  d.reason = absl::StrFormat("gain %.2f%% vs noise %.2f%%", gain * 100, d.noise * 100);
  return d;
}

PromotionDecision DecidePromotion(const Json& first, const Json* confirm,
                                  double incumbent_latency_ms, double incumbent_noise,
                                  const PromotionSpec& rule) {
  PromotionDecision d = PreliminaryDecision(first, incumbent_latency_ms, incumbent_noise, rule);
  if (!d.promote || confirm == nullptr) return d;
  if (!AllPassed(*confirm)) {
    d.promote = false;
    d.reason = "the repeat did not pass on every workload";
    return d;
  }
  double m1 = first.value("mean_latency_ms", 0.0);
  double m2 = confirm->value("mean_latency_ms", 0.0);
  d.latency_ms = (m1 + m2) / 2;
  double spread = std::fabs(m1 - m2) / d.latency_ms;
  d.noise = std::max({d.noise, confirm->value("relative_noise", 0.0), spread});
  if (incumbent_latency_ms <= 0) return d;
  double gain = 1 - d.latency_ms / incumbent_latency_ms;
  double worst_gain = 1 - std::max(m1, m2) / incumbent_latency_ms;
  d.promote = gain > d.noise && worst_gain > 0;
  d.reason = absl::StrFormat("gain %.2f%% (repeat %.6f ms vs %.6f ms) vs noise %.2f%%", gain * 100,
                             m2, m1, d.noise * 100);
  return d;
}

}  // namespace kiln::controller
