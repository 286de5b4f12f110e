#include "access/token_file.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/common/files.h"

namespace kiln {

namespace {

constexpr size_t kMaxNameLength = 64;

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

bool IsHexDigest(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::StatusOr<TokenEntry> ParseLine(const std::vector<std::string>& fields) {
  if (fields.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected NAME ROLE SHA256HEX, found ", fields.size(), " field(s)"));
  }
  TokenEntry entry;
  entry.principal.name = fields[0];
  if (!ValidPrincipalName(entry.principal.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("name '", fields[0], "': use 1 to 64 of A-Z a-z 0-9 . _ -"));
  }
  if (entry.principal.name == kHarnessPrincipal) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name '", fields[0], "' is reserved for the runs kiln-harness starts itself"));
  }
  absl::StatusOr<Role> role = ParseRole(fields[1]);
  if (!role.ok()) return role.status();
  entry.principal.role = *role;
  if (!IsHexDigest(fields[2])) {
    return absl::InvalidArgumentError(
        "SHA256HEX: expected the 64 hex digits of the token's SHA-256 (sha256sum)");
  }
  entry.sha256_hex = absl::AsciiStrToLower(fields[2]);
  return entry;
}

}  // namespace

bool ValidPrincipalName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(const std::string& text,
                                                       const std::string& path) {
  std::vector<TokenEntry> entries;
  std::set<std::string> names;
  std::set<std::string> hashes;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::string where = absl::StrCat(path, ":", line_number, ": ");
    line = line.substr(0, line.find('#'));
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    absl::StatusOr<TokenEntry> entry = ParseLine(fields);
    if (!entry.ok())
      return absl::InvalidArgumentError(absl::StrCat(where, entry.status().message()));
    if (!names.insert(entry->principal.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "name '", entry->principal.name, "' given twice"));
    }
    // One token must identify one principal.
    if (!hashes.insert(entry->sha256_hex).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "the same token hash is given to two principals"));
    }
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("tokens file ", path, ": ", text.status().message()));
  }
  absl::StatusOr<std::vector<TokenEntry>> entries = ParseTokenFile(*text, path);
  if (!entries.ok()) return entries.status();
  if (entries->empty()) {
    return absl::FailedPreconditionError(absl::StrCat("tokens file ", path, ": no principals"));
  }
  return entries;
}

}  // namespace kiln
