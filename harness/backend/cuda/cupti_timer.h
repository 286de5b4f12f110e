// The official timer of the CUDA backend: CUPTI activity records, as flashinfer-bench's
// bench_gpu_time_with_cupti. Activity tracing of RUNTIME, DRIVER, CONCURRENT_KERNEL, MEMCPY and
// MEMSET is enabled once per process; each timed call is bracketed by CUPTI timestamps, the
// device is synchronized (so work on any stream finishes), the records are flushed, and the
// sample is the span of the call's GPU work (activity_span.h). A call whose set of kernels /
// copies / fills differs from that of the first timed call on the same inputs is an error, as in
// flashinfer-bench.
#ifndef KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_
#define KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/backend/cuda/activity_span.h"
#include "harness/backend/cuda/cupti_api.h"

namespace kiln {

class CuptiTimer {
 public:
  // Loads CUPTI (beside `cudart_dir` if the loader does not find it) and enables activity
  // tracing. An error (no CUPTI, another profiler holds it, ...) means: use CUDA events.
  static absl::StatusOr<std::unique_ptr<CuptiTimer>> Create(const std::string& cudart_dir);

  // Runs `call`, then `synchronize_stream` (waits for the solution's stream) and `synchronize`
  // (waits for all work on the device), and returns the GPU span of the call in ms. The first
  // error of call / synchronize is returned as is. *unjoined_ns (may be null) is how long the
  // call's GPU work ran after its stream was idle (0 when it finished first): work on another
  // stream the solution never joined to its own.
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  const std::function<absl::Status()>& synchronize_stream,
                                  const std::function<absl::Status()>& synchronize,
                                  int64_t* unjoined_ns);

  // Deferred: runs and waits exactly as TimeCall, but leaves the call's records in CUPTI's
  // buffers. TakeDeferred then flushes them once for all the calls deferred since the last
  // TakeDeferred (flashinfer-bench flushes once after its timed loop) and returns each call's
  // sample in call order, with the same errors as TimeCall. A TimeCall in between discards the
  // deferred calls.
  absl::Status TimeCallDeferred(const std::function<absl::Status()>& call,
                                const std::function<absl::Status()>& synchronize_stream,
                                const std::function<absl::Status()>& synchronize);
  struct Sample {
    double ms = 0;
    int64_t unjoined_ns = 0;
    // The GPU's time between the previous call's last work and this call's first (calls taken
    // together, a trial's); -1 for the first call taken, or when a timestamp is unknown.
    int64_t gap_before_ns = -1;
  };
  absl::StatusOr<std::vector<Sample>> TakeDeferred();

  // The calls timed from now on run on new inputs (a new trial or workload): the next one's
  // work is what the later ones are compared with. Calls deferred and never taken (a request
  // whose timing failed) are dropped, so that the trial's samples are its own.
  void StartInputSet();

  // The GPU work of the calls timed since the last TakeWork, by signature ("kernel <name as
  // CUPTI gives it>", "memcpy kind ...", "memset ..."): summed durations and record counts.
  // Clears it.
  std::map<std::string, WorkTime> TakeWork();

 private:
  explicit CuptiTimer(const CuptiApi& api) : api_(api) {}
  // A timed call's host window: CUPTI timestamps before the call, when its stream was idle, and
  // after the device was.
  struct Window {
    uint64_t t0 = 0, stream_idle = 0, t1 = 0;
    bool idle_known = false;
  };
  // Starts collecting records, dropping what was collected before.
  void StartCollecting();
  // Runs the call and waits; the window, or the first error of the call / the waits / the
  // timestamps.
  absl::StatusOr<Window> RunCall(const std::function<absl::Status()>& call,
                                 const std::function<absl::Status()>& synchronize_stream,
                                 const std::function<absl::Status()>& synchronize);
  // Flushes CUPTI's buffers and computes each window's span; stops collecting.
  absl::StatusOr<std::vector<Sample>> Spans(const std::vector<Window>& windows);

  const CuptiApi& api_;
  std::vector<Window> deferred_;  // calls deferred since the last TakeDeferred
  std::optional<std::set<std::string>> first_work_;  // of the input set's first timed call
  std::map<std::string, WorkTime> work_;             // since the last TakeWork
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_
