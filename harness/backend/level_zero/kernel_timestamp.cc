#include "harness/backend/level_zero/kernel_timestamp.h"

#include "absl/strings/str_cat.h"

namespace kiln {

std::string DeviceTimer::Describe() const {
  return absl::StrCat("timer ", resolution, resolution_is_frequency ? " Hz" : " ns/tick", ", ",
                      valid_bits, " valid bits");
}

uint64_t TimestampMask(uint32_t valid_bits) {
  if (valid_bits == 0 || valid_bits >= 64) return ~uint64_t{0};
  return (uint64_t{1} << valid_bits) - 1;
}

uint64_t ElapsedTicks(uint64_t start, uint64_t end, uint32_t valid_bits) {
  const uint64_t mask = TimestampMask(valid_bits);
  // Modular subtraction in 2^bits: right for end >= start and for one wrap of the counter.
  return ((end & mask) - (start & mask)) & mask;
}

absl::StatusOr<double> TicksToNanoseconds(uint64_t ticks, const DeviceTimer& timer) {
  if (timer.resolution == 0) {
    return absl::InvalidArgumentError("the device reports a timer resolution of 0");
  }
  const double t = static_cast<double>(ticks);
  const double r = static_cast<double>(timer.resolution);
  return timer.resolution_is_frequency ? t * 1e9 / r : t * r;
}

absl::StatusOr<double> SpanMilliseconds(uint64_t start, uint64_t end, const DeviceTimer& timer) {
  absl::StatusOr<double> ns = TicksToNanoseconds(ElapsedTicks(start, end, timer.valid_bits), timer);
  if (!ns.ok()) return ns.status();
  return *ns / 1e6;
}

}  // namespace kiln
