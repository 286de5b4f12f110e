// The fallback timer of the CUDA backend, used when CUPTI is unavailable: a CUDA event recorded
// on the worker's stream before and after the call. It includes launch latency and misses work
// the solution puts on other streams, which is why results carry timer "events".
#ifndef KILN_HARNESS_BACKEND_CUDA_EVENT_TIMER_H_
#define KILN_HARNESS_BACKEND_CUDA_EVENT_TIMER_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "harness/backend/cuda/cuda_runtime_api.h"

namespace kiln {

// Turns a CUDA result into a Status (and records it where the caller tracks failures).
using CudaCheck = std::function<absl::Status(cudaError_t, absl::string_view call)>;

class EventTimer {
 public:
  static absl::StatusOr<std::unique_ptr<EventTimer>> Create(const CudaRuntimeApi& rt,
                                                            cudaStream_t stream, CudaCheck check);
  // Destroys the events unless the device has failed (then CUDA is not called again).
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Records the start event, runs `call`, records the end event, runs `synchronize`, and
  // returns the elapsed time between the events in ms.
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  const std::function<absl::Status()>& synchronize);

  // Set when the device has failed: the destructor then leaves the events alone.
  void Abandon() { abandoned_ = true; }

 private:
  EventTimer(const CudaRuntimeApi& rt, cudaStream_t stream, CudaCheck check)
      : rt_(rt), stream_(stream), check_(std::move(check)) {}
  const CudaRuntimeApi& rt_;
  cudaStream_t stream_;
  CudaCheck check_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t end_ = nullptr;
  bool abandoned_ = false;
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_EVENT_TIMER_H_
