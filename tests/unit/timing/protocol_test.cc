// The three timing protocols (protocol.h), driven through a scripted TimedDevice.
#include "harness/timing/protocol.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// A device whose samples come from a script: duration(k) and throttled(k) for the k-th timed
// call. Every event is logged so tests can check counts and order.
class ScriptedDevice : public TimedDevice {
 public:
  std::function<double(int)> duration = [](int) { return 1.0; };
  std::function<bool(int)> throttled = [](int) { return false; };
  std::function<absl::Status(int)> flush_status = [](int) { return absl::OkStatus(); };
  std::vector<std::string>* log = nullptr;
  int flushes = 0, timed = 0;
  std::vector<int64_t> flush_sizes;

  absl::Status Flush(int64_t bytes) override {
    flush_sizes.push_back(bytes);
    if (log) log->push_back("flush");
    return flush_status(flushes++);
  }
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* is_throttled) override {
    if (log) log->push_back("time");
    if (absl::Status s = call(); !s.ok()) return s;
    *is_throttled = throttled(timed);
    return duration(timed++);
  }
  std::string TimerName() const override { return "host"; }
  int64_t DefaultFlushBytes() const override { return 64 << 20; }
  std::string DeviceName() const override { return "scripted"; }
  // How many input sets were started, and the timed calls made before each start.
  std::vector<int> input_set_starts;
  void StartInputSet() override { input_set_starts.push_back(timed); }

  // Deferred samples (defer = true): TimeCallDeferred keeps the sample, TakeDeferredSamples
  // hands the kept ones back (`take_extra` more than were timed, to script a faulty timer).
  bool defer = false;
  int take_extra = 0;
  std::vector<double> pending;
  bool DefersSamples() const override { return defer; }
  absl::Status TimeCallDeferred(const std::function<absl::Status()>& call,
                                bool* is_throttled) override {
    if (log) log->push_back("time deferred");
    if (absl::Status s = call(); !s.ok()) return s;
    *is_throttled = throttled(timed);
    pending.push_back(duration(timed++));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<double>> TakeDeferredSamples() override {
    if (log) log->push_back("take");
    std::vector<double> taken;
    taken.swap(pending);
    for (int i = 0; i < take_extra; ++i) taken.push_back(1.0);
    return taken;
  }
};

// A TimedCall that counts and logs its callbacks.
struct CountingWork {
  std::vector<std::string> log;
  std::vector<int> trials;
  int before = 0, calls = 0, after = 0;
  int after_timed = 0;  // after_call told the call was a timed sample
  std::vector<bool> flushed;  // what before_call was told, per call
  std::vector<int> after_samples;  // the trials after_samples was called for
  int finished = 0;                 // finish_checks calls
  std::function<absl::Status()> fail_call = [] { return absl::OkStatus(); };
  std::function<absl::Status()> fail_after = [] { return absl::OkStatus(); };
  std::function<absl::Status()> fail_finish = [] { return absl::OkStatus(); };

  TimedCall Make() {
    TimedCall w;
    w.prepare_trial = [this](int t) {
      trials.push_back(t);
      log.push_back(absl::StrCat("prepare", t));
      return absl::OkStatus();
    };
    w.before_call = [this](bool is_flushed) {
      ++before;
      flushed.push_back(is_flushed);
      log.push_back("before");
      return absl::OkStatus();
    };
    w.call = [this] {
      ++calls;
      log.push_back("call");
      return fail_call();
    };
    w.after_call = [this](bool timed) {
      ++after;
      after_timed += timed ? 1 : 0;
      log.push_back("after");
      return fail_after();
    };
    w.finish_checks = [this] {
      ++finished;
      log.push_back("finish");
      return fail_finish();
    };
    w.after_samples = [this](int trial) {
      after_samples.push_back(trial);
      log.push_back(absl::StrCat("samples", trial));
      return absl::OkStatus();
    };
    return w;
  }
};

v1::TimingConfig Config(const std::string& mode) {
  auto c = DefaultTimingConfig(mode);
  REQUIRE(c.ok());
  return *c;
}

TEST_CASE("default timing configs follow DESIGN section 5") {
  const auto official = Config("official");
  CHECK(official.trials() == 3);
  CHECK(official.warmup() == 10);
  CHECK(official.iterations() == 50);
  CHECK(official.flush_bytes() == 0);
  const auto kb = Config("kernelbench");
  CHECK(kb.trials() == 1);
  CHECK(kb.warmup() == 3);
  CHECK(kb.iterations() == 100);
  CHECK(kb.flush_bytes() == 256 << 20);
  const auto robust = Config("robust");
  CHECK(robust.trials() == 1);
  CHECK(robust.warmup() == 10);
  CHECK(robust.min_samples() == 10);
  CHECK(robust.target_rel_stdev() == 0.005);
  CHECK(robust.max_seconds() == 15);
  CHECK(Config("").mode() == "official");
  auto bad = DefaultTimingConfig("fastest");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("'fastest'") != std::string::npos);
}

TEST_CASE("a definition's timed-call counts replace official mode's and no other mode's") {
  v1::Definition def;
  def.mutable_timing_overrides()->set_warmup(1);
  def.mutable_timing_overrides()->set_iterations(5);
  auto official = TimingConfigFor("official", def);
  REQUIRE(official.ok());
  CHECK(official->warmup() == 1);
  CHECK(official->iterations() == 5);
  CHECK(official->trials() == 3);  // not set: the default
  for (const std::string mode : {"kernelbench", "robust"}) {
    INFO(mode);
    auto other = TimingConfigFor(mode, def);
    REQUIRE(other.ok());
    CHECK(other->SerializeAsString() == Config(mode).SerializeAsString());
  }
  CHECK(TimingConfigFor("official", v1::Definition())->SerializeAsString() ==
        Config("official").SerializeAsString());
  CHECK_FALSE(TimingConfigFor("fastest", def).ok());
}

TEST_CASE("official: three trials of flushed warmup and flushed timed calls") {
  ScriptedDevice dev;
  CountingWork work;
  dev.log = &work.log;
  // Trial medians 1, 2 and 6: the latency is their mean (3), not the overall median (2).
  dev.duration = [](int k) { return k < 50 ? 1.0 : k < 100 ? 2.0 : 6.0; };
  auto r = RunTimingProtocol(Config("official"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(work.trials == std::vector<int>{0, 1, 2});
  CHECK(work.calls == 3 * (10 + 50));
  CHECK(work.before == work.calls);
  CHECK(work.after == work.calls);
  CHECK(work.after_timed == 150);  // the warmup calls' after_call is told they were not timed
  // Every call of official mode is flushed, warmup calls too.
  CHECK(std::count(work.flushed.begin(), work.flushed.end(), true) == 180);
  CHECK(work.after_samples == std::vector<int>{0, 1, 2});
  CHECK(dev.flushes == 3 * (10 + 50));
  CHECK(dev.timed == 150);
  CHECK(dev.flush_sizes.front() == 64 << 20);
  // Warmup: before, flush, call, after; timed: before, flush, finish (the previous timed call's
  // queued checks, once the flush left the device idle), time(call), after.
  const std::vector<std::string> head(work.log.begin(), work.log.begin() + 5);
  CHECK(head == std::vector<std::string>{"prepare0", "before", "flush", "call", "after"});
  const std::vector<std::string> first_timed(work.log.begin() + 1 + 4 * 10,
                                             work.log.begin() + 1 + 4 * 10 + 6);
  CHECK(first_timed ==
        std::vector<std::string>{"before", "flush", "finish", "time", "call", "after"});
  // One finish per timed call (after its successor's flush) and one after each trial's last.
  CHECK(work.finished == 150 + 3);
  CHECK(r->mode() == "official");
  CHECK(r->timer() == "host");
  CHECK(r->device() == "scripted");
  CHECK(r->flush_bytes() == 64 << 20);
  CHECK(r->trials() == 3);
  CHECK(r->warmup() == 10);
  CHECK(r->iterations() == 50);
  REQUIRE(r->trial_medians_ms_size() == 3);
  CHECK(r->trial_medians_ms(2) == 6.0);
  CHECK(r->latency_ms() == Approx(3.0));
  CHECK(r->median_ms() == 2.0);
  CHECK(r->mean_ms() == Approx(3.0));
  CHECK(r->min_ms() == 1.0);
  CHECK(r->max_ms() == 6.0);
  CHECK(r->sample_count() == 150);
  CHECK(r->samples_dropped() == 0);
  // Every sample, in the order taken.
  REQUIRE(r->samples_ms_size() == 150);
  CHECK(r->samples_ms(0) == 1.0);
  CHECK(r->samples_ms(50) == 2.0);
  CHECK(r->samples_ms(149) == 6.0);
  CHECK(r->ci95_low_ms() < r->mean_ms());
  CHECK(r->ci95_high_ms() > r->mean_ms());
}

TEST_CASE("a device that defers its samples is read once per trial, in call order") {
  for (const std::string mode : {"official", "kernelbench"}) {
    INFO(mode);
    ScriptedDevice immediate, deferred;
    deferred.defer = true;
    const auto duration = [](int k) { return 1.0 + (k % 7) * 0.25 + (k / 50) * 3.0; };
    immediate.duration = duration;
    deferred.duration = duration;
    CountingWork a, b;
    deferred.log = &b.log;
    auto r1 = RunTimingProtocol(Config(mode), immediate, a.Make());
    auto r2 = RunTimingProtocol(Config(mode), deferred, b.Make());
    REQUIRE(r1.ok());
    REQUIRE(r2.ok());
    CHECK(immediate.timed == deferred.timed);
    REQUIRE(r1->samples_ms_size() == r2->samples_ms_size());
    for (int i = 0; i < r1->samples_ms_size(); ++i) CHECK(r1->samples_ms(i) == r2->samples_ms(i));
    CHECK(r1->latency_ms() == r2->latency_ms());
    CHECK(a.after_samples == b.after_samples);
    // After a trial's last timed call: its queued checks, take, then after_samples; never a
    // TimeCall.
    CHECK(std::count(b.log.begin(), b.log.end(), "time") == 0);
    const auto take = std::find(b.log.begin(), b.log.end(), "take");
    REQUIRE(take != b.log.end());
    CHECK(*(take - 2) == "after");
    CHECK(*(take - 1) == "finish");
    CHECK(*(take + 1) == "samples0");
  }
}

TEST_CASE("a deferred timer that returns the wrong number of samples is an error") {
  ScriptedDevice dev;
  dev.defer = true;
  dev.take_extra = 1;
  CountingWork work;
  auto r = RunTimingProtocol(Config("official"), dev, work.Make());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("51 deferred samples for 50 timed calls") !=
        std::string::npos);
  CHECK(work.after_samples.empty());
}

TEST_CASE("robust mode times every sample at once, even on a device that could defer") {
  ScriptedDevice dev;
  dev.defer = true;
  CountingWork work;
  dev.log = &work.log;
  auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(std::count(work.log.begin(), work.log.end(), "time deferred") == 0);
  CHECK(std::count(work.log.begin(), work.log.end(), "take") == 0);
  CHECK(work.after_samples == std::vector<int>{0});
}

TEST_CASE("a timed call's queued checks finish before the next call and before its trial ends") {
  for (const std::string mode : {"official", "kernelbench", "robust"}) {
    INFO(mode);
    ScriptedDevice dev;
    CountingWork work;
    dev.log = &work.log;
    auto r = RunTimingProtocol(Config(mode), dev, work.Make());
    REQUIRE(r.ok());
    // Between a timed call's after_call and the next call (or the trial's samples, or the next
    // trial's inputs) there is exactly one finish; none before the first timed call's after.
    bool pending = false, timed = false;
    int finishes = 0;
    for (const std::string& event : work.log) {
      if (event.rfind("time", 0) == 0) timed = true;  // the device times the call that follows
      if (event == "finish") {
        ++finishes;
        pending = false;
      } else if (event == "call" || event == "take" || event.rfind("samples", 0) == 0 ||
                 event.rfind("prepare", 0) == 0) {
        CHECK_FALSE(pending);
      }
      // A timed call's after_call leaves checks queued; a warmup call's leaves none.
      if (event == "after") {
        if (timed) pending = true;
        timed = false;
      }
    }
    CHECK_FALSE(pending);
    CHECK(finishes == work.finished);
    CHECK(work.finished == dev.timed + r->trials());
  }
}

TEST_CASE("an error from the queued checks aborts before the next timed call") {
  ScriptedDevice dev;
  CountingWork work;
  work.fail_finish = [&] {
    return work.finished == 4 ? absl::FailedPreconditionError("input 'x' was modified")
                              : absl::OkStatus();
  };
  auto r = RunTimingProtocol(Config("official"), dev, work.Make());
  CHECK(r.status() == absl::FailedPreconditionError("input 'x' was modified"));
  CHECK(dev.timed == 3);  // the checks of timed call 3 stopped timed call 4
  CHECK(work.after_samples.empty());
}

TEST_CASE("every trial starts a new input set before its inputs are made") {
  ScriptedDevice dev;
  CountingWork work;
  auto official = RunTimingProtocol(Config("official"), dev, work.Make());
  REQUIRE(official.ok());
  // Before trial 0, 1 and 2, each after the previous trial's 50 timed calls.
  CHECK(dev.input_set_starts == std::vector<int>{0, 50, 100});
  ScriptedDevice kb;
  CountingWork kb_work;
  REQUIRE(RunTimingProtocol(Config("kernelbench"), kb, kb_work.Make()).ok());
  CHECK(kb.input_set_starts == std::vector<int>{0});
}

TEST_CASE("official keeps throttled samples and says so") {
  ScriptedDevice dev;
  CountingWork work;
  dev.throttled = [](int k) { return k == 7; };
  auto r = RunTimingProtocol(Config("official"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->sample_count() == 150);
  CHECK(r->samples_dropped() == 0);
  CHECK(r->note().find("1 of 150") != std::string::npos);
}

TEST_CASE("kernelbench: unflushed warmup, 100 flushed calls of 256 MiB, mean latency") {
  ScriptedDevice dev;
  CountingWork work;
  dev.duration = [](int k) { return k == 0 ? 101.0 : 1.0; };
  auto r = RunTimingProtocol(Config("kernelbench"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(work.calls == 103);
  // KernelBench's warmup calls are not flushed, and before_call is told so.
  REQUIRE(work.flushed.size() == 103);
  CHECK(std::count(work.flushed.begin(), work.flushed.begin() + 3, true) == 0);
  CHECK(std::count(work.flushed.begin() + 3, work.flushed.end(), true) == 100);
  CHECK(work.after_samples == std::vector<int>{0});
  CHECK(dev.flushes == 100);
  CHECK(dev.timed == 100);
  CHECK(dev.flush_sizes.front() == 256 << 20);
  CHECK(r->latency_ms() == Approx(2.0));  // the mean, pulled up by one slow call
  CHECK(r->median_ms() == 1.0);
  CHECK(r->stdev_ms() == Approx(10.0));
  CHECK(r->trials() == 1);
  CHECK(r->iterations() == 100);
}

TEST_CASE("robust stops on low noise after the minimum measured time") {
  ScriptedDevice dev;
  CountingWork work;
  auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(work.trials == std::vector<int>{0});
  CHECK(r->sample_count() == 501);
  CHECK(r->samples_ms_size() == 501);
  CHECK(r->iterations() == 501);
  CHECK(dev.flushes == 10 + 501);  // warmup calls are cold too
  CHECK(work.calls == 10 + 501);
  CHECK(r->latency_ms() == 1.0);
  CHECK(r->flush_bytes() == 64 << 20);
  CHECK(r->note().find("below the target") != std::string::npos);
}

TEST_CASE("robust takes at least min_samples") {
  ScriptedDevice dev;
  CountingWork work;
  dev.duration = [](int) { return 1000.0; };  // the minimum time passes with the first sample
  auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->sample_count() == 10);
}

TEST_CASE("robust stops at the time cap when the noise stays high") {
  ScriptedDevice dev;
  CountingWork work;
  dev.duration = [](int k) { return k % 2 == 0 ? 50.0 : 150.0; };
  auto config = Config("robust");
  config.set_max_seconds(2);
  auto r = RunTimingProtocol(config, dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->sample_count() == 20);  // 20 samples average 100 ms: 2 s of measured time
  CHECK(r->latency_ms() == 100.0);
  CHECK(r->note().find("cap") != std::string::npos);
}

TEST_CASE("robust stops when steady noise converges") {
  ScriptedDevice dev;
  CountingWork work;
  dev.duration = [](int k) { return k % 2 == 0 ? 0.5 : 1.5; };
  auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->sample_count() % 16 == 0);
  CHECK(r->sample_count() < 5000);
  CHECK(r->note().find("converged") != std::string::npos);
}

TEST_CASE("robust drops throttled samples and counts them") {
  ScriptedDevice dev;
  CountingWork work;
  dev.throttled = [](int k) { return k % 3 == 2; };
  dev.duration = [](int k) { return k % 3 == 2 ? 2.0 : 1.0; };
  auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->max_ms() == 1.0);  // no throttled sample made it into the statistics
  CHECK(r->sample_count() == 501);
  CHECK(r->samples_dropped() == 250);
  CHECK(r->iterations() == r->sample_count() + r->samples_dropped());
  CHECK(r->note().find("dropped 250") != std::string::npos);
}

TEST_CASE("robust fails when every sample is throttled") {
  ScriptedDevice dev;
  CountingWork work;
  dev.throttled = [](int) { return true; };
  auto config = Config("robust");
  config.set_max_seconds(0.05);
  auto r = RunTimingProtocol(config, dev, work.Make());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("a callback error aborts the protocol and is returned unchanged") {
  ScriptedDevice dev;
  CountingWork work;
  TimedCall call;
  SECTION("prepare_trial") {
    call = work.Make();
    call.prepare_trial = [](int t) { return absl::DataLossError(absl::StrCat("inputs ", t)); };
    auto r = RunTimingProtocol(Config("official"), dev, call);
    CHECK(r.status() == absl::DataLossError("inputs 0"));
    CHECK(work.calls == 0);
  }
  SECTION("call during warmup") {
    work.fail_call = [&] {
      return work.calls == 3 ? absl::AbortedError("kernel said 7") : absl::OkStatus();
    };
    auto r = RunTimingProtocol(Config("official"), dev, work.Make());
    CHECK(r.status() == absl::AbortedError("kernel said 7"));
    CHECK(work.calls == 3);
    CHECK(dev.timed == 0);
  }
  SECTION("after_call of a timed call") {
    work.fail_after = [&] {
      return work.after == 15 ? absl::FailedPreconditionError("input mutated") : absl::OkStatus();
    };
    auto r = RunTimingProtocol(Config("kernelbench"), dev, work.Make());
    CHECK(r.status() == absl::FailedPreconditionError("input mutated"));
    CHECK(dev.timed == 12);
    CHECK(work.calls == 15);
  }
  SECTION("the device's flush") {
    dev.flush_status = [](int n) {
      return n == 4 ? absl::InternalError("memset failed") : absl::OkStatus();
    };
    auto r = RunTimingProtocol(Config("robust"), dev, work.Make());
    CHECK(r.status() == absl::InternalError("memset failed"));
    CHECK(dev.flushes == 5);
  }
}

TEST_CASE("out-of-range timing configs are rejected naming the field") {
  ScriptedDevice dev;
  CountingWork work;
  auto config = Config("official");
  config.set_trials(0);
  auto r = RunTimingProtocol(config, dev, work.Make());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(r.status().message()).find("timing.trials") != std::string::npos);
  config = Config("robust");
  config.set_target_rel_stdev(0);
  r = RunTimingProtocol(config, dev, work.Make());
  CHECK(std::string(r.status().message()).find("timing.target_rel_stdev") != std::string::npos);
  config.set_mode("fast");
  r = RunTimingProtocol(config, dev, work.Make());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(work.calls == 0);
}

TEST_CASE("an explicit flush size overrides the device default") {
  ScriptedDevice dev;
  CountingWork work;
  auto config = Config("official");
  config.set_flush_bytes(1234);
  config.set_trials(1);
  auto r = RunTimingProtocol(config, dev, work.Make());
  REQUIRE(r.ok());
  CHECK(r->flush_bytes() == 1234);
  CHECK(dev.flush_sizes.back() == 1234);
}

}  // namespace
}  // namespace kiln
