#include "harness/compile/vendor_library_policy.h"

#include <algorithm>
#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// cublasLt before cublas: the longer prefix decides.
constexpr std::array<VendorLibrary, 3> kVendorLibraries = {{
    {"cublaslt", "cuBLASLt", "-lcublasLt"},
    {"cublas", "cuBLAS", "-lcublas"},
    {"cudnn", "cuDNN", "-lcudnn"},
}};

}  // namespace

const VendorLibrary* VendorLibraryOfSymbol(absl::string_view symbol) {
  for (const VendorLibrary& library : kVendorLibraries) {
    if (absl::StartsWithIgnoreCase(symbol, library.key)) return &library;
  }
  return nullptr;
}

const VendorLibrary* VendorLibraryByKey(absl::string_view key) {
  for (const VendorLibrary& library : kVendorLibraries) {
    if (absl::EqualsIgnoreCase(key, library.key)) return &library;
  }
  return nullptr;
}

absl::Status CheckVendorLibraries(const ElfSymbols& symbols, const std::string& definition,
                                  const std::vector<std::string>& allowed) {
  std::vector<std::string> undefined = symbols.undefined;
  std::sort(undefined.begin(), undefined.end());
  for (const std::string& symbol : undefined) {
    // A versioned reference ("cublasCreate_v2@libcublas.so.13") is judged by its name.
    absl::string_view name = absl::string_view(symbol).substr(0, symbol.find('@'));
    const VendorLibrary* library = VendorLibraryOfSymbol(name);
    if (library == nullptr) continue;
    bool ok = std::any_of(allowed.begin(), allowed.end(), [&](const std::string& key) {
      return absl::EqualsIgnoreCase(key, library->key);
    });
    if (!ok) {
      return absl::FailedPreconditionError(
          absl::StrCat("solution uses ", name, " from ", library->display_name,
                       ", which definition '", definition, "' does not allow"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckVendorLibraries(const std::string& so_path, const std::string& definition,
                                  const std::vector<std::string>& allowed) {
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(so_path);
  if (!symbols.ok()) return symbols.status();
  return CheckVendorLibraries(*symbols, definition, allowed);
}

}  // namespace kiln
