// A compiled solution loaded into the worker: the shared object and its kiln_entry function.
#ifndef KILN_HARNESS_WORKER_SOLUTION_LIBRARY_H_
#define KILN_HARNESS_WORKER_SOLUTION_LIBRARY_H_

#include <string>

#include "absl/status/statusor.h"
#include "kiln/abi.h"

namespace kiln {

struct SolutionLibrary {
  void* handle = nullptr;  // from dlopen; never closed (solution threads may still run)
  kiln_entry entry = nullptr;
};

// dlopen(path, RTLD_NOW | RTLD_LOCAL) + dlsym(symbol). Loading runs the library's static
// initialisers. Errors name the path or the symbol and carry dlerror().
absl::StatusOr<SolutionLibrary> LoadSolution(const std::string& path, const std::string& symbol);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_SOLUTION_LIBRARY_H_
