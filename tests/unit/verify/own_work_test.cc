// The own-kernel share (own_work.h): the split of the timed calls' GPU time between the
// solution's kernels and the rest, and integrity.own_kernel_share.
#include "harness/verify/own_work.h"

#include <catch2/catch.hpp>
#include <string>

#include "harness/model/definition_settings.h"

namespace kiln::integrity {
namespace {

constexpr char kMatmul[] =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";

v1::Solution TritonSolution() {
  v1::Solution s;
  s.mutable_spec()->set_language("triton");
  v1::SourceFile* f = s.add_sources();
  f->set_path("model_new.py");
  f->set_content("import triton\n@triton.jit\ndef copy_kernel(x, y):\n    pass\n");
  return s;
}

// 3 trials x 10 timed calls: a GEMM (torch) of 9 ms, the solution's copy kernel of 1 ms and a
// copy of 0 ms in all, summed over the 30 calls.
v1::TimingResult Timing(double matmul_ms, double own_ms) {
  v1::TimingResult t;
  t.set_timer("cupti");
  t.set_trials(3);
  t.set_iterations(10);
  auto add = [&t](const std::string& signature, double ms) {
    v1::GpuWork* w = t.add_gpu_work();
    w->set_signature(signature);
    w->set_total_ms(ms);
    w->set_launches(30);
  };
  add(std::string("kernel ") + kMatmul, matmul_ms);
  add("kernel copy_kernel", own_ms);
  add("memcpy kind 8 64 B", 0);
  return t;
}

v1::Definition KernelBenchProblem() {
  v1::Definition def;
  def.mutable_kernelbench()->set_level(1);
  return def;
}

TEST_CASE("the share splits the timed calls' GPU time between own kernels and the rest") {
  const v1::OwnWork own = OwnWorkOf(KernelBenchProblem(), TritonSolution(), Timing(9, 1));
  REQUIRE(own.measured());
  CHECK(own.share() == Approx(0.1));
  CHECK(own.own_ms() == Approx(1.0 / 30));
  CHECK(own.total_ms() == Approx(10.0 / 30));
  REQUIRE(own.own_kernels_size() == 1);
  CHECK(own.own_kernels(0) == "copy_kernel");
  CHECK(own.min_share() == Approx(kKernelBenchMinOwnKernelShare));
  CHECK_THAT(OwnWorkText(own), Catch::StartsWith("10.0 % (") && Catch::EndsWith("copy_kernel)"));
}

TEST_CASE("a token kernel beside torch's work is below the KernelBench minimum: REJECTED") {
  const v1::Definition def = KernelBenchProblem();
  const v1::OwnWork token = OwnWorkOf(def, TritonSolution(), Timing(999, 1));
  CHECK(token.share() == Approx(0.001));
  std::optional<OwnKernelFinding> finding = JudgeOwnKernelShare(def, token);
  REQUIRE(finding.has_value());
  CHECK_FALSE(finding->warning_only);
  CHECK_THAT(finding->reason,
             Catch::StartsWith("integrity.own_kernel_share: the solution's own kernels did 0.1 % "
                               "of the timed calls' GPU time") &&
                 Catch::Contains("at least 5.0 %"));
  // Real work of its own passes.
  CHECK_FALSE(JudgeOwnKernelShare(def, OwnWorkOf(def, TritonSolution(), Timing(9, 1))).has_value());
  // kiln:allow-library:torch makes it a warning.
  v1::Definition allowed = def;
  allowed.add_tags("kiln:allow-library:torch");
  finding = JudgeOwnKernelShare(allowed, OwnWorkOf(allowed, TritonSolution(), Timing(999, 1)));
  REQUIRE(finding.has_value());
  CHECK(finding->warning_only);
}

TEST_CASE("the minimum: the definition's setting, else KernelBench's default, else none") {
  v1::Definition plain;
  const v1::OwnWork measured = OwnWorkOf(plain, TritonSolution(), Timing(999, 1));
  CHECK(measured.measured());
  CHECK(measured.min_share() == 0);
  CHECK_FALSE(JudgeOwnKernelShare(plain, measured).has_value());
  plain.set_min_own_kernel_share(0.5);
  CHECK(JudgeOwnKernelShare(plain, OwnWorkOf(plain, TritonSolution(), Timing(9, 1))).has_value());
  v1::Definition off = KernelBenchProblem();
  off.set_min_own_kernel_share(0);
  CHECK_FALSE(JudgeOwnKernelShare(off, OwnWorkOf(off, TritonSolution(), Timing(999, 1))).has_value());
}

TEST_CASE("not measured without kernel records or for unattributed languages, and never judged") {
  const v1::Definition def = KernelBenchProblem();
  v1::TimingResult host = Timing(9, 1);
  host.set_timer("host");
  v1::OwnWork own = OwnWorkOf(def, TritonSolution(), host);
  CHECK_FALSE(own.measured());
  CHECK(own.not_measured() == "not measured on the host backend (no GPU kernels)");
  CHECK(OwnWorkText(own) == own.not_measured());
  CHECK_FALSE(JudgeOwnKernelShare(def, own).has_value());
  v1::TimingResult events = Timing(9, 1);
  events.set_timer("events");
  CHECK_THAT(OwnWorkOf(def, TritonSolution(), events).not_measured(),
             Catch::Contains("events timer records no kernels"));
  v1::Solution cpp = TritonSolution();
  cpp.mutable_spec()->set_language("cpp");
  CHECK_FALSE(OwnWorkOf(def, cpp, Timing(9, 1)).measured());
}

TEST_CASE("the mean share counts only the measured workloads") {
  v1::OwnWork a, b, c;
  a.set_measured(true);
  a.set_share(0.2);
  b.set_measured(true);
  b.set_share(0.4);
  CHECK(*MeanShare({&a, &b, &c}) == Approx(0.3));
  CHECK_FALSE(MeanShare({&c}).has_value());
}

}  // namespace
}  // namespace kiln::integrity
