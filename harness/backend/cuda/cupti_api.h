// CUPTI, loaded at run time like the CUDA runtime: libcupti.so.<major> and libcupti.so through
// the loader's search path, then beside the loaded libcudart, in its ../extras/CUPTI/lib64, and
// in extras/CUPTI/lib64 under each of CudaToolkitRoots(). Only the activity API the CUPTI timer
// uses is resolved.
#ifndef KILN_HARNESS_BACKEND_CUDA_CUPTI_API_H_
#define KILN_HARNESS_BACKEND_CUDA_CUPTI_API_H_

#include <cupti_activity.h>
#include <cupti_result.h>
#include <cupti_version.h>

#include <string>

#include "absl/status/statusor.h"

namespace kiln {

struct CuptiApi {
  void* handle = nullptr;
  decltype(&::cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&::cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
  decltype(&::cuptiGetTimestamp) GetTimestamp = nullptr;
  decltype(&::cuptiGetResultString) GetResultString = nullptr;
  decltype(&::cuptiGetVersion) GetVersion = nullptr;
};

// Loads CUPTI once per process. NOT_FOUND when no candidate loads, a function is missing, or
// the library is of an older major release than the headers kiln was built with (the activity
// record layouts could differ).
absl::StatusOr<const CuptiApi*> LoadCupti(const std::string& cudart_dir);

// "CUPTI_ERROR_NOT_INITIALIZED" style text of a result.
std::string CuptiResultText(const CuptiApi& api, CUptiResult result);

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUPTI_API_H_
