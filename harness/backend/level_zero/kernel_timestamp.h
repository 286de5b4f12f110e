// Level Zero kernel-timestamp arithmetic, apart from any driver so that it is tested in CI.
//
// A device counts timestamps in ticks of a timer with `kernelTimestampValidBits` meaningful low
// bits; the counter wraps at 2^bits. What `timerResolution` means depends on the version of the
// ze_device_properties_t the driver filled in: with stype ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
// it is the timer frequency in cycles per second; with the original
// ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES it is the period in nanoseconds per cycle.
#ifndef KILN_HARNESS_BACKEND_LEVEL_ZERO_KERNEL_TIMESTAMP_H_
#define KILN_HARNESS_BACKEND_LEVEL_ZERO_KERNEL_TIMESTAMP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace kiln {

struct DeviceTimer {
  uint64_t resolution = 0;               // ze_device_properties_t.timerResolution
  bool resolution_is_frequency = false;  // read with stype ..._PROPERTIES_1_2
  uint32_t valid_bits = 64;              // ze_device_properties_t.kernelTimestampValidBits

  std::string Describe() const;  // "timer 19200000 Hz, 32 valid bits"
};

// The low `valid_bits` bits set (all 64 for 0 or >= 64: a driver that reports no width).
uint64_t TimestampMask(uint32_t valid_bits);

// Ticks from `start` to `end`, both masked to `valid_bits`, across at most one wraparound of the
// counter (end below start means it wrapped).
uint64_t ElapsedTicks(uint64_t start, uint64_t end, uint32_t valid_bits);

// Ticks -> nanoseconds. INVALID_ARGUMENT for a zero resolution.
absl::StatusOr<double> TicksToNanoseconds(uint64_t ticks, const DeviceTimer& timer);

// The span between two timestamps in milliseconds: ElapsedTicks then TicksToNanoseconds.
absl::StatusOr<double> SpanMilliseconds(uint64_t start, uint64_t end, const DeviceTimer& timer);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_LEVEL_ZERO_KERNEL_TIMESTAMP_H_
