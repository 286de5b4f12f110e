// integrity.forbidden_symbol: what a compiled solution may not call, read from the undefined
// dynamic symbols of the object (which is never loaded for this). Beyond the vendor libraries
// (vendor_library_policy.h):
//   - dynamic loading (dlopen, dlmopen, dlsym, dlvsym): the way to reach a library the link did
//     not name (libcublas behind the policy's back) or the harness's own code; allowed only by
//     the definition tag kiln:allow-library:dl;
//   - kiln's internals (kiln_*, kiln::*): nothing of the harness is a solution's to call; the
//     reference runs in another process, so there is no reference to call back into;
//   - rewriting code or other processes (mprotect, pkey_mprotect, ptrace, process_vm_writev):
//     how a solution would patch the worker's checks; never allowed.
// Calls made through a pointer found at run time (a hand-rolled ELF walk) are beyond this check;
// the checks of the worker and the harness judge what such a solution computes.
#ifndef KILN_HARNESS_COMPILE_FORBIDDEN_SYMBOLS_H_
#define KILN_HARNESS_COMPILE_FORBIDDEN_SYMBOLS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "harness/compile/compiler.h"

namespace kiln {

// OK, or FAILED_PRECONDITION "integrity.forbidden_symbol: solution uses dlsym (dynamic loading),
// which definition 'd' does not allow" naming the first offending symbol in sorted order.
// `allowed_libraries` are the definition's kiln:allow-library:<key> keys.
absl::Status CheckForbiddenSymbols(const ElfSymbols& symbols, const std::string& definition,
                                   const std::vector<std::string>& allowed_libraries);
absl::Status CheckForbiddenSymbols(const std::string& so_path, const std::string& definition,
                                   const std::vector<std::string>& allowed_libraries);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_FORBIDDEN_SYMBOLS_H_
