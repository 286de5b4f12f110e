// The GPU span of one timed call, from CUPTI activity records, as flashinfer-bench's
// bench_gpu_time_with_cupti computes it: the API calls (runtime or driver) that started inside
// the call's host window [t0, t1] give correlation ids; the kernel / memcpy / memset records with
// those ids are the call's GPU work; the sample is last end - first start. Whatever stream or
// thread the work went to, it counts as long as it was launched inside the window.
// Free of CUDA types so it is testable without a GPU.
#ifndef KILN_HARNESS_BACKEND_CUDA_ACTIVITY_SPAN_H_
#define KILN_HARNESS_BACKEND_CUDA_ACTIVITY_SPAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln {

struct ApiRecord {
  uint64_t start = 0;  // ns, CUPTI timestamp (host side)
  uint32_t correlation_id = 0;
};

struct GpuRecord {
  // What the work is, without per-call details: "kernel <name>", "memcpy <kind> <bytes> B",
  // "memset <value> <bytes> B".
  std::string signature;
  uint64_t start = 0;  // ns, CUPTI timestamp; 0 means unknown
  uint64_t end = 0;
  uint32_t correlation_id = 0;
};

// GPU time and record count of one kind of work.
struct WorkTime {
  uint64_t ns = 0;
  int64_t records = 0;
};

struct CallSpan {
  uint64_t first_start = 0;
  uint64_t last_end = 0;
  int64_t records = 0;  // GPU records of the call
  std::set<std::string> signatures;
  std::map<std::string, WorkTime> work;  // by signature: the records' summed durations
};

// The GPU work launched by API calls that started in [t0, t1]. Records with an unknown
// timestamp are left out.
CallSpan SpanOfCall(const std::vector<ApiRecord>& api, const std::vector<GpuRecord>& gpu,
                    uint64_t t0, uint64_t t1);

// The span in milliseconds; FAILED_PRECONDITION "the call launched no GPU work" when it has no
// records (flashinfer-bench refuses such a call as well).
absl::StatusOr<double> SpanMilliseconds(const CallSpan& span);

// OK when a call did the same kinds of work as the first timed call on the same inputs;
// otherwise FAILED_PRECONDITION listing what was added and what is missing. Calls on other inputs
// (another trial or workload) may do other work: a copy sized by the batch, another algorithm.
absl::Status CheckSameWork(const std::set<std::string>& first, const std::set<std::string>& now);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_ACTIVITY_SPAN_H_
