// Loading the NVIDIA user-space libraries at run time (dlopen), so that kiln-worker starts and
// serves the host backend on machines without them. Libraries stay loaded for the life of the
// process: solutions link against the same copies.
#ifndef KILN_HARNESS_BACKEND_CUDA_SHARED_LIBRARY_H_
#define KILN_HARNESS_BACKEND_CUDA_SHARED_LIBRARY_H_

#include <dlfcn.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace kiln {

// dlopen(RTLD_NOW | RTLD_LOCAL) of the first candidate that loads (a bare soname goes through the
// loader's search; a path is taken as is). NOT_FOUND lists every candidate with its dlerror().
absl::StatusOr<void*> OpenSharedLibrary(const std::vector<std::string>& candidates);

// The folder of the loaded object that defines `symbol` in `handle`, or "" when unknown.
std::string LoadedLibraryDir(void* handle, const char* symbol);

// Resolves `name` in `handle` into *fn. NOT_FOUND names the symbol and the library.
template <typename F>
absl::Status ResolveSymbol(void* handle, const char* name, const std::string& library, F* fn) {
  void* address = dlsym(handle, name);
  if (address == nullptr) {
    return absl::NotFoundError(absl::StrCat(library, " has no symbol ", name));
  }
  *fn = reinterpret_cast<F>(address);
  return absl::OkStatus();
}

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_SHARED_LIBRARY_H_
