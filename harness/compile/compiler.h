// Compiles solutions with the matching toolchain, cached by content hash: SHA-256 over the
// sources (path + content), flags, toolchain name + version, target and kiln's own headers.
// After a successful build the shared object's dynamic symbol table is checked: the entry
// function must be defined and exported (else COMPILE_ERROR naming it). Safe to call from
// several threads.
#ifndef KILN_HARNESS_COMPILE_COMPILER_H_
#define KILN_HARNESS_COMPILE_COMPILER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/compile/toolchain.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

class Compiler {
 public:
  // `cache_dir` holds one folder per cache key: lib.so, compile.log. `headers_dir`: kiln's own
  // headers that solutions include (abi.h, the TVM-FFI compatibility headers); the contents of
  // every file under it are part of every key, so a kiln upgrade that changes them never reuses
  // a library built against the old ones. Empty: none.
  Compiler(std::string cache_dir, std::vector<std::unique_ptr<Toolchain>> toolchains,
           const std::string& headers_dir = {});

  // Compiles (or finds in the cache) `solution`. Unknown language -> INVALID_ARGUMENT naming
  // spec.language. Compile failures come back as ok=false with the log.
  absl::StatusOr<CompileOutput> Compile(const v1::Solution& solution, const std::string& target,
                                        const std::atomic<bool>* cancel = nullptr);

  // name -> version of each toolchain (GetNodeInfo).
  std::vector<std::pair<std::string, std::string>> Toolchains() const;

 private:
  // A cache miss: compile in a private folder under cache_dir/staging, check the entry point,
  // publish the folder as `entry_dir` (failures too, unless not deterministic).
  absl::StatusOr<CompileOutput> Build(const v1::Solution& solution, Toolchain& toolchain,
                                      const std::string& function, const std::string& entry_dir,
                                      const std::atomic<bool>* cancel);

  std::string cache_dir_;
  std::vector<std::unique_ptr<Toolchain>> toolchains_;
  std::string headers_digest_;  // SHA-256 over headers_dir's files (path + content), or ""
  std::mutex mu_;  // serialises the publish of a cache folder
};

// Dynamic symbols of an ELF shared object (read from the file; the object is never loaded).
struct ElfSymbols {
  std::vector<std::string> defined;    // global/weak, defined, default visibility functions+objects
  std::vector<std::string> undefined;  // needed from elsewhere
};
absl::StatusOr<ElfSymbols> ReadElfDynamicSymbols(const std::string& path);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_COMPILER_H_
