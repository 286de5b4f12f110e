// bare_cost: the work one kiln evaluation cannot avoid, measured in-process, so that the
// harness's own overhead (process start, gRPC, archive, comparison) can be read off as the
// difference to `kiln submit`'s wall time. For one built-in definition, one workload and one
// solution file it prints a JSON object:
//
//   compile_cold_s   the compile of the solution with an empty cache (the compiler's own time)
//   compile_hit_s    the same compile again (a cache hit), median
//   reference_s      reference: the worker's evaluation (checked calls + timing protocol), median
//   reference_verify_s  reference: checked calls only (what a run does once the reference's
//                    latency is cached), median
//   candidate_s      candidate: the same, median
//
// Usage: bare_cost DEFINITION WORKLOAD_INDEX SOLUTION.json MODE REPEATS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/definitions/builtins.h"
#include "harness/model/json_interop.h"
#include "harness/timing/protocol.h"
#include "harness/timing/statistics.h"
#include "harness/worker/evaluation.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bare_cost: %s\n", what.c_str());
  std::exit(2);
}

template <typename T>
T Check(absl::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + std::string(v.status().message()));
  return *std::move(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) Die("usage: bare_cost DEFINITION WORKLOAD_INDEX SOLUTION.json MODE REPEATS");
  const std::string def_name = argv[1];
  const int wi = std::atoi(argv[2]);
  const std::string mode = argv[4];
  const int repeats = std::atoi(argv[5]);

  auto builtins = Check(kiln::LoadBuiltinDefinitions(), "built-ins");
  const kiln::BuiltinDefinition* b = nullptr;
  for (const auto& d : builtins)
    if (d.definition.name() == def_name) b = &d;
  if (b == nullptr || wi < 0 || wi >= static_cast<int>(b->workloads.size()))
    Die("no such built-in definition/workload");
  auto solution =
      Check(kiln::ParseSolutionJson(Check(kiln::ReadFile(argv[3]), "read solution")), "parse");

  std::string dir = Check(kiln::MakeTempDir("", "kiln-bare"), "temp dir");
  std::vector<std::unique_ptr<kiln::Toolchain>> tcs;
  tcs.push_back(kiln::MakeHostCxxToolchain(std::string(KILN_SOURCE_DIR) + "/harness/include"));
  kiln::Compiler compiler(dir + "/cache", std::move(tcs));

  double t0 = Now();
  auto cand = Check(compiler.Compile(solution, "host"), "compile");
  double compile_cold = Now() - t0;
  if (!cand.ok) Die("solution does not compile: " + cand.log);
  auto ref = Check(compiler.Compile(b->definition.native_reference(), "host"), "compile ref");
  if (!ref.ok) Die("reference does not compile: " + ref.log);

  std::vector<double> hit, ref_s, ref_verify_s, cand_s;
  kiln::v1::TimingConfig config = Check(kiln::DefaultTimingConfig(mode), "mode");
  for (int r = 0; r < repeats; ++r) {
    t0 = Now();
    auto again = Check(compiler.Compile(solution, "host"), "compile");
    hit.push_back(Now() - t0);
    if (!again.cache_hit) Die("second compile was not a cache hit");

    for (int role = 0; role < 3; ++role) {  // reference, candidate, reference verify-only
      kiln::v1::WorkerRequest req;
      *req.mutable_definition() = b->definition;
      *req.mutable_workload() = b->workloads[wi];
      const auto& out = role == 1 ? cand : ref;
      req.set_artifact_path(out.artifact_path);
      req.set_symbol(out.symbol);
      req.set_role(role == 1 ? "candidate" : "reference");
      for (int t = 0; t < config.trials(); ++t) req.add_trial_seeds(1000 * r + t + 1);
      *req.mutable_timing() = config;
      req.set_measure(role != 2);
      req.set_output_dir(dir + "/out");
      req.set_backend("host");
      t0 = Now();
      kiln::v1::WorkerResult res = kiln::Evaluate(req, [](std::string_view, int) {});
      (role == 0 ? ref_s : role == 1 ? cand_s : ref_verify_s).push_back(Now() - t0);
      if (res.status() != kiln::v1::PASSED) Die("evaluation failed: " + res.error());
    }
  }
  std::printf(
      "{\"compile_cold_s\": %.4f, \"compile_hit_s\": %.5f, \"reference_s\": %.4f, "
      "\"reference_verify_s\": %.4f, \"candidate_s\": %.4f}\n",
      compile_cold, kiln::Median(hit), kiln::Median(ref_s), kiln::Median(ref_verify_s),
      kiln::Median(cand_s));
  (void)kiln::RemoveTree(dir);
  return 0;
}
