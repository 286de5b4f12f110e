#include "harness/compile/forbidden_symbols.h"

#include <algorithm>
#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/compile/vendor_library_policy.h"

namespace kiln {
namespace {

constexpr char kCheck[] = "integrity.forbidden_symbol: ";

constexpr std::array<absl::string_view, 4> kDynamicLoading = {"dlopen", "dlmopen", "dlsym",
                                                              "dlvsym"};
constexpr std::array<absl::string_view, 4> kCodePatching = {"mprotect", "pkey_mprotect", "ptrace",
                                                            "process_vm_writev"};

bool In(absl::string_view name, absl::Span<const absl::string_view> list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool Allowed(const std::vector<std::string>& allowed, absl::string_view key) {
  return std::any_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return absl::EqualsIgnoreCase(a, key); });
}

// Why `name` may not be called, or "" when it may.
std::string Offence(absl::string_view name, const std::vector<std::string>& allowed) {
  if (In(name, kDynamicLoading) && !Allowed(allowed, "dl")) return "dynamic loading";
  if (In(name, kCodePatching)) return "rewriting code or another process";
  if (absl::StartsWith(name, "kiln_") || absl::StartsWith(name, "_ZN4kiln") ||
      absl::StartsWith(name, "_ZNK4kiln")) {
    return "kiln's internals";
  }
  return "";
}

}  // namespace

absl::Status CheckForbiddenSymbols(const ElfSymbols& symbols, const std::string& definition,
                                   const std::vector<std::string>& allowed_libraries) {
  if (absl::Status s = CheckVendorLibraries(symbols, definition, allowed_libraries); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(kCheck, s.message()));
  }
  std::vector<std::string> undefined = symbols.undefined;
  std::sort(undefined.begin(), undefined.end());
  for (const std::string& symbol : undefined) {
    absl::string_view name = absl::string_view(symbol).substr(0, symbol.find('@'));
    std::string offence = Offence(name, allowed_libraries);
    if (offence.empty()) continue;
    return absl::FailedPreconditionError(absl::StrCat(kCheck, "solution uses ", name, " (",
                                                      offence, "), which definition '",
                                                      definition, "' does not allow"));
  }
  return absl::OkStatus();
}

absl::Status CheckForbiddenSymbols(const std::string& so_path, const std::string& definition,
                                   const std::vector<std::string>& allowed_libraries) {
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(so_path);
  if (!symbols.ok()) return symbols.status();
  return CheckForbiddenSymbols(*symbols, definition, allowed_libraries);
}

}  // namespace kiln
