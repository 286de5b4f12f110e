// Metrics kept in memory and rendered in the Prometheus text exposition format (version 0.0.4):
//
//   kiln_runs_admitted_total                       counter
//   kiln_runs_refused_total{code}                  counter
//   kiln_runs_finished_total{status}               counter
//   kiln_compile_duration_seconds                  histogram
//   kiln_evaluation_duration_seconds               histogram
//   kiln_device_busy_seconds_total{backend,device} counter
//   kiln_verdict_stage_seconds{stage}              histogram: queued, compile, reference,
//                                                  candidate, judge, baselines (per workload),
//                                                  verdict
//   kiln_warm_workers_started_total                counter
//   kiln_queue_depth, kiln_runs_running            gauges, read from a probe at each scrape
//   kiln_work_pending_seconds_total                counter: time with admitted, unfinished runs
//   kiln_device_held_while_pending_seconds_total   counter: device-slot seconds held by a run
//                                                  in that time (all slots)
//   kiln_device_held_fraction_while_pending        gauge: the second over (the first x slots)
//
// Thread-safe. Written by hand because Debian 12 ships no prometheus-cpp; the format is small.
#ifndef KILN_SERVER_PROMETHEUS_METRICS_H_
#define KILN_SERVER_PROMETHEUS_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "server/metrics.h"

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

  // Called at every Render for the gauges; may be left unset (gauges read 0).
  void SetLoadProbe(std::function<LoadSample()> probe);

  void RunAdmitted() override;
  void RunRefused(const std::string& code) override;
  void RunFinished(const std::string& status) override;
  void CompileFinished(double seconds) override;
  void EvaluationFinished(double seconds) override;
  void DeviceBusy(const std::string& backend, int device, double seconds) override;
  void VerdictStage(const std::string& stage, double seconds) override;
  void WarmWorkerStarted() override;

  // The whole exposition, every family with its HELP and TYPE lines.
  std::string Render() const;

 private:
  struct Histogram {
    std::vector<double> bounds;    // upper bounds, ascending; +Inf is implicit
    std::vector<uint64_t> counts;  // per bucket, not cumulative; last is +Inf
    double sum = 0;
    uint64_t count = 0;
    void Observe(double value);
    // `labels`: 'stage="compile"' or empty.
    void Render(const std::string& name, std::string* out, const std::string& labels = "") const;
  };

  mutable std::mutex mu_;
  std::function<LoadSample()> probe_;                          // guarded by mu_
  uint64_t admitted_ = 0;                                      // guarded by mu_
  std::map<std::string, uint64_t> refused_;                    // by code; mu_
  std::map<std::string, uint64_t> finished_;                   // by status; mu_
  std::map<std::pair<std::string, int>, double> device_busy_;  // mu_
  Histogram compile_;                                          // mu_
  Histogram evaluation_;                                       // mu_
  std::map<std::string, Histogram> stages_;                    // by stage; mu_
  uint64_t warm_started_ = 0;                                  // mu_
};

}  // namespace kiln

#endif  // KILN_SERVER_PROMETHEUS_METRICS_H_
