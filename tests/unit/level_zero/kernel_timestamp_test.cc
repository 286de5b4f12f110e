#include "harness/backend/level_zero/kernel_timestamp.h"

#include <catch2/catch.hpp>

#include "harness/backend/level_zero/ze_devices.h"

namespace kiln {
namespace {

TEST_CASE("timestamps are masked to the device's valid bits") {
  CHECK(TimestampMask(32) == 0xffffffffull);
  CHECK(TimestampMask(36) == 0xfffffffffull);
  CHECK(TimestampMask(64) == ~0ull);
  CHECK(TimestampMask(0) == ~0ull);
  // High bits beyond the valid ones are garbage and must not count.
  CHECK(ElapsedTicks(0xabcd000000000010ull, 0x1234000000000030ull, 32) == 0x20);
}

TEST_CASE("elapsed ticks survive one wraparound of the timestamp counter") {
  CHECK(ElapsedTicks(100, 250, 32) == 150);
  CHECK(ElapsedTicks(0xfffffff0ull, 0x10ull, 32) == 0x20);
  CHECK(ElapsedTicks(0xfffffffffull - 4, 5, 36) == 10);
  CHECK(ElapsedTicks(~0ull - 1, 3, 64) == 5);
  CHECK(ElapsedTicks(7, 7, 32) == 0);
}

TEST_CASE("timer resolution is a frequency for properties 1.2 and a period before") {
  DeviceTimer frequency{19'200'000, true, 32};  // 19.2 MHz
  absl::StatusOr<double> ns = TicksToNanoseconds(192, frequency);
  REQUIRE(ns.ok());
  CHECK(*ns == Approx(10'000.0));
  DeviceTimer period{52, false, 32};  // 52 ns per tick
  ns = TicksToNanoseconds(192, period);
  REQUIRE(ns.ok());
  CHECK(*ns == Approx(9'984.0));
  CHECK_FALSE(TicksToNanoseconds(1, DeviceTimer{0, true, 32}).ok());
  absl::StatusOr<double> ms = SpanMilliseconds(0xffffff00ull, 0x00004a00ull, frequency);
  REQUIRE(ms.ok());
  CHECK(*ms == Approx((0x4a00 + 0x100) * 1e3 / 19'200'000.0));
}

TEST_CASE("the properties struct version decides what timerResolution means") {
  ze_device_properties_t props{};
  props.stype = DevicePropertiesTypeFor(ZE_MAKE_VERSION(1, 3));
  CHECK(props.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2);
  props.timerResolution = 12'500'000;
  props.kernelTimestampValidBits = 36;
  DeviceTimer timer = DeviceTimerFromProperties(props);
  CHECK(timer.resolution_is_frequency);
  CHECK(timer.valid_bits == 36);
  props.stype = DevicePropertiesTypeFor(ZE_MAKE_VERSION(1, 1));
  CHECK(props.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
  props.timerResolution = 80;
  timer = DeviceTimerFromProperties(props);
  CHECK_FALSE(timer.resolution_is_frequency);
  CHECK(*TicksToNanoseconds(10, timer) == Approx(800.0));
}

}  // namespace
}  // namespace kiln
