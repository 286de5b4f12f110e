// integrity_cost: the cost of kiln's per-call integrity checks on timing, measured in-process on
// one honest solution: the worker's evaluation of vector_add_f32 (n elements, timing protocol
// MODE) alternately with the checks on (as every run has them) and off
// (WorkerRequest.disable_call_checks, a switch for this benchmark only), REPEATS times each.
// Prints one JSON object: the median latency the protocol reports and the median wall time of
// the whole evaluation, checks on and off.
//
// Usage: integrity_cost BACKEND LIBRARY.so SYMBOL N MODE REPEATS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/definitions/builtins.h"
#include "harness/timing/protocol.h"
#include "harness/timing/statistics.h"
#include "harness/worker/evaluation.h"

namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "integrity_cost: %s\n", what.c_str());
  std::exit(2);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) Die("usage: integrity_cost BACKEND LIBRARY.so SYMBOL N MODE REPEATS");
  const std::string backend = argv[1], library = argv[2], symbol = argv[3], mode = argv[5];
  const int64_t n = std::atoll(argv[4]);
  const int repeats = std::atoi(argv[6]);
  auto builtins = kiln::LoadBuiltinDefinitions();
  if (!builtins.ok()) Die(builtins.status().ToString());
  kiln::v1::WorkerRequest request;
  for (const auto& b : *builtins) {
    if (b.definition.name() == "vector_add_f32") *request.mutable_definition() = b.definition;
  }
  kiln::v1::Workload* w = request.mutable_workload();
  kiln::v1::AxisValue* axis = w->add_axes();
  axis->set_name("n");
  axis->set_value(n);
  for (const char* name : {"a", "b"}) {
    kiln::v1::WorkloadInput* in = w->add_inputs();
    in->set_name(name);
    in->set_kind(kiln::v1::WorkloadInput::RANDOM);
  }
  auto config = kiln::DefaultTimingConfig(mode);
  if (!config.ok()) Die(config.status().ToString());
  *request.mutable_timing() = *config;
  for (int t = 0; t < std::max(1, config->trials()); ++t) request.add_trial_seeds(1000 + t);
  request.set_artifact_path(library);
  request.set_symbol(symbol);
  request.set_role("candidate");
  request.set_measure(true);
  request.set_backend(backend);
  auto dir = kiln::MakeTempDir("", "kiln-integrity-cost");
  if (!dir.ok()) Die(dir.status().ToString());
  request.set_output_dir(*dir + "/out");
  std::vector<double> latency[2], wall[2];
  for (int r = 0; r < repeats; ++r) {
    for (int off = 0; off < 2; ++off) {
      request.set_disable_call_checks(off == 1);
      auto start = std::chrono::steady_clock::now();
      kiln::v1::WorkerResult result = kiln::Evaluate(request, nullptr);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (result.status() != kiln::v1::PASSED) Die("evaluation failed: " + result.error());
      latency[off].push_back(result.timing().latency_ms());
      wall[off].push_back(s);
    }
  }
  (void)kiln::RemoveTree(*dir);
  std::printf(
      "{\"backend\": \"%s\", \"n\": %lld, \"mode\": \"%s\", \"repeats\": %d, "
      "\"latency_ms_checks_on\": %.6f, \"latency_ms_checks_off\": %.6f, "
      "\"evaluation_s_checks_on\": %.3f, \"evaluation_s_checks_off\": %.3f}\n",
      backend.c_str(), static_cast<long long>(n), mode.c_str(), repeats, Median(latency[0]),
      Median(latency[1]), Median(wall[0]), Median(wall[1]));
  return 0;
}
