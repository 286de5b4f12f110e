// Level Zero device discovery: zeInit, the drivers, their GPUs and the properties kiln needs
// (name, timer resolution and valid bits, largest cache). For the harness (how many device
// slots to offer, or why there are none) and for LevelZeroDevice::Open.
#ifndef KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_DEVICES_H_
#define KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_DEVICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/backend/level_zero/kernel_timestamp.h"
#include "harness/backend/level_zero/ze_api.h"

namespace kiln {

struct ZeDeviceInfo {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  std::string name;
  DeviceTimer timer;
  int64_t cache_bytes = 0;     // the largest cache the device reports (its L2 / LLC); 0 if none
  uint32_t api_version = 0;    // the driver's ZE_MAKE_VERSION(major, minor)
  std::string driver_version;  // ze_driver_properties_t.driverVersion, as a number
};

// The DeviceTimer of properties the driver filled in (the meaning of timerResolution follows the
// struct version in props.stype).
DeviceTimer DeviceTimerFromProperties(const ze_device_properties_t& props);

// The struct version to ask for: DEVICE_PROPERTIES_1_2 when the driver implements API 1.2 or
// later, else the original.
ze_structure_type_t DevicePropertiesTypeFor(uint32_t api_version);

// Every GPU of every driver, in driver order. FAILED_PRECONDITION "no Level Zero device:
// <reason>" when the loader or a driver is missing or there is no GPU. `ze` null: the loader.
absl::StatusOr<std::vector<ZeDeviceInfo>> ListLevelZeroDevices(const ZeApi* ze = nullptr);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_DEVICES_H_
