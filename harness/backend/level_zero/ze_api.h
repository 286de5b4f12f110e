// The Level Zero loader, opened at run time: libze_loader.so.1 is dlopen'ed and the functions
// the backend calls are resolved into a table. kiln-worker never links it, so it starts on nodes
// without Level Zero (all of kiln's CI) and OpenDevice("level_zero") then says why there is no
// device. The loader is opened RTLD_GLOBAL: OpenCL launchers and C++ host launchers call ze*
// functions directly and bind to this same loader when the worker loads them.
//
// Tests replace the table (ZeApi is plain function pointers), which is how the backend's logic
// runs in CI without a driver.
//
//   absl::StatusOr<const ZeApi*> ze = LoadZeApi();
//   if (!ze.ok()) ...  // no loader: the backend is unavailable
//   ze_result_t r = (*ze)->Init(ZE_INIT_FLAG_GPU_ONLY);
#ifndef KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_API_H_
#define KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_API_H_

#include <level_zero/ze_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

inline constexpr char kZeLoaderSoname[] = "libze_loader.so.1";

struct ZeApi {
  decltype(&::zeInit) Init = nullptr;
  decltype(&::zeDriverGet) DriverGet = nullptr;
  decltype(&::zeDriverGetApiVersion) DriverGetApiVersion = nullptr;
  decltype(&::zeDriverGetProperties) DriverGetProperties = nullptr;
  decltype(&::zeDeviceGet) DeviceGet = nullptr;
  decltype(&::zeDeviceGetProperties) DeviceGetProperties = nullptr;
  decltype(&::zeDeviceGetCacheProperties) DeviceGetCacheProperties = nullptr;
  decltype(&::zeContextCreate) ContextCreate = nullptr;
  decltype(&::zeContextDestroy) ContextDestroy = nullptr;
  decltype(&::zeCommandListCreateImmediate) CommandListCreateImmediate = nullptr;
  decltype(&::zeCommandListDestroy) CommandListDestroy = nullptr;
  decltype(&::zeCommandListAppendBarrier) CommandListAppendBarrier = nullptr;
  decltype(&::zeCommandListAppendMemoryCopy) CommandListAppendMemoryCopy = nullptr;
  decltype(&::zeCommandListAppendMemoryFill) CommandListAppendMemoryFill = nullptr;
  decltype(&::zeCommandListAppendLaunchKernel) CommandListAppendLaunchKernel = nullptr;
  decltype(&::zeMemAllocDevice) MemAllocDevice = nullptr;
  decltype(&::zeMemFree) MemFree = nullptr;
  decltype(&::zeModuleCreate) ModuleCreate = nullptr;
  decltype(&::zeModuleDestroy) ModuleDestroy = nullptr;
  decltype(&::zeModuleBuildLogGetString) ModuleBuildLogGetString = nullptr;
  decltype(&::zeModuleBuildLogDestroy) ModuleBuildLogDestroy = nullptr;
  decltype(&::zeKernelCreate) KernelCreate = nullptr;
  decltype(&::zeKernelDestroy) KernelDestroy = nullptr;
  decltype(&::zeKernelSetGroupSize) KernelSetGroupSize = nullptr;
  decltype(&::zeKernelSetArgumentValue) KernelSetArgumentValue = nullptr;
  decltype(&::zeEventPoolCreate) EventPoolCreate = nullptr;
  decltype(&::zeEventPoolDestroy) EventPoolDestroy = nullptr;
  decltype(&::zeEventCreate) EventCreate = nullptr;
  decltype(&::zeEventDestroy) EventDestroy = nullptr;
  decltype(&::zeEventHostSynchronize) EventHostSynchronize = nullptr;
  decltype(&::zeEventHostReset) EventHostReset = nullptr;
  decltype(&::zeEventQueryKernelTimestamp) EventQueryKernelTimestamp = nullptr;
};

// Loads the loader once per process (later calls return the same table or the same error).
// NOT_FOUND "cannot load libze_loader.so.1: ..." when it is missing or lacks a function. Loading
// needs no driver; zeInit reports its absence.
absl::StatusOr<const ZeApi*> LoadZeApi();

// "ZE_RESULT_ERROR_DEVICE_LOST (0x70000001)"
std::string ZeResultName(ze_result_t result);

// OK for ZE_RESULT_SUCCESS; else "<call>: <ZeResultName>", RESOURCE_EXHAUSTED for out of memory
// and INTERNAL otherwise (the worker reports it as a RUNTIME_ERROR).
absl::Status ZeCallStatus(ze_result_t result, absl::string_view call);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_LEVEL_ZERO_ZE_API_H_
