// The CUPTI span of a call, computed from activity records (no GPU needed).
#include "harness/backend/cuda/activity_span.h"

#include <catch2/catch.hpp>

namespace kiln {
namespace {

TEST_CASE("the span runs from the first start to the last end of the call's GPU work") {
  // Calls 7 and 8 start inside the window [100, 200]; 5 before it, 9 after it.
  std::vector<ApiRecord> api = {{90, 5}, {110, 7}, {120, 8}, {210, 9}};
  std::vector<GpuRecord> gpu = {{"kernel before", 95, 300, 5},
                                {"kernel a", 1000, 2000, 7},
                                {"memset value 0 64 B", 1500, 1600, 8},
                                {"kernel b", 2500, 4000, 8},
                                {"kernel after", 5000, 6000, 9}};
  CallSpan span = SpanOfCall(api, gpu, 100, 200);
  CHECK(span.records == 3);
  CHECK(span.first_start == 1000);
  CHECK(span.last_end == 4000);
  CHECK(span.signatures == std::set<std::string>{"kernel a", "kernel b", "memset value 0 64 B"});
  absl::StatusOr<double> ms = SpanMilliseconds(span);
  REQUIRE(ms.ok());
  CHECK(*ms == Approx(3000 / 1e6));
}

TEST_CASE("work on another stream counts when the call launched it") {
  // Two kernels of the call on different streams overlap; the span covers both.
  std::vector<ApiRecord> api = {{110, 1}, {111, 2}};
  std::vector<GpuRecord> gpu = {{"kernel main", 1000, 1100, 1}, {"kernel side", 1050, 9000, 2}};
  CHECK(SpanOfCall(api, gpu, 100, 200).last_end == 9000);
}

TEST_CASE("a call that launched no GPU work is an error") {
  std::vector<ApiRecord> api = {{150, 3}};
  std::vector<GpuRecord> gpu = {{"kernel other", 10, 20, 4}, {"kernel unfinished", 0, 0, 3}};
  CallSpan span = SpanOfCall(api, gpu, 100, 200);
  CHECK(span.records == 0);
  absl::StatusOr<double> ms = SpanMilliseconds(span);
  CHECK(ms.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(ms.status().message()),
             Catch::StartsWith("the call launched no GPU work"));
}

TEST_CASE("the call's GPU time is summed per kind of work") {
  std::vector<ApiRecord> api = {{110, 1}, {120, 2}, {130, 3}};
  std::vector<GpuRecord> gpu = {{"kernel mine", 1000, 1100, 1},
                                {"kernel torch", 1100, 1400, 2},
                                {"kernel mine", 1400, 1450, 3}};
  CallSpan span = SpanOfCall(api, gpu, 100, 200);
  REQUIRE(span.work.size() == 2);
  CHECK(span.work["kernel mine"].ns == 150);
  CHECK(span.work["kernel mine"].records == 2);
  CHECK(span.work["kernel torch"].ns == 300);
}

TEST_CASE("a call whose kernels differ from the first timed call's is an error") {
  CHECK(CheckSameWork({"kernel a", "kernel b"}, {"kernel b", "kernel a"}).ok());
  absl::Status s = CheckSameWork({"kernel a"}, {"kernel b"});
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(s.message()), Catch::Contains("new: kernel b"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("missing: kernel a"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("first timed call on the same inputs"));
}

}  // namespace
}  // namespace kiln
