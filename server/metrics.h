// What the harness reports to its operator's monitoring, as events. The rest of the server calls
// this interface only; PrometheusMetrics (prometheus_metrics.h) turns the events into the
// Prometheus text format served on --metrics-listen, and NullMetrics() drops them.
#ifndef KILN_SERVER_METRICS_H_
#define KILN_SERVER_METRICS_H_

#include <string>

namespace kiln {

class Metrics {
 public:
  virtual ~Metrics() = default;

  // A run was admitted (archived QUEUED).
  virtual void RunAdmitted() = 0;
  // Evaluate was refused before a run existed; `code` is the gRPC code's name.
  virtual void RunRefused(const std::string& code) = 0;
  // A run reached its final status ("PASSED", "COMPILE_ERROR", ...).
  virtual void RunFinished(const std::string& status) = 0;
  // One run's compile stage (candidate and reference) took `seconds`.
  virtual void CompileFinished(double seconds) = 0;
  // One run's evaluation on a device (every workload) took `seconds`.
  virtual void EvaluationFinished(double seconds) = 0;
  // Device slot `device` of `backend` was held by one run for `seconds`, of which the GPU ran
  // the run's timed calls for `gpu_work_seconds` (ScheduledRun::GpuWorkSeconds).
  virtual void DeviceBusy(const std::string& backend, int device, double seconds,
                          double gpu_work_seconds) = 0;
  // One stage of one run's verdict took `seconds`: queued, compile, reference (one workload's),
  // candidate (one workload's worker request, its process start included), judge (comparing
  // that workload's outputs), baselines (one workload's), verdict (admitted to final event).
  virtual void VerdictStage(const std::string& stage, double seconds) = 0;
  // A warm reference worker was started (none was running for its program and device);
  // `from_spare`: a Python reference runner started ahead of need took it (no process start,
  // torch already imported).
  virtual void WarmWorkerStarted(bool from_spare) = 0;
};

// Ignores every event. Never null; lives for the whole process.
Metrics* NullMetrics();

}  // namespace kiln

#endif  // KILN_SERVER_METRICS_H_
