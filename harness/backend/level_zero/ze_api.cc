#include "harness/backend/level_zero/ze_api.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {
namespace {

template <typename F>
absl::Status Resolve(void* handle, const char* name, F* fn) {
  void* address = dlsym(handle, name);
  if (address == nullptr) {
    return absl::NotFoundError(absl::StrCat(kZeLoaderSoname, " has no symbol ", name));
  }
  *fn = reinterpret_cast<F>(address);
  return absl::OkStatus();
}

absl::Status ResolveAll(void* h, ZeApi* ze) {
  absl::Status s;
  auto resolve = [&](const char* name, auto* fn) {
    if (s.ok()) s = Resolve(h, name, fn);
  };
  resolve("zeInit", &ze->Init);
  resolve("zeDriverGet", &ze->DriverGet);
  resolve("zeDriverGetApiVersion", &ze->DriverGetApiVersion);
  resolve("zeDriverGetProperties", &ze->DriverGetProperties);
  resolve("zeDeviceGet", &ze->DeviceGet);
  resolve("zeDeviceGetProperties", &ze->DeviceGetProperties);
  resolve("zeDeviceGetCacheProperties", &ze->DeviceGetCacheProperties);
  resolve("zeContextCreate", &ze->ContextCreate);
  resolve("zeContextDestroy", &ze->ContextDestroy);
  resolve("zeCommandListCreateImmediate", &ze->CommandListCreateImmediate);
  resolve("zeCommandListDestroy", &ze->CommandListDestroy);
  resolve("zeCommandListAppendBarrier", &ze->CommandListAppendBarrier);
  resolve("zeCommandListAppendMemoryCopy", &ze->CommandListAppendMemoryCopy);
  resolve("zeCommandListAppendMemoryFill", &ze->CommandListAppendMemoryFill);
  resolve("zeCommandListAppendLaunchKernel", &ze->CommandListAppendLaunchKernel);
  resolve("zeMemAllocDevice", &ze->MemAllocDevice);
  resolve("zeMemFree", &ze->MemFree);
  resolve("zeModuleCreate", &ze->ModuleCreate);
  resolve("zeModuleDestroy", &ze->ModuleDestroy);
  resolve("zeModuleBuildLogGetString", &ze->ModuleBuildLogGetString);
  resolve("zeModuleBuildLogDestroy", &ze->ModuleBuildLogDestroy);
  resolve("zeKernelCreate", &ze->KernelCreate);
  resolve("zeKernelDestroy", &ze->KernelDestroy);
  resolve("zeKernelSetGroupSize", &ze->KernelSetGroupSize);
  resolve("zeKernelSetArgumentValue", &ze->KernelSetArgumentValue);
  resolve("zeEventPoolCreate", &ze->EventPoolCreate);
  resolve("zeEventPoolDestroy", &ze->EventPoolDestroy);
  resolve("zeEventCreate", &ze->EventCreate);
  resolve("zeEventDestroy", &ze->EventDestroy);
  resolve("zeEventHostSynchronize", &ze->EventHostSynchronize);
  resolve("zeEventHostReset", &ze->EventHostReset);
  resolve("zeEventQueryKernelTimestamp", &ze->EventQueryKernelTimestamp);
  return s;
}

absl::StatusOr<const ZeApi*> Load() {
  dlerror();
  void* handle = dlopen(kZeLoaderSoname, RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::NotFoundError(absl::StrCat("cannot load ", kZeLoaderSoname, ": ",
                                            why != nullptr ? why : "unknown error"));
  }
  auto* ze = new ZeApi();  // lives as long as the process, like the library
  if (absl::Status s = ResolveAll(handle, ze); !s.ok()) {
    delete ze;
    return absl::NotFoundError(absl::StrCat("cannot load ", kZeLoaderSoname, ": ", s.message()));
  }
  return ze;
}

}  // namespace

absl::StatusOr<const ZeApi*> LoadZeApi() {
  static const absl::StatusOr<const ZeApi*>* loaded = new absl::StatusOr<const ZeApi*>(Load());
  return *loaded;
}

std::string ZeResultName(ze_result_t result) {
  const char* name = nullptr;
  switch (result) {
    case ZE_RESULT_SUCCESS:
      name = "ZE_RESULT_SUCCESS";
      break;
    case ZE_RESULT_NOT_READY:
      name = "ZE_RESULT_NOT_READY";
      break;
    case ZE_RESULT_ERROR_DEVICE_LOST:
      name = "ZE_RESULT_ERROR_DEVICE_LOST";
      break;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
      name = "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY";
      break;
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
      name = "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY";
      break;
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
      name = "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE";
      break;
    case ZE_RESULT_ERROR_UNINITIALIZED:
      name = "ZE_RESULT_ERROR_UNINITIALIZED";
      break;
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
      name = "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE";
      break;
    case ZE_RESULT_ERROR_INVALID_ARGUMENT:
      name = "ZE_RESULT_ERROR_INVALID_ARGUMENT";
      break;
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
      name = "ZE_RESULT_ERROR_INVALID_KERNEL_NAME";
      break;
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
      name = "ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION";
      break;
    case ZE_RESULT_ERROR_UNKNOWN:
      name = "ZE_RESULT_ERROR_UNKNOWN";
      break;
    default:
      break;
  }
  return absl::StrFormat("%s (0x%x)", name != nullptr ? name : "ze_result_t",
                         static_cast<unsigned>(result));
}

absl::Status ZeCallStatus(ze_result_t result, absl::string_view call) {
  if (result == ZE_RESULT_SUCCESS) return absl::OkStatus();
  std::string message = absl::StrCat(call, ": ", ZeResultName(result));
  if (result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ||
      result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

}  // namespace kiln
