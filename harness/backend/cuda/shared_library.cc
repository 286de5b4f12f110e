#include "harness/backend/cuda/shared_library.h"

#include <filesystem>

#include "absl/strings/str_join.h"

namespace kiln {

absl::StatusOr<void*> OpenSharedLibrary(const std::vector<std::string>& candidates) {
  std::vector<std::string> errors;
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return handle;
    const char* why = dlerror();
    errors.push_back(why != nullptr ? std::string(why) : candidate + ": unknown error");
  }
  return absl::NotFoundError(absl::StrJoin(errors, "; "));
}

std::string LoadedLibraryDir(void* handle, const char* symbol) {
  void* address = dlsym(handle, symbol);
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace kiln
