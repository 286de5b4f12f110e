// Which NVIDIA vendor libraries a compiled solution may call. A candidate that hands its work to
// cuBLAS, cuBLASLt or cuDNN is not the kernel being evaluated, so such calls are refused unless
// the definition allows the library. The check reads the undefined dynamic symbols of the
// compiled object (it is never loaded) and runs after every compile, cached builds included:
// the allowance belongs to the definition, not to the build.
//
//   absl::Status s = CheckVendorLibraries(output.artifact_path, definition.name(), {"cublas"});
//   if (!s.ok()) ... REJECTED with s.message()
#ifndef KILN_HARNESS_COMPILE_VENDOR_LIBRARY_POLICY_H_
#define KILN_HARNESS_COMPILE_VENDOR_LIBRARY_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "harness/compile/compiler.h"

namespace kiln {

struct VendorLibrary {
  absl::string_view key;           // what an allowance or spec.dependencies names: "cublas"
  absl::string_view display_name;  // "cuBLAS"
  absl::string_view link_flag;     // "-lcublas"
};

// The vendor library `symbol` belongs to (by prefix: cublasLt*, cublas*, cudnn*), or nullptr.
const VendorLibrary* VendorLibraryOfSymbol(absl::string_view symbol);
// The vendor library a key names, case-insensitively ("cuBLAS", "cublas"), or nullptr.
const VendorLibrary* VendorLibraryByKey(absl::string_view key);

// OK when every undefined symbol of a vendor library belongs to a library in `allowed` (keys,
// case-insensitive). Otherwise FAILED_PRECONDITION naming the first offending symbol in sorted
// order: "solution uses cublasGemmEx from cuBLAS, which definition 'gemm' does not allow".
absl::Status CheckVendorLibraries(const ElfSymbols& symbols, const std::string& definition,
                                  const std::vector<std::string>& allowed);
// The same for a compiled shared object; an unreadable object is the error of
// ReadElfDynamicSymbols.
absl::Status CheckVendorLibraries(const std::string& so_path, const std::string& definition,
                                  const std::vector<std::string>& allowed);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_VENDOR_LIBRARY_POLICY_H_
