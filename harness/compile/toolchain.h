// Compilers that turn a Solution into a loadable shared object. One implementation per
// language family (host C++ now; nvcc and clang/SPIR-V later).
#ifndef KILN_HARNESS_COMPILE_TOOLCHAIN_H_
#define KILN_HARNESS_COMPILE_TOOLCHAIN_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/compile/kernel_resources.h"
#include "harness/sandbox/sandbox.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

struct CompileOutput {
  bool ok = false;
  std::string artifact_path;  // when ok: the .so, or the Python package folder
  std::string symbol;         // exported entry function
  std::string log;            // compiler diagnostics, with file:line as the compiler wrote them
  double seconds = 0;
  bool cache_hit = false;
  std::string cache_key;
  // False when the failure says nothing about the sources (the compiler timed out or was
  // killed); such a result is not cached.
  bool deterministic = true;
  // Per-kernel resource usage, from toolchains that report it (nvcc). Derived from `log` by
  // ParsePtxasResources, which gives the same list for a cached build.
  std::vector<KernelResources> kernel_resources;
};

class Toolchain {
 public:
  virtual ~Toolchain() = default;
  virtual std::string Name() const = 0;     // "g++", "nvcc"
  virtual std::string Version() const = 0;  // first line of --version
  virtual bool Handles(const std::string& language) const = 0;
  // Flags that, with the sources, determine the output (part of the cache key).
  virtual std::vector<std::string> Flags() const = 0;
  // More of what determines the output for this solution beyond its sources and Flags(), for
  // the cache key: e.g. the definition's signature when the toolchain builds it into the
  // library. Default: nothing.
  virtual std::string CacheSalt(const v1::Solution& solution) const {
    (void)solution;
    return "";
  }
  // The artifact's name in a cache folder: a shared object ("lib.so", the default), or a folder
  // (the Python toolchain's package).
  virtual const char* ArtifactName() const { return "lib.so"; }
  // Whether the artifact is a shared object whose dynamic symbols must export the entry point.
  virtual bool ExportsEntrySymbol() const { return true; }
  // Compiles `sources` written under `work_dir` into `output_path`. A diagnostics failure is
  // ok=false with the log (not an error status); a Status error means the toolchain itself
  // could not run.
  virtual absl::StatusOr<CompileOutput> Compile(const v1::Solution& solution,
                                                const std::string& work_dir,
                                                const std::string& output_path,
                                                const std::atomic<bool>* cancel) = 0;

  // The sandbox compilers run in (null or disabled: unconfined). Set before the first Compile.
  void set_sandbox(std::shared_ptr<const Sandbox> sandbox) { sandbox_ = std::move(sandbox); }
  const Sandbox* sandbox() const { return sandbox_.get(); }

 private:
  std::shared_ptr<const Sandbox> sandbox_;
};

// The folder of kiln's TVM-FFI compatibility headers (tvm/ffi/*.h, dlpack/dlpack.h) in kiln's
// include dir. The cpp and cuda toolchains put it on the include path (-isystem) so solutions
// written against TVM-FFI compile unchanged (docs/tvm-ffi.md).
inline std::string TvmFfiCompatIncludeDir(const std::string& include_dir) {
  return include_dir + "/kiln/tvm_ffi_compat";
}

// g++ (or $CXX) -O3 -march=native -shared -fPIC -std=c++17 -I<kiln include dir>
// -isystem <TvmFfiCompatIncludeDir>.
std::unique_ptr<Toolchain> MakeHostCxxToolchain(const std::string& include_dir);
// The same, with the wall-clock limit of one compiler run (default 120 s).
std::unique_ptr<Toolchain> MakeHostCxxToolchain(const std::string& include_dir, double timeout_s);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_TOOLCHAIN_H_
