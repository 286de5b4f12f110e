#include "server/prometheus_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {

namespace {

const std::vector<double>& DurationBuckets() {
  static const std::vector<double> kBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                               10,   30,  60,   120, 300, 600, 1800};
  return kBuckets;
}

// Finer at the low end: a warm verdict's stages take tens of milliseconds to a few seconds.
const std::vector<double>& StageBuckets() {
  static const std::vector<double> kBuckets = {0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1,
                                               1.5,  2,     3,    5,   10,  30,  60,  300};
  return kBuckets;
}

// Label values are escaped as the text format demands (backslash, quote, newline).
std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string Number(double v) { return absl::StrFormat("%.17g", v); }

void Header(const std::string& name, const std::string& type, const std::string& help,
            std::string* out) {
  absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

PrometheusMetrics::PrometheusMetrics() {
  for (Histogram* h : {&compile_, &evaluation_}) {
    h->bounds = DurationBuckets();
    h->counts.assign(h->bounds.size() + 1, 0);
  }
}

void PrometheusMetrics::SetLoadProbe(std::function<LoadSample()> probe) {
  std::lock_guard<std::mutex> lock(mu_);
  probe_ = std::move(probe);
}

void PrometheusMetrics::RunAdmitted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++admitted_;
}

void PrometheusMetrics::RunRefused(const std::string& code) {
  std::lock_guard<std::mutex> lock(mu_);
  ++refused_[code];
}

void PrometheusMetrics::RunFinished(const std::string& status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++finished_[status];
}

void PrometheusMetrics::CompileFinished(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  compile_.Observe(seconds);
}

void PrometheusMetrics::EvaluationFinished(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  evaluation_.Observe(seconds);
}

void PrometheusMetrics::DeviceBusy(const std::string& backend, int device, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  device_busy_[{backend, device}] += seconds;
}

void PrometheusMetrics::VerdictStage(const std::string& stage, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = stages_.try_emplace(stage);
  if (added) {
    it->second.bounds = StageBuckets();
    it->second.counts.assign(it->second.bounds.size() + 1, 0);
  }
  it->second.Observe(seconds);
}

void PrometheusMetrics::WarmWorkerStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++warm_started_;
}

void PrometheusMetrics::Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds.size() && value > bounds[i]) ++i;
  ++counts[i];
  sum += value;
  ++count;
}

void PrometheusMetrics::Histogram::Render(const std::string& name, std::string* out,
                                           const std::string& labels) const {
  uint64_t cumulative = 0;
  const std::string extra = labels.empty() ? "" : labels + ",";
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    // Bounds as written ("0.05"), not at full precision.
    const std::string le = i < bounds.size() ? absl::StrCat(bounds[i]) : "+Inf";
    absl::StrAppend(out, name, "_bucket{", extra, "le=\"", le, "\"} ", cumulative, "\n");
  }
  const std::string braces = labels.empty() ? "" : absl::StrCat("{", labels, "}");
  absl::StrAppend(out, name, "_sum", braces, " ", Number(sum), "\n", name, "_count", braces, " ",
                  count, "\n");
}

std::string PrometheusMetrics::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  // The probe takes the scheduler's lock, never this one: no lock-order cycle.
  const LoadSample load = probe_ ? probe_() : LoadSample();
  std::string out;
  Header("kiln_runs_admitted_total", "counter", "Runs admitted (archived QUEUED).", &out);
  absl::StrAppend(&out, "kiln_runs_admitted_total ", admitted_, "\n");
  Header("kiln_runs_refused_total", "counter", "Evaluate calls refused before a run existed.",
         &out);
  for (const auto& [code, n] : refused_) {
    absl::StrAppend(&out, "kiln_runs_refused_total{code=\"", Escape(code), "\"} ", n, "\n");
  }
  Header("kiln_runs_finished_total", "counter", "Runs finished, by final status.", &out);
  for (const auto& [status, n] : finished_) {
    absl::StrAppend(&out, "kiln_runs_finished_total{status=\"", Escape(status), "\"} ", n, "\n");
  }
  Header("kiln_queue_depth", "gauge", "Admitted runs waiting for the compile pool or a device.",
         &out);
  absl::StrAppend(&out, "kiln_queue_depth ", load.queue_depth, "\n");
  Header("kiln_runs_running", "gauge", "Runs compiling or on a device.", &out);
  absl::StrAppend(&out, "kiln_runs_running ", load.running, "\n");
  Header("kiln_compile_duration_seconds", "histogram",
         "Compile stage of one run (candidate and reference).", &out);
  compile_.Render("kiln_compile_duration_seconds", &out);
  Header("kiln_evaluation_duration_seconds", "histogram",
         "Evaluation of one run on a device slot (all workloads).", &out);
  evaluation_.Render("kiln_evaluation_duration_seconds", &out);
  Header("kiln_verdict_stage_seconds", "histogram",
         "Stages of a verdict: queued, compile, reference / candidate / judge / baselines (one "
         "workload each), verdict (admitted to final event).",
         &out);
  for (const auto& [stage, h] : stages_) {
    h.Render("kiln_verdict_stage_seconds", &out, absl::StrCat("stage=\"", Escape(stage), "\""));
  }
  Header("kiln_warm_workers_started_total", "counter",
         "Warm reference workers started (none was running for the program and device).", &out);
  absl::StrAppend(&out, "kiln_warm_workers_started_total ", warm_started_, "\n");
  Header("kiln_work_pending_seconds_total", "counter",
         "Seconds during which the node had admitted, unfinished runs.", &out);
  absl::StrAppend(&out, "kiln_work_pending_seconds_total ", Number(load.pending_s), "\n");
  Header("kiln_device_held_while_pending_seconds_total", "counter",
         "Device-slot seconds held by a run while runs were pending (all slots together).", &out);
  absl::StrAppend(&out, "kiln_device_held_while_pending_seconds_total ",
                  Number(load.held_while_pending_slot_s), "\n");
  Header("kiln_device_held_fraction_while_pending", "gauge",
         "Share of the device slots' time held by a run while runs were pending, since start.",
         &out);
  const double capacity = load.pending_s * load.slots;
  absl::StrAppend(&out, "kiln_device_held_fraction_while_pending ",
                  Number(capacity > 0 ? load.held_while_pending_slot_s / capacity : 0), "\n");
  Header("kiln_device_busy_seconds_total", "counter", "Seconds each device slot held a run.", &out);
  for (const auto& [slot, seconds] : device_busy_) {
    absl::StrAppend(&out, "kiln_device_busy_seconds_total{backend=\"", Escape(slot.first),
                    "\",device=\"", slot.second, "\"} ", Number(seconds), "\n");
  }
  return out;
}

}  // namespace kiln
