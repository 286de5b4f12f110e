#include "server/metrics.h"

namespace kiln {

namespace {

class DiscardingMetrics final : public Metrics {
 public:
  void RunAdmitted() override {}
  void RunRefused(const std::string&) override {}
  void RunFinished(const std::string&) override {}
  void CompileFinished(double) override {}
  void EvaluationFinished(double) override {}
  void DeviceBusy(const std::string&, int, double, double) override {}
  void VerdictStage(const std::string&, double) override {}
  void WarmWorkerStarted(bool) override {}
};

}  // namespace

Metrics* NullMetrics() {
  static DiscardingMetrics* metrics = new DiscardingMetrics();
  return metrics;
}

}  // namespace kiln
