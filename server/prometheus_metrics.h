// The node's metrics, kept by prometheus-cpp (Debian's prometheus-cpp-dev, core library) and
// rendered in the Prometheus text exposition format by its TextSerializer:
//
//   kiln_runs_admitted_total                       counter
//   kiln_runs_refused_total{code}                  counter
//   kiln_runs_finished_total{status}               counter
//   kiln_compile_duration_seconds                  histogram
//   kiln_evaluation_duration_seconds               histogram
//   kiln_device_busy_seconds_total{backend,device} counter
//   kiln_device_gpu_work_seconds_total{backend,device} counter: GPU time of the timed calls
//   kiln_device_gpu_work_fraction                  gauge: that over the busy seconds, all slots
//   kiln_verdict_stage_seconds{stage}              histogram: queued, compile, reference,
//                                                  candidate, judge, baselines (per workload),
//                                                  verdict
//   kiln_warm_workers_started_total                counter
//   kiln_warm_workers_from_spare_total             counter: of those, started ahead of need
//   kiln_queue_depth, kiln_runs_running            gauges, read from a probe at each scrape
//   kiln_work_pending_seconds_total                counter: time with admitted, unfinished runs
//   kiln_device_held_while_pending_seconds_total   counter: device-slot seconds held by a run
//                                                  in that time (all slots)
//   kiln_device_held_fraction_while_pending        gauge: the second over (the first x slots)
//
// Thread-safe. The HTTP side is server/metrics_endpoint.h.
#ifndef KILN_SERVER_PROMETHEUS_METRICS_H_
#define KILN_SERVER_PROMETHEUS_METRICS_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "server/metrics.h"

namespace prometheus {
class Counter;
template <typename T>
class Family;
class Histogram;
class Registry;
}  // namespace prometheus

namespace kiln {

// Current queue depth and runs compiling or on a device.
struct LoadSample {
  int queue_depth = 0;
  int running = 0;
  double pending_s = 0;                 // time with admitted, unfinished runs
  double held_while_pending_slot_s = 0;  // slot-seconds held by a run meanwhile
  int slots = 0;                        // device slots of the node
};

class PrometheusMetrics final : public Metrics {
 public:
  PrometheusMetrics();
  ~PrometheusMetrics() override;

  // Called at every Render for the gauges; may be left unset (gauges read 0).
  void SetLoadProbe(std::function<LoadSample()> probe);

  void RunAdmitted() override;
  void RunRefused(const std::string& code) override;
  void RunFinished(const std::string& status) override;
  void CompileFinished(double seconds) override;
  void EvaluationFinished(double seconds) override;
  void DeviceBusy(const std::string& backend, int device, double seconds,
                  double gpu_work_seconds) override;
  void VerdictStage(const std::string& stage, double seconds) override;
  void WarmWorkerStarted(bool from_spare) override;

  // The whole exposition, every family with its HELP and TYPE lines.
  std::string Render() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* admitted_;
  prometheus::Family<prometheus::Counter>* refused_;
  prometheus::Family<prometheus::Counter>* finished_;
  prometheus::Family<prometheus::Counter>* device_busy_;
  prometheus::Family<prometheus::Counter>* device_gpu_work_;
  mutable std::mutex totals_mu_;
  double busy_total_s_ = 0;      // every slot's held seconds (totals_mu_)
  double gpu_work_total_s_ = 0;  // of which timed GPU work (totals_mu_)
  prometheus::Counter* warm_started_;
  prometheus::Counter* warm_from_spare_;
  prometheus::Histogram* compile_;
  prometheus::Histogram* evaluation_;
  prometheus::Family<prometheus::Histogram>* stages_;
  mutable std::mutex probe_mu_;
  std::function<LoadSample()> probe_;  // guarded by probe_mu_
};

}  // namespace kiln

#endif  // KILN_SERVER_PROMETHEUS_METRICS_H_
