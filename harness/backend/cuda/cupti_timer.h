// The official timer of the CUDA backend: CUPTI activity records, as flashinfer-bench's
// bench_gpu_time_with_cupti. Activity tracing of RUNTIME, DRIVER, CONCURRENT_KERNEL, MEMCPY and
// MEMSET is enabled once per process; each timed call is bracketed by CUPTI timestamps, the
// device is synchronized (so work on any stream finishes), the records are flushed, and the
// sample is the span of the call's GPU work (activity_span.h). A call whose set of kernels /
// copies / fills differs from the first timed call's is an error, as in flashinfer-bench.
#ifndef KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_
#define KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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

  // The kernels of the first timed call (every later one launched the same set): names as
  // CUPTI gives them (mangled for C++ kernels), sorted. Empty before a call was timed.
  std::vector<std::string> Kernels() const;

 private:
  explicit CuptiTimer(const CuptiApi& api) : api_(api) {}
  const CuptiApi& api_;
  std::optional<std::set<std::string>> first_work_;  // signatures of the first timed call
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUPTI_TIMER_H_
