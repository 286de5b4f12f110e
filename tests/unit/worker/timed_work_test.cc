// What the worker reports of the timed calls' GPU work (timed_work.h).
#include "harness/worker/timed_work.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

TEST_CASE("timed work is reported longest first, with the kernels' names sorted") {
  v1::TimingResult timing;
  RecordTimedWork({{"memcpy kind 8 64 B", 0.5, 30},
                   {"kernel zeta", 2.0, 30},
                   {"kernel alpha", 1.0, 60}},
                  &timing);
  REQUIRE(timing.gpu_work_size() == 3);
  CHECK(timing.gpu_work(0).signature() == "kernel zeta");
  CHECK(timing.gpu_work(0).total_ms() == 2.0);
  CHECK(timing.gpu_work(1).signature() == "kernel alpha");
  CHECK(timing.gpu_work(1).launches() == 60);
  CHECK(timing.gpu_work(2).signature() == "memcpy kind 8 64 B");
  REQUIRE(timing.kernels_size() == 2);
  CHECK(timing.kernels(0) == "alpha");
  CHECK(timing.kernels(1) == "zeta");
}

TEST_CASE("work past 128 kinds is summed into one entry, so the GPU time still adds up") {
  std::vector<TimedWork> work;
  double total = 0;
  for (int i = 0; i < 200; ++i) {
    work.push_back({absl::StrCat("kernel k", 1000 + i), 1.0 + i, 1});
    total += 1.0 + i;
  }
  work.push_back({"kernel " + std::string(10000, 'x'), 500, 1});  // the longest, cut
  total += 500;
  v1::TimingResult timing;
  RecordTimedWork(work, &timing);
  REQUIRE(timing.gpu_work_size() == 128);
  CHECK(timing.gpu_work(0).signature().size() == 4096);
  CHECK(timing.gpu_work(1).signature() == "kernel k1199");
  CHECK(timing.gpu_work(127).signature() == "(other work)");
  CHECK(timing.gpu_work(127).launches() == 201 - 127);  // 127 named, the rest summed
  double sum = 0;
  for (const v1::GpuWork& w : timing.gpu_work()) sum += w.total_ms();
  CHECK(sum == Approx(total));
  CHECK(timing.kernels_size() == 128);
  CHECK(timing.kernels(127) == std::string(4096, 'x'));  // sorted: 'x' after "k..."
}

}  // namespace
}  // namespace kiln
