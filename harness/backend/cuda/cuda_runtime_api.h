// The CUDA runtime, loaded at run time: libcudart.so.<major of the headers kiln was built with>
// is dlopen'ed and the handful of functions the CUDA backend calls are resolved into a table.
// kiln-worker never links libcudart or libcuda, so it starts where no driver is installed, and a
// solution built with `nvcc -cudart shared` binds to this same runtime when it is loaded.
//
//   absl::StatusOr<const CudaRuntimeApi*> rt = LoadCudaRuntime();
//   if (!rt.ok()) ...  // no usable runtime: the backend is unavailable
//   cudaError_t err = (*rt)->SetDevice(0);
#ifndef KILN_HARNESS_BACKEND_CUDA_CUDA_RUNTIME_API_H_
#define KILN_HARNESS_BACKEND_CUDA_CUDA_RUNTIME_API_H_

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

struct CudaRuntimeApi {
  void* handle = nullptr;
  std::string cudart_dir;  // folder libcudart was loaded from ("" if unknown)

  decltype(&::cudaGetDeviceCount) GetDeviceCount = nullptr;
  decltype(&::cudaSetDevice) SetDevice = nullptr;
  decltype(&::cudaGetDeviceProperties) GetDeviceProperties = nullptr;
  decltype(&::cudaDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cudaDeviceGetPCIBusId) DeviceGetPCIBusId = nullptr;
  decltype(&::cudaDriverGetVersion) DriverGetVersion = nullptr;
  decltype(&::cudaRuntimeGetVersion) RuntimeGetVersion = nullptr;
  decltype(&::cudaGetErrorString) GetErrorString = nullptr;
  decltype(&::cudaGetErrorName) GetErrorName = nullptr;
  decltype(&::cudaGetLastError) GetLastError = nullptr;
  decltype(&::cudaDeviceSynchronize) DeviceSynchronize = nullptr;
  decltype(&::cudaDeviceGetLimit) DeviceGetLimit = nullptr;
  decltype(&::cudaDeviceSetLimit) DeviceSetLimit = nullptr;
  decltype(&::cudaCtxResetPersistingL2Cache) CtxResetPersistingL2Cache = nullptr;
  decltype(&::cudaStreamCreateWithFlags) StreamCreateWithFlags = nullptr;
  decltype(&::cudaStreamDestroy) StreamDestroy = nullptr;
  decltype(&::cudaStreamSynchronize) StreamSynchronize = nullptr;
  decltype(&::cudaStreamSetAttribute) StreamSetAttribute = nullptr;
  decltype(&::cudaMalloc) Malloc = nullptr;
  decltype(&::cudaFree) Free = nullptr;
  decltype(&::cudaHostAlloc) HostAlloc = nullptr;
  decltype(&::cudaFreeHost) FreeHost = nullptr;
  decltype(&::cudaMemcpyAsync) MemcpyAsync = nullptr;
  decltype(&::cudaMemsetAsync) MemsetAsync = nullptr;
  decltype(&::cudaEventCreate) EventCreate = nullptr;
  decltype(&::cudaEventRecord) EventRecord = nullptr;
  decltype(&::cudaEventSynchronize) EventSynchronize = nullptr;
  decltype(&::cudaEventElapsedTime) EventElapsedTime = nullptr;
  decltype(&::cudaEventDestroy) EventDestroy = nullptr;
  decltype(&::cudaGetDriverEntryPointByVersion) GetDriverEntryPointByVersion = nullptr;
  decltype(&::cudaLibraryLoadData) LibraryLoadData = nullptr;
  decltype(&::cudaLibraryGetKernel) LibraryGetKernel = nullptr;
  decltype(&::cudaLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cudaProfilerStart) ProfilerStart = nullptr;
  decltype(&::cudaProfilerStop) ProfilerStop = nullptr;
};

// The soname kiln loads: "libcudart.so.13" for CUDA 13 headers.
std::string CudaRuntimeSoname();

// Loads the runtime once per process (later calls return the same table or the same error):
// the soname through the loader's search path, then lib64/ under each of CudaToolkitRoots(). NOT_FOUND "cannot load libcudart.so.13: ..." when none loads or a
// function is missing. Loading needs no driver; the first call that does reports its absence.
absl::StatusOr<const CudaRuntimeApi*> LoadCudaRuntime();

// "an illegal memory access was encountered (cudaErrorIllegalAddress)"
std::string CudaErrorText(const CudaRuntimeApi& rt, cudaError_t err);

// OK for cudaSuccess; otherwise "<call>: <CudaErrorText>", RESOURCE_EXHAUSTED for an allocation
// failure and INTERNAL for everything else (the worker reports it as a RUNTIME_ERROR).
absl::Status CudaCallStatus(const CudaRuntimeApi& rt, cudaError_t err, absl::string_view call);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUDA_RUNTIME_API_H_
