#include "server/prometheus_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sstream>
#include <vector>

namespace kiln {

namespace {

const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800};
  return kBuckets;
}

// Finer at the low end: a warm verdict's stages take tens of milliseconds to a few seconds.
const prometheus::Histogram::BucketBoundaries& StageBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300};
  return kBuckets;
}

// A family of one unlabelled sample, for what the probe reads at each scrape.
prometheus::MetricFamily Sampled(const std::string& name, const std::string& help,
                                 prometheus::MetricType type, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

}  // namespace

PrometheusMetrics::PrometheusMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  admitted_ = &prometheus::BuildCounter()
                   .Name("kiln_runs_admitted_total")
                   .Help("Runs admitted (archived QUEUED).")
                   .Register(*registry_)
                   .Add({});
  refused_ = &prometheus::BuildCounter()
                  .Name("kiln_runs_refused_total")
                  .Help("Evaluate calls refused before a run existed.")
                  .Register(*registry_);
  finished_ = &prometheus::BuildCounter()
                   .Name("kiln_runs_finished_total")
                   .Help("Runs finished, by final status.")
                   .Register(*registry_);
  device_busy_ = &prometheus::BuildCounter()
                      .Name("kiln_device_busy_seconds_total")
                      .Help("Seconds each device slot held a run.")
                      .Register(*registry_);
  device_gpu_work_ = &prometheus::BuildCounter()
                         .Name("kiln_device_gpu_work_seconds_total")
                         .Help("GPU time of the timed calls (candidate and baselines timed, from "
                               "the CUPTI records) within kiln_device_busy_seconds_total; 0 where "
                               "the timer records no kernels.")
                         .Register(*registry_);
  warm_started_ =
      &prometheus::BuildCounter()
           .Name("kiln_warm_workers_started_total")
           .Help("Warm reference workers started (none was running for the program and device).")
           .Register(*registry_)
           .Add({});
  warm_from_spare_ =
      &prometheus::BuildCounter()
           .Name("kiln_warm_workers_from_spare_total")
           .Help("Of kiln_warm_workers_started_total, those that took a Python reference runner "
                 "started ahead of need (torch imported) instead of starting a process.")
           .Register(*registry_)
           .Add({});
  compile_ = &prometheus::BuildHistogram()
                  .Name("kiln_compile_duration_seconds")
                  .Help("Compile stage of one run (candidate and reference).")
                  .Register(*registry_)
                  .Add({}, DurationBuckets());
  evaluation_ = &prometheus::BuildHistogram()
                     .Name("kiln_evaluation_duration_seconds")
                     .Help("Evaluation of one run on a device slot (all workloads).")
                     .Register(*registry_)
                     .Add({}, DurationBuckets());
  stages_ = &prometheus::BuildHistogram()
                 .Name("kiln_verdict_stage_seconds")
                 .Help("Stages of a verdict: queued, compile, reference / candidate / judge / "
                       "baselines (one workload each), verdict (admitted to final event).")
                 .Register(*registry_);
}

PrometheusMetrics::~PrometheusMetrics() = default;

void PrometheusMetrics::SetLoadProbe(std::function<LoadSample()> probe) {
  std::lock_guard<std::mutex> lock(probe_mu_);
  probe_ = std::move(probe);
}

void PrometheusMetrics::RunAdmitted() { admitted_->Increment(); }

void PrometheusMetrics::RunRefused(const std::string& code) {
  refused_->Add({{"code", code}}).Increment();
}

void PrometheusMetrics::RunFinished(const std::string& status) {
  finished_->Add({{"status", status}}).Increment();
}

void PrometheusMetrics::CompileFinished(double seconds) { compile_->Observe(seconds); }

void PrometheusMetrics::EvaluationFinished(double seconds) { evaluation_->Observe(seconds); }

void PrometheusMetrics::DeviceBusy(const std::string& backend, int device, double seconds,
                                   double gpu_work_seconds) {
  const prometheus::Labels labels = {{"backend", backend}, {"device", std::to_string(device)}};
  device_busy_->Add(labels).Increment(seconds);
  device_gpu_work_->Add(labels).Increment(gpu_work_seconds);
  std::lock_guard<std::mutex> lock(totals_mu_);
  busy_total_s_ += seconds;
  gpu_work_total_s_ += gpu_work_seconds;
}

void PrometheusMetrics::VerdictStage(const std::string& stage, double seconds) {
  stages_->Add({{"stage", stage}}, StageBuckets()).Observe(seconds);
}

void PrometheusMetrics::WarmWorkerStarted(bool from_spare) {
  warm_started_->Increment();
  if (from_spare) warm_from_spare_->Increment();
}

std::string PrometheusMetrics::Render() const {
  LoadSample load;
  {
    // The probe takes the scheduler's lock, never this one: no lock-order cycle.
    std::lock_guard<std::mutex> lock(probe_mu_);
    if (probe_) load = probe_();
  }
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  using prometheus::MetricType;
  families.push_back(Sampled("kiln_queue_depth",
                             "Admitted runs waiting for the compile pool or a device.",
                             MetricType::Gauge, load.queue_depth));
  families.push_back(Sampled("kiln_runs_running", "Runs compiling or on a device.",
                             MetricType::Gauge, load.running));
  families.push_back(Sampled("kiln_work_pending_seconds_total",
                             "Seconds during which the node had admitted, unfinished runs.",
                             MetricType::Counter, load.pending_s));
  families.push_back(
      Sampled("kiln_device_held_while_pending_seconds_total",
              "Device-slot seconds held by a run while runs were pending (all slots together).",
              MetricType::Counter, load.held_while_pending_slot_s));
  const double capacity = load.pending_s * load.slots;
  families.push_back(Sampled(
      "kiln_device_held_fraction_while_pending",
      "Share of the device slots' time held by a run while runs were pending, since start.",
      MetricType::Gauge, capacity > 0 ? load.held_while_pending_slot_s / capacity : 0));
  double busy = 0, gpu_work = 0;
  {
    std::lock_guard<std::mutex> lock(totals_mu_);
    busy = busy_total_s_;
    gpu_work = gpu_work_total_s_;
  }
  families.push_back(Sampled(
      "kiln_device_gpu_work_fraction",
      "Share of the device slots' held time that was GPU work of timed calls, since start.",
      MetricType::Gauge, busy > 0 ? gpu_work / busy : 0));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace kiln
