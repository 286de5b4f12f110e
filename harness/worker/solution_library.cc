#include "harness/worker/solution_library.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace kiln {

absl::StatusOr<SolutionLibrary> LoadSolution(const std::string& path, const std::string& symbol) {
  if (path.empty()) return absl::InvalidArgumentError("request.artifact_path is empty");
  if (symbol.empty()) return absl::InvalidArgumentError("request.symbol is empty");
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load solution library ", path, ": ", why ? why : "unknown error"));
  }
  dlerror();
  void* fn = dlsym(handle, symbol.c_str());
  const char* why = dlerror();
  if (fn == nullptr || why != nullptr) {
    return absl::NotFoundError(absl::StrCat("entry point symbol '", symbol, "' not found in ", path,
                                            ": ", why ? why : "symbol is NULL"));
  }
  SolutionLibrary lib;
  lib.handle = handle;
  lib.entry = reinterpret_cast<kiln_entry>(fn);
  return lib;
}

}  // namespace kiln
