#include "harness/backend/cuda/activity_span.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

CallSpan SpanOfCall(const std::vector<ApiRecord>& api, const std::vector<GpuRecord>& gpu,
                    uint64_t t0, uint64_t t1) {
  std::set<uint32_t> ids;
  for (const ApiRecord& call : api) {
    if (call.start >= t0 && call.start <= t1) ids.insert(call.correlation_id);
  }
  CallSpan span;
  for (const GpuRecord& record : gpu) {
    if (ids.count(record.correlation_id) == 0) continue;
    if (record.start == 0 || record.end == 0 || record.end < record.start) continue;
    if (span.records == 0 || record.start < span.first_start) span.first_start = record.start;
    if (span.records == 0 || record.end > span.last_end) span.last_end = record.end;
    ++span.records;
    span.signatures.insert(record.signature);
    WorkTime& time = span.work[record.signature];
    time.ns += record.end - record.start;
    ++time.records;
  }
  return span;
}

absl::StatusOr<double> SpanMilliseconds(const CallSpan& span) {
  if (span.records == 0) {
    return absl::FailedPreconditionError(
        "the call launched no GPU work (no kernel, memcpy or memset was recorded for it)");
  }
  return static_cast<double>(span.last_end - span.first_start) / 1e6;
}

absl::Status CheckSameWork(const std::set<std::string>& first, const std::set<std::string>& now) {
  if (first == now) return absl::OkStatus();
  std::vector<std::string> added, missing;
  std::set_difference(now.begin(), now.end(), first.begin(), first.end(),
                      std::back_inserter(added));
  std::set_difference(first.begin(), first.end(), now.begin(), now.end(),
                      std::back_inserter(missing));
  std::string message =
      "the call launched different GPU work than the first timed call on the same inputs";
  if (!added.empty()) absl::StrAppend(&message, "; new: ", absl::StrJoin(added, ", "));
  if (!missing.empty()) absl::StrAppend(&message, "; missing: ", absl::StrJoin(missing, ", "));
  return absl::FailedPreconditionError(message);
}

}  // namespace kiln
