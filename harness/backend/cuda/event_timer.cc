#include "harness/backend/cuda/event_timer.h"

#include <cstdio>

namespace kiln {

absl::StatusOr<std::unique_ptr<EventTimer>> EventTimer::Create(const CudaRuntimeApi& rt,
                                                               cudaStream_t stream,
                                                               CudaCheck check) {
  std::unique_ptr<EventTimer> timer(new EventTimer(rt, stream, std::move(check)));
  if (absl::Status s = timer->check_(rt.EventCreate(&timer->start_), "cudaEventCreate"); !s.ok()) {
    return s;
  }
  if (absl::Status s = timer->check_(rt.EventCreate(&timer->end_), "cudaEventCreate"); !s.ok()) {
    return s;
  }
  return timer;
}

EventTimer::~EventTimer() {
  if (abandoned_) return;
  for (cudaEvent_t event : {start_, end_}) {
    if (event == nullptr) continue;
    cudaError_t err = rt_.EventDestroy(event);
    if (err != cudaSuccess) {
      std::fprintf(stderr, "kiln-worker: cudaEventDestroy: %s\n", CudaErrorText(rt_, err).c_str());
    }
  }
}

absl::StatusOr<double> EventTimer::TimeCall(const std::function<absl::Status()>& call,
                                            const std::function<absl::Status()>& synchronize) {
  if (absl::Status s = check_(rt_.EventRecord(start_, stream_), "cudaEventRecord"); !s.ok()) {
    return s;
  }
  absl::Status status = call();
  absl::Status recorded = check_(rt_.EventRecord(end_, stream_), "cudaEventRecord");
  absl::Status synced = synchronize();
  if (!status.ok()) return status;
  if (!recorded.ok()) return recorded;
  if (!synced.ok()) return synced;
  float ms = 0;
  if (absl::Status s = check_(rt_.EventElapsedTime(&ms, start_, end_), "cudaEventElapsedTime");
      !s.ok()) {
    return s;
  }
  return static_cast<double>(ms);
}

}  // namespace kiln
