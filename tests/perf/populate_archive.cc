// populate_archive DATA_DIR N
//
// Fills the harness archive in DATA_DIR with N synthetic finished runs for benchmarks of the
// run listing and lookup paths: four definitions with three workloads each, runs spread over
// them with a realistic mix of statuses, three traces per run, two source files per run (one
// shared by every run, one shared by a few hundred, so artifacts deduplicate as they do in
// practice) and a compile log. Runs are imported in transactions of 5000 via
// Archive::ImportRuns; progress is printed every 10%. Deterministic: the same N gives the same
// archive contents (run ids, times, statuses).
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/archive/archive.h"

namespace {

constexpr int kBatch = 5000;
constexpr int kWorkloadsPerDefinition = 3;
constexpr int64_t kFirstCreatedMs = 1735689600000;  // 2025-01-01T00:00:00Z
const char* const kDefinitions[] = {"gemm_n4096_k4096", "rmsnorm_h4096", "silu_and_mul_d11008",
                                    "gqa_paged_decode_h32_kv8_d128"};

std::string WorkloadUuid(int definition, int workload) {
  return absl::StrFormat("%08x-0000-4000-8000-%012x", definition, workload);
}

absl::Status PutDefinitions(kiln::Archive& archive) {
  for (int d = 0; d < 4; ++d) {
    kiln::v1::Definition def;
    def.set_name(kDefinitions[d]);
    def.set_op_type(d == 0 ? "gemm" : d == 1 ? "rmsnorm" : d == 2 ? "activation" : "attention");
    def.set_reference("import torch\n\ndef run(x):\n    return x\n");
    def.add_axes()->set_name("M");
    std::vector<kiln::v1::Workload> workloads;
    for (int w = 0; w < kWorkloadsPerDefinition; ++w) {
      kiln::v1::Workload& workload = workloads.emplace_back();
      workload.set_uuid(WorkloadUuid(d, w));
      kiln::v1::AxisValue* m = workload.add_axes();
      m->set_name("M");
      m->set_value(int64_t{1} << (4 + 3 * w));
    }
    absl::Status status = archive.PutDefinition(def, workloads, /*builtin=*/true);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// Mostly PASSED, as in a campaign that has converged, with every failure kind represented.
kiln::v1::EvaluationStatus PickStatus(std::mt19937_64& rng) {
  const int roll = static_cast<int>(rng() % 100);
  if (roll < 70) return kiln::v1::PASSED;
  if (roll < 80) return kiln::v1::INCORRECT_NUMERICAL;
  if (roll < 88) return kiln::v1::COMPILE_ERROR;
  if (roll < 94) return kiln::v1::RUNTIME_ERROR;
  if (roll < 98) return kiln::v1::TIMEOUT;
  return kiln::v1::REJECTED;
}

kiln::v1::Trace MakeTrace(int definition, int workload, kiln::v1::EvaluationStatus status,
                          std::mt19937_64& rng) {
  kiln::v1::Trace trace;
  trace.set_definition(kDefinitions[definition]);
  trace.mutable_workload()->set_uuid(WorkloadUuid(definition, workload));
  kiln::v1::Evaluation* eval = trace.mutable_evaluation();
  eval->set_status(status);
  eval->mutable_environment()->set_hardware("NVIDIA H100 80GB HBM3");
  (*eval->mutable_environment()->mutable_libs())["cuda"] = "12.8";
  eval->set_timestamp("2025-01-01T00:00:00Z");
  trace.mutable_kiln()->set_workload_index(workload);
  if (status != kiln::v1::PASSED) {
    trace.mutable_kiln()->set_reason("synthetic failure");
    return trace;
  }
  std::uniform_real_distribution<double> error(0, 1e-3);
  eval->mutable_correctness()->set_max_absolute_error(error(rng));
  eval->mutable_correctness()->set_max_relative_error(error(rng));
  const double reference = 0.05 * (workload + 1);
  const double latency = reference / std::uniform_real_distribution<double>(0.5, 3.0)(rng);
  eval->mutable_performance()->set_latency_ms(latency);
  eval->mutable_performance()->set_reference_latency_ms(reference);
  eval->mutable_performance()->set_speedup_factor(reference / latency);
  kiln::v1::TimingResult* timing = trace.mutable_kiln()->mutable_timing();
  timing->set_mode("official");
  timing->set_timer("cupti");
  timing->set_trials(3);
  timing->set_warmup(10);
  timing->set_iterations(50);
  for (int t = 0; t < 3; ++t) timing->add_trial_medians_ms(latency);
  timing->set_latency_ms(latency);
  return trace;
}

kiln::v1::Run MakeRun(int64_t i, std::mt19937_64& rng) {
  const int definition = static_cast<int>(i % 4);
  const kiln::v1::EvaluationStatus status = PickStatus(rng);
  kiln::v1::Run run;
  run.set_run_id(absl::StrFormat("bench-%09d", i));
  run.set_definition(kDefinitions[definition]);
  run.set_solution_hash(absl::StrFormat("%064x", i % 997));
  run.set_principal(absl::StrCat("team-", i % 16));
  run.set_state(kiln::v1::RUN_DONE);
  run.set_status(status);
  run.set_reason(status == kiln::v1::PASSED ? "" : "synthetic failure");
  run.set_mode("official");
  run.set_backend("cuda");
  run.set_created_unix_ms(kFirstCreatedMs + i * 1500);
  run.set_finished_unix_ms(kFirstCreatedMs + i * 1500 + 1200);
  run.set_queued_s(0.1);
  run.set_compile_s(status == kiln::v1::COMPILE_ERROR ? 2.0 : 8.5);
  run.set_compile_log(status == kiln::v1::COMPILE_ERROR ? "kernel.cu(12): error: expected ';'"
                                                        : "ptxas info: Used 64 registers");
  kiln::v1::Solution* solution = run.mutable_solution();
  solution->set_name(absl::StrCat("candidate-", i % 997));
  solution->set_definition(kDefinitions[definition]);
  solution->set_author(absl::StrCat("agent-", i % 7));
  solution->mutable_spec()->set_language("cuda");
  solution->mutable_spec()->set_entry_point("kernel.cu::run");
  kiln::v1::SourceFile* kernel = solution->add_sources();
  kernel->set_path("kernel.cu");
  kernel->set_content(absl::StrCat("// candidate ", i % 997, "\n", std::string(2000, ' '),
                                   "extern \"C\" int run() { return 0; }\n"));
  kiln::v1::SourceFile* header = solution->add_sources();
  header->set_path("common.cuh");
  header->set_content("#pragma once\n#include <cuda_runtime.h>\n");
  run.set_verify_s(status == kiln::v1::COMPILE_ERROR ? 0.0 : 1.2);
  run.set_timing_s(status == kiln::v1::PASSED ? 3.4 : 0.0);
  for (int w = 0; w < kWorkloadsPerDefinition; ++w) {
    *run.add_traces() = MakeTrace(definition, w, status, rng);
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t total = 0;
  if (argc != 3 || !absl::SimpleAtoi(argv[2], &total) || total < 0) {
    std::fprintf(stderr, "usage: %s DATA_DIR N\n", argv[0]);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  auto archive = kiln::Archive::Open(argv[1]);
  if (!archive.ok()) {
    std::fprintf(stderr, "%s\n", archive.status().ToString().c_str());
    return 1;
  }
  if (absl::Status status = PutDefinitions(**archive); !status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::mt19937_64 rng(42);
  std::vector<kiln::v1::Run> batch;
  int next_report = 1;
  for (int64_t i = 0; i < total;) {
    batch.clear();
    for (; i < total && static_cast<int>(batch.size()) < kBatch; ++i) {
      batch.push_back(MakeRun(i, rng));
    }
    if (absl::Status status = (*archive)->ImportRuns(batch); !status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
    for (; next_report <= 10 && i * 10 >= total * next_report; ++next_report) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%3d%%  %lld runs  %.1f s\n", next_report * 10, static_cast<long long>(i),
                  seconds);
      std::fflush(stdout);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("populated %s with %lld runs in %.1f s\n", argv[1], static_cast<long long>(total),
              seconds);
  return 0;
}
