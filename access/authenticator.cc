#include "access/authenticator.h"

#include <openssl/crypto.h>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "harness/common/sha256.h"

namespace kiln {

Authenticator Authenticator::Open() { return Authenticator(true, {}); }

Authenticator Authenticator::WithTokens(std::vector<TokenEntry> entries) {
  return Authenticator(false, std::move(entries));
}

absl::StatusOr<Principal> Authenticator::Authenticate(
    const std::optional<std::string>& authorization) const {
  if (open_) return LocalOperator();
  if (!authorization.has_value()) {
    return absl::UnauthenticatedError("missing 'authorization: Bearer TOKEN' (kiln --token)");
  }
  absl::string_view value = *authorization;
  // RFC 6750: the scheme is case-insensitive.
  if (value.size() < 7 || !absl::EqualsIgnoreCase(value.substr(0, 7), "bearer ")) {
    return absl::UnauthenticatedError("authorization: expected 'Bearer TOKEN'");
  }
  value.remove_prefix(7);
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return absl::UnauthenticatedError("authorization: empty token");
  const std::string digest = Sha256Hex(std::string_view(value.data(), value.size()));
  // Every entry is compared in full, whatever matched before it.
  const TokenEntry* found = nullptr;
  for (const TokenEntry& entry : entries_) {
    const bool same = entry.sha256_hex.size() == digest.size() &&
                      CRYPTO_memcmp(entry.sha256_hex.data(), digest.data(), digest.size()) == 0;
    if (same) found = &entry;
  }
  if (found == nullptr) return absl::UnauthenticatedError("unknown token");
  return found->principal;
}

}  // namespace kiln
