#include "harness/backend/level_zero/ze_devices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

absl::Status NoZeDevice(absl::string_view reason) {
  return absl::FailedPreconditionError(absl::StrCat("no Level Zero device: ", reason));
}

absl::StatusOr<ZeDeviceInfo> Describe(const ZeApi& ze, ze_driver_handle_t driver,
                                      ze_device_handle_t device, uint32_t api_version) {
  ZeDeviceInfo info;
  info.driver = driver;
  info.device = device;
  info.api_version = api_version;
  ze_device_properties_t props{};
  props.stype = DevicePropertiesTypeFor(api_version);
  if (ze_result_t r = ze.DeviceGetProperties(device, &props); r != ZE_RESULT_SUCCESS) {
    return ZeCallStatus(r, "zeDeviceGetProperties");
  }
  info.name = props.name;
  info.timer = DeviceTimerFromProperties(props);
  uint32_t caches = 0;
  if (ze.DeviceGetCacheProperties(device, &caches, nullptr) == ZE_RESULT_SUCCESS && caches > 0) {
    std::vector<ze_device_cache_properties_t> cache(caches);
    for (auto& c : cache) c.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES;
    if (ze.DeviceGetCacheProperties(device, &caches, cache.data()) == ZE_RESULT_SUCCESS) {
      for (uint32_t i = 0; i < caches && i < cache.size(); ++i) {
        info.cache_bytes = std::max(info.cache_bytes, static_cast<int64_t>(cache[i].cacheSize));
      }
    }
  }
  ze_driver_properties_t driver_props{};
  driver_props.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  if (ze.DriverGetProperties(driver, &driver_props) == ZE_RESULT_SUCCESS) {
    info.driver_version = absl::StrCat(driver_props.driverVersion);
  }
  return info;
}

}  // namespace

DeviceTimer DeviceTimerFromProperties(const ze_device_properties_t& props) {
  DeviceTimer timer;
  timer.resolution = props.timerResolution;
  timer.resolution_is_frequency = props.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
  timer.valid_bits = props.kernelTimestampValidBits;
  return timer;
}

ze_structure_type_t DevicePropertiesTypeFor(uint32_t api_version) {
  return api_version >= ZE_MAKE_VERSION(1, 2) ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
                                              : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
}

absl::StatusOr<std::vector<ZeDeviceInfo>> ListLevelZeroDevices(const ZeApi* ze) {
  if (ze == nullptr) {
    absl::StatusOr<const ZeApi*> loaded = LoadZeApi();
    if (!loaded.ok()) {
      return NoZeDevice(
          absl::StrCat(loaded.status().message(), "; no Level Zero loader or driver is installed"));
    }
    ze = *loaded;
  }
  if (ze_result_t r = ze->Init(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) {
    return NoZeDevice(absl::StrCat("zeInit: ", ZeResultName(r),
                                 "; no Level Zero driver is installed or none found a GPU"));
  }
  uint32_t drivers = 0;
  if (ze_result_t r = ze->DriverGet(&drivers, nullptr); r != ZE_RESULT_SUCCESS || drivers == 0) {
    return NoZeDevice(r != ZE_RESULT_SUCCESS ? absl::StrCat("zeDriverGet: ", ZeResultName(r))
                                           : "no Level Zero driver is installed");
  }
  std::vector<ze_driver_handle_t> driver_handles(drivers);
  if (ze_result_t r = ze->DriverGet(&drivers, driver_handles.data()); r != ZE_RESULT_SUCCESS) {
    return NoZeDevice(absl::StrCat("zeDriverGet: ", ZeResultName(r)));
  }
  std::vector<ZeDeviceInfo> out;
  for (uint32_t d = 0; d < drivers; ++d) {
    ze_api_version_t version = ZE_API_VERSION_1_0;
    if (ze->DriverGetApiVersion(driver_handles[d], &version) != ZE_RESULT_SUCCESS) {
      version = ZE_API_VERSION_1_0;
    }
    uint32_t count = 0;
    if (ze->DeviceGet(driver_handles[d], &count, nullptr) != ZE_RESULT_SUCCESS) continue;
    std::vector<ze_device_handle_t> devices(count);
    if (ze->DeviceGet(driver_handles[d], &count, devices.data()) != ZE_RESULT_SUCCESS) continue;
    for (uint32_t i = 0; i < count && i < devices.size(); ++i) {
      absl::StatusOr<ZeDeviceInfo> info =
          Describe(*ze, driver_handles[d], devices[i], static_cast<uint32_t>(version));
      if (!info.ok()) return NoZeDevice(info.status().message());
      out.push_back(*std::move(info));
    }
  }
  if (out.empty()) return NoZeDevice("the Level Zero drivers report no GPU");
  return out;
}

}  // namespace kiln
