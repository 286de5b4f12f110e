#include "harness/backend/cuda/cuda_runtime_api.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/backend/cuda/shared_library.h"
#include "harness/common/cuda_toolkit.h"

namespace kiln {
namespace {

std::vector<std::string> RuntimeCandidates() {
  const std::string soname = CudaRuntimeSoname();
  std::vector<std::string> candidates = {soname};
  for (const std::string& root : CudaToolkitRoots()) {
    candidates.push_back(absl::StrCat(root, "/lib64/", soname));
  }
  return candidates;
}

absl::Status ResolveAll(CudaRuntimeApi* rt, const std::string& lib) {
  void* h = rt->handle;
  absl::Status s;
  auto resolve = [&](const char* name, auto* fn) {
    if (s.ok()) s = ResolveSymbol(h, name, lib, fn);
  };
  resolve("cudaGetDeviceCount", &rt->GetDeviceCount);
  resolve("cudaSetDevice", &rt->SetDevice);
  resolve("cudaGetDeviceProperties", &rt->GetDeviceProperties);
  resolve("cudaDeviceGetAttribute", &rt->DeviceGetAttribute);
  resolve("cudaDeviceGetPCIBusId", &rt->DeviceGetPCIBusId);
  resolve("cudaDriverGetVersion", &rt->DriverGetVersion);
  resolve("cudaRuntimeGetVersion", &rt->RuntimeGetVersion);
  resolve("cudaGetErrorString", &rt->GetErrorString);
  resolve("cudaGetErrorName", &rt->GetErrorName);
  resolve("cudaGetLastError", &rt->GetLastError);
  resolve("cudaDeviceSynchronize", &rt->DeviceSynchronize);
  resolve("cudaDeviceGetLimit", &rt->DeviceGetLimit);
  resolve("cudaDeviceSetLimit", &rt->DeviceSetLimit);
  resolve("cudaCtxResetPersistingL2Cache", &rt->CtxResetPersistingL2Cache);
  resolve("cudaStreamCreateWithFlags", &rt->StreamCreateWithFlags);
  resolve("cudaStreamDestroy", &rt->StreamDestroy);
  resolve("cudaStreamSynchronize", &rt->StreamSynchronize);
  resolve("cudaStreamSetAttribute", &rt->StreamSetAttribute);
  resolve("cudaMalloc", &rt->Malloc);
  resolve("cudaFree", &rt->Free);
  resolve("cudaHostAlloc", &rt->HostAlloc);
  resolve("cudaFreeHost", &rt->FreeHost);
  resolve("cudaMemcpyAsync", &rt->MemcpyAsync);
  resolve("cudaMemsetAsync", &rt->MemsetAsync);
  resolve("cudaEventCreate", &rt->EventCreate);
  resolve("cudaEventRecord", &rt->EventRecord);
  resolve("cudaEventSynchronize", &rt->EventSynchronize);
  resolve("cudaEventElapsedTime", &rt->EventElapsedTime);
  resolve("cudaEventDestroy", &rt->EventDestroy);
  resolve("cudaGetDriverEntryPointByVersion", &rt->GetDriverEntryPointByVersion);
  resolve("cudaLibraryLoadData", &rt->LibraryLoadData);
  resolve("cudaLibraryGetKernel", &rt->LibraryGetKernel);
  resolve("cudaLaunchKernel", &rt->LaunchKernel);
  resolve("cudaProfilerStart", &rt->ProfilerStart);
  resolve("cudaProfilerStop", &rt->ProfilerStop);
  return s;
}

absl::StatusOr<const CudaRuntimeApi*> Load() {
  const std::string soname = CudaRuntimeSoname();
  absl::StatusOr<void*> handle = OpenSharedLibrary(RuntimeCandidates());
  if (!handle.ok()) {
    return absl::NotFoundError(
        absl::StrCat("cannot load ", soname, ": ", handle.status().message()));
  }
  auto* rt = new CudaRuntimeApi();  // lives as long as the process, like the library
  rt->handle = *handle;
  rt->cudart_dir = LoadedLibraryDir(rt->handle, "cudaGetDeviceCount");
  if (absl::Status s = ResolveAll(rt, soname); !s.ok()) {
    delete rt;
    return absl::NotFoundError(absl::StrCat("cannot load ", soname, ": ", s.message()));
  }
  return rt;
}

}  // namespace

std::string CudaRuntimeSoname() { return absl::StrCat("libcudart.so.", CUDART_VERSION / 1000); }

absl::StatusOr<const CudaRuntimeApi*> LoadCudaRuntime() {
  static const absl::StatusOr<const CudaRuntimeApi*>* loaded =
      new absl::StatusOr<const CudaRuntimeApi*>(Load());
  return *loaded;
}

std::string CudaErrorText(const CudaRuntimeApi& rt, cudaError_t err) {
  const char* text = rt.GetErrorString(err);
  const char* name = rt.GetErrorName(err);
  return absl::StrCat(text != nullptr ? text : "unknown CUDA error", " (",
                      name != nullptr ? name : absl::StrCat("error ", static_cast<int>(err)), ")");
}

absl::Status CudaCallStatus(const CudaRuntimeApi& rt, cudaError_t err, absl::string_view call) {
  if (err == cudaSuccess) return absl::OkStatus();
  std::string message = absl::StrCat(call, ": ", CudaErrorText(rt, err));
  if (err == cudaErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace kiln
