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

void PrometheusMetrics::Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds.size() && value > bounds[i]) ++i;
  ++counts[i];
  sum += value;
  ++count;
}

void PrometheusMetrics::Histogram::Render(const std::string& name, std::string* out) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    const std::string le = i < bounds.size() ? Number(bounds[i]) : "+Inf";
    absl::StrAppend(out, name, "_bucket{le=\"", le, "\"} ", cumulative, "\n");
  }
  absl::StrAppend(out, name, "_sum ", Number(sum), "\n", name, "_count ", count, "\n");
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
  Header("kiln_device_busy_seconds_total", "counter", "Seconds each device slot held a run.", &out);
  for (const auto& [slot, seconds] : device_busy_) {
    absl::StrAppend(&out, "kiln_device_busy_seconds_total{backend=\"", Escape(slot.first),
                    "\",device=\"", slot.second, "\"} ", Number(seconds), "\n");
  }
  return out;
}

}  // namespace kiln
