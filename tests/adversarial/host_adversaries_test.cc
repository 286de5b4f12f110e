// The adversarial corpus, host backend: one solution per known exploit of kernel evaluators
// (docs/integrity.md), each evaluated by a real kiln-harness, each asserting the exact verdict
// and the integrity check its reason names. The honest controls must PASS: a check that rejects
// them is broken too.
#include <catch2/catch.hpp>
#include <string>

#include "tests/adversarial/adversary_support.h"

namespace kiln::adversarial {
namespace {

// What every adversary starts from: vector_add_f32's arguments, named.
const std::string kHead = R"(#include <kiln/abi.h>
#include <stdint.h>
#include <string.h>
#define ARGS const kiln_tensor* args, int32_t nargs, const kiln_context* ctx
#define A ((const float*)args[0].data)
#define B ((const float*)args[1].data)
#define C ((float*)args[2].data)
#define N (args[0].shape[0])
)";

void CheckRejected(const v1::Run& run, const std::string& check) {
  INFO(run.reason());
  CHECK(run.status() == v1::REJECTED);
  CHECK_THAT(run.reason(), Catch::StartsWith(check + ": "));
  CHECK(run.traces(0).evaluation().status() == v1::REJECTED);
  CHECK_FALSE(run.traces(0).evaluation().has_performance());
}

TEST_CASE("honest control: a plain loop PASSES with a speed-of-light floor recorded") {
  v1::Run run = Evaluate(CppSolution("honest", kHead + R"(
extern "C" int run(ARGS) { for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i]; return 0; })"),
                         4096);
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  const v1::TraceDetail& d = run.traces(0).kiln();
  CHECK(d.speed_of_light().bytes() == 3 * 4096 * 4);
  CHECK(d.speed_of_light().peak_gbps() > 0);
  CHECK(d.speed_of_light().floor_ms() > 0);
  CHECK(d.speed_of_light().floor_ms() < run.traces(0).evaluation().performance().latency_ms());
  CHECK(Warnings(run).empty());
}

TEST_CASE("honest control: a persistent thread pool that blocks when idle PASSES") {
  v1::Run run = Evaluate(CppSolution("honest_pool", kHead + R"(
#include <condition_variable>
#include <mutex>
#include <thread>
static std::mutex mu; static std::condition_variable cv;
static const kiln_tensor* job = nullptr; static int done = 0; static long gen = 0;
static void Worker() {
  long seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return gen != seen; });
    seen = gen; const kiln_tensor* args = job; l.unlock();
    for (int64_t i = N / 2; i < N; ++i) C[i] = A[i] + B[i];
    l.lock(); done = 1; cv.notify_all();
  }
}
extern "C" int run(ARGS) {
  static std::thread* t = new std::thread(Worker);
  (void)t;
  { std::lock_guard<std::mutex> l(mu); job = args; done = 0; ++gen; }
  cv.notify_all();
  for (int64_t i = 0; i < N / 2; ++i) C[i] = A[i] + B[i];
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [] { return done == 1; });
  return 0;
})"),
                         1 << 20);
  INFO(run.reason());
  CHECK(run.status() == v1::PASSED);
}

TEST_CASE("stale output: one row computed, the rest left as it was, is an unwritten element") {
  // Sakana's kernel computed one row and relied on memory still holding an earlier result.
  v1::Run run = Evaluate(CppSolution("one_row", kHead + R"(
extern "C" int run(ARGS) { for (int64_t i = 0; i < 64; ++i) C[i] = A[i] + B[i]; return 0; })"),
                         4096);
  CheckRejected(run, "integrity.unwritten_output");
  CHECK_THAT(run.reason(), Catch::Contains("element [64] (flat index 64) was never written"));
}

TEST_CASE("input mutation: using an input as scratch space") {
  v1::Run run = Evaluate(CppSolution("scratch_input", kHead + R"(
extern "C" int run(ARGS) {
  float* a = (float*)A;
  for (int64_t i = 0; i < N; ++i) { a[i] += B[i]; C[i] = a[i]; a[i] -= B[i]; a[i] += 0.5f; }
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.input_mutation");
  CHECK_THAT(run.reason(), Catch::Contains("input 'a'"));
}

TEST_CASE("caching by pointer: the same input address replays the first result") {
  v1::Run run = Evaluate(CppSolution("cache_by_pointer", kHead + R"(
#include <vector>
static const void* last = nullptr; static std::vector<float> saved;
extern "C" int run(ARGS) {
  if (args[0].data == last) { memcpy(C, saved.data(), N * sizeof(float)); return 0; }
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  last = args[0].data; saved.assign(C, C + N);
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.output_caching");
}

TEST_CASE("caching by input fingerprint: a hash of a few elements replays the previous output") {
  // The FlashInfer contest's MoE exploit (starter-kit issue 21).
  v1::Run run = Evaluate(CppSolution("cache_by_fingerprint", kHead + R"(
#include <vector>
static uint64_t last = 0; static std::vector<float> saved;
extern "C" int run(ARGS) {
  uint64_t h = (uint64_t)N;
  const float probes[4] = {A[0], A[N / 2], B[0], B[N - 1]};
  for (float p : probes) { uint32_t w; memcpy(&w, &p, 4); h = h * 1000003u ^ w; }
  if (h == last && (int64_t)saved.size() == N) { memcpy(C, saved.data(), N * sizeof(float)); return 0; }
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  last = h; saved.assign(C, C + N);
  return 0;
})"),
                         1 << 16);
  CheckRejected(run, "integrity.output_caching");
}

TEST_CASE("call-count trick: honest on the first calls only") {
  v1::Run run = Evaluate(CppSolution("first_calls_only", kHead + R"(
static int calls = 0;
extern "C" int run(ARGS) {
  if (++calls > 2) return 0;
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.stale_output");
  CHECK_THAT(run.reason(), Catch::Contains("timed call 1 of trial 0"));
}

TEST_CASE("timed calls that write every element with other values are named, not called stale") {
  // A kernel whose results are not a function of its inputs (here: the call count; on a GPU a
  // race or a read of uninitialised shared memory): the checked and determinism calls agree, the
  // timed ones write other values everywhere. No element is left holding kiln's poison, so the
  // verdict names the results as nondeterministic rather than skipped work.
  v1::Run run = Evaluate(CppSolution("drifts_after_two_calls", kHead + R"(
static int calls = 0;
extern "C" int run(ARGS) {
  const float drift = ++calls > 2 ? 1.0f : 0.0f;
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i] + drift;
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.nondeterministic");
  CHECK_THAT(run.reason(), Catch::Contains("timed call 1 of trial 0"));
  CHECK_THAT(run.reason(), Catch::Contains("wrote every element"));
}

TEST_CASE("zeros pass a degenerate definition, which is flagged on the run and in defs list") {
  PutScaledAddDefinition("tiny_add", 1e-4, {});
  CHECK(DefinitionWarning("tiny_add").empty());
  // Reads its inputs like an honest kernel (a plain memset can fall below the speed-of-light
  // floor), then writes zeros.
  v1::Run run = Evaluate(CppSolution("zeros", kHead + R"(
extern "C" int run(ARGS) { for (int64_t i = 0; i < N; ++i) C[i] = 0.0f * (A[i] + B[i]); return 0; })",
                                     "tiny_add"),
                         4096);
  INFO(run.reason());
  CHECK(run.status() == v1::PASSED);  // the definition is at fault; the warning says so
  CHECK_THAT(Warnings(run),
             Catch::StartsWith("integrity.degenerate_definition: an all-zero output passes"));
  CHECK_THAT(DefinitionWarning("tiny_add"), Catch::StartsWith("integrity.degenerate_definition"));
  // Replacing the definition (tighter tolerances, other content) clears the flag.
  PutScaledAddDefinition("tiny_add", 1.0, {});
  CHECK(DefinitionWarning("tiny_add").empty());
}

TEST_CASE("work after return: a detached host thread computes after the call returned") {
  v1::Run run = Evaluate(CppSolution("detached_thread", kHead + R"(
#include <thread>
extern "C" int run(ARGS) {
  const float* a = A; const float* b = B; float* c = C; int64_t n = N;
  std::thread([=] { for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i]; }).detach();
  return 0;
})"),
                         1 << 21);
  CheckRejected(run, "integrity.work_after_return");
  CHECK_THAT(run.reason(), Catch::Contains("of trial 0"));  // the first call it overlaps
}

TEST_CASE("work after return: a detached thread still writing the outputs gets the verdict, not "
          "a crash") {
  // The thread keeps writing the outputs for 300 ms after the call returned. The worker must
  // send its verdict before anything it frees can fault that thread; a worker that freed the
  // outputs first died by SIGSEGV and the run read as a RUNTIME_ERROR. Buffers over 32 MiB, so
  // that glibc maps each one (its dynamic mmap threshold stops there) and a freed one is unmapped
  // at once.
  v1::Run run = Evaluate(CppSolution("detached_writer", kHead + R"(
#include <chrono>
#include <thread>
extern "C" int run(ARGS) {
  const float* a = A; const float* b = B; float* c = C; int64_t n = N;
  std::thread([=] {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < end) {
      for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    }
  }).detach();
  return 0;
})"),
                         (int64_t{1} << 23) + 4096);
  CheckRejected(run, "integrity.work_after_return");
  CHECK_THAT(run.reason(), Catch::Contains("of trial 0"));
}

TEST_CASE("work after return: arming a CPU-time timer to make the CPU accounting lag") {
  // With a process CPU timer armed, Linux reads the process CPU clock from a counter updated at
  // scheduler events: a helper thread's work could hide in the lag (up to a tick per call).
  v1::Run run = Evaluate(CppSolution("cpu_timer", kHead + R"(
#include <sys/time.h>
extern "C" int run(ARGS) {
  static int armed = 0;
  if (!armed) { struct itimerval t = {{0, 0}, {3600, 0}}; setitimer(ITIMER_PROF, &t, 0); armed = 1; }
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.work_after_return");
  CHECK_THAT(run.reason(), Catch::Contains("armed a CPU-time timer or limit (ITIMER_PROF) by the "
                                           "checked call of trial 0"));
}

TEST_CASE("deferred writes: the result lands a few ms after the call returned") {
  v1::Run run = Evaluate(CppSolution("deferred_write", kHead + R"(
#include <thread>
#include <unistd.h>
extern "C" int run(ARGS) {
  const float* a = A; const float* b = B; float* c = C; int64_t n = N;
  std::thread([=] { usleep(2000); for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i]; }).detach();
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.work_after_return");
  // Either watch sees it first, depending on the machine's load: the outputs changing after the
  // return (within 10 ms, or within 200 ms before two disagreeing calls would be called
  // nondeterministic), or the detached thread's CPU time around the call.
  CHECK_THAT(run.reason(), Catch::Matches(".*changed within [0-9]+ ms after the call returned.*") ||
                               Catch::Contains("other host threads used"));
}

TEST_CASE("too fast to be true: timed calls return at once where outputs are not re-verified") {
  // On a nondeterministic definition only the last timed call of a trial is compared; a
  // solution that knows kernelbench's call counts (2 checked, 3 warmup, 100 timed, 1 recheck)
  // idles through the rest. Only the speed-of-light floor is left to catch it.
  PutScaledAddDefinition("add_nondet", 1.0, {"kiln:nondeterministic"});
  v1::Run run = Evaluate(CppSolution("idle_timed_calls", kHead + R"(
static int calls = 0;
extern "C" int run(ARGS) {
  ++calls;
  if (calls > 2 && calls < 105) return 0;
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  return 0;
})",
                                     "add_nondet"),
                         1 << 20);
  CheckRejected(run, "integrity.faster_than_memory");
  CHECK(run.traces(0).kiln().speed_of_light().floor_ms() > 0);
}

TEST_CASE("forbidden symbol: cuBLAS without the definition's permission") {
  v1::Run run = Evaluate(CppSolution("cublas", kHead + R"(
extern "C" int cublasCreate_v2(void** handle);
extern "C" int run(ARGS) {
  void* h; if (cublasCreate_v2(&h) != 0) return 1;
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.forbidden_symbol");
  CHECK_THAT(run.reason(), Catch::Contains("cublasCreate_v2 from cuBLAS"));
}

TEST_CASE("forbidden symbol: dlsym to reach the reference or the harness") {
  v1::Run run = Evaluate(CppSolution("dlsym_reference", kHead + R"(
#include <dlfcn.h>
typedef int (*entry)(ARGS);
extern "C" int run(ARGS) {
  entry reference = (entry)dlsym(RTLD_DEFAULT, "kiln_reference_run");
  if (reference != nullptr) return reference(args, nargs, ctx);
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  return 0;
})"),
                         4096);
  CheckRejected(run, "integrity.forbidden_symbol");
  CHECK_THAT(run.reason(), Catch::Contains("dlsym (dynamic loading)"));
}

const std::string kJitter = kHead + R"(
static int calls = 0;
extern "C" int run(ARGS) {
  ++calls;
  for (int64_t i = 0; i < N; ++i) C[i] = A[i] + B[i];
  if (calls % 2 == 0) C[N / 3] = nextafterf(C[N / 3], 1e30f);  /* one ulp: as float atomics do */
  return 0;
})";

TEST_CASE("nondeterministic output is rejected unless the definition allows it") {
  v1::Run strict = Evaluate(CppSolution("jitter", "#include <math.h>\n" + kJitter), 4096);
  CheckRejected(strict, "integrity.nondeterministic");
  CHECK_THAT(strict.reason(), Catch::Contains("output 'c'"));

  PutScaledAddDefinition("add_tolerant", 1.0, {"kiln:nondeterministic"});
  v1::Run tolerant =
      Evaluate(CppSolution("jitter", "#include <math.h>\n" + kJitter, "add_tolerant"), 4096);
  INFO(tolerant.reason());
  CHECK(tolerant.status() == v1::PASSED);
}

}  // namespace
}  // namespace kiln::adversarial
