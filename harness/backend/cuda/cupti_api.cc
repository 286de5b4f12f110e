#include "harness/backend/cuda/cupti_api.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/backend/cuda/shared_library.h"
#include "harness/common/cuda_toolkit.h"

namespace kiln {
namespace {

std::vector<std::string> CuptiCandidates(const std::string& cudart_dir) {
  const std::string soname = absl::StrCat("libcupti.so.", CUDART_VERSION / 1000);
  std::vector<std::string> candidates = {soname, "libcupti.so"};
  if (!cudart_dir.empty()) {
    candidates.push_back(absl::StrCat(cudart_dir, "/", soname));
    candidates.push_back(absl::StrCat(cudart_dir, "/../extras/CUPTI/lib64/", soname));
  }
  for (const std::string& root : CudaToolkitRoots()) {
    candidates.push_back(absl::StrCat(root, "/extras/CUPTI/lib64/", soname));
  }
  return candidates;
}

absl::Status ResolveAll(CuptiApi* api) {
  absl::Status s;
  auto resolve = [&](const char* name, auto* fn) {
    if (s.ok()) s = ResolveSymbol(api->handle, name, "libcupti", fn);
  };
  resolve("cuptiActivityEnable", &api->ActivityEnable);
  resolve("cuptiActivityFlushAll", &api->ActivityFlushAll);
  resolve("cuptiActivityRegisterCallbacks", &api->ActivityRegisterCallbacks);
  resolve("cuptiActivityGetNextRecord", &api->ActivityGetNextRecord);
  resolve("cuptiActivityGetNumDroppedRecords", &api->ActivityGetNumDroppedRecords);
  resolve("cuptiGetTimestamp", &api->GetTimestamp);
  resolve("cuptiGetResultString", &api->GetResultString);
  resolve("cuptiGetVersion", &api->GetVersion);
  return s;
}

absl::StatusOr<const CuptiApi*> Load(const std::string& cudart_dir) {
  absl::StatusOr<void*> handle = OpenSharedLibrary(CuptiCandidates(cudart_dir));
  if (!handle.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot load CUPTI: ", handle.status().message()));
  }
  auto* api = new CuptiApi();  // lives as long as the process, like the library
  api->handle = *handle;
  absl::Status s = ResolveAll(api);
  uint32_t version = 0;
  // CUDA 13.0 headers say 130001; a library of the same major release has the record layouts
  // kiln reads.
  constexpr uint32_t kOldestVersion = CUPTI_API_VERSION / 10000 * 10000;
  if (s.ok() && api->GetVersion(&version) == CUPTI_SUCCESS && version < kOldestVersion) {
    s = absl::NotFoundError(absl::StrCat("CUPTI API version ", version,
                                         " is older than the release kiln was built for (",
                                         kOldestVersion, ")"));
  }
  if (!s.ok()) {
    delete api;
    return absl::NotFoundError(absl::StrCat("cannot use CUPTI: ", s.message()));
  }
  return api;
}

}  // namespace

absl::StatusOr<const CuptiApi*> LoadCupti(const std::string& cudart_dir) {
  static const absl::StatusOr<const CuptiApi*>* loaded =
      new absl::StatusOr<const CuptiApi*>(Load(cudart_dir));
  return *loaded;
}

std::string CuptiResultText(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.GetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return absl::StrCat("CUPTI error ", static_cast<int>(result));
  }
  return text;
}

}  // namespace kiln
