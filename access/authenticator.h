// Turns a call's "authorization: Bearer TOKEN" metadata into a Principal.
//
//   Authenticator auth = Authenticator::WithTokens(*LoadTokenFile(path));
//   absl::StatusOr<Principal> who = auth.Authenticate(header);  // UNAUTHENTICATED on failure
//
// Tokens are compared by their SHA-256 against every entry in constant time, so neither timing
// nor the error tells how close a guess was.
#ifndef KILN_ACCESS_AUTHENTICATOR_H_
#define KILN_ACCESS_AUTHENTICATOR_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "access/principal.h"
#include "access/token_file.h"

namespace kiln {

class Authenticator {
 public:
  // No tokens: every caller is LocalOperator(). Only for a harness served on loopback.
  static Authenticator Open();
  static Authenticator WithTokens(std::vector<TokenEntry> entries);

  // True when built by Open().
  bool open() const { return open_; }

  // `authorization` is the value of the call's "authorization" metadata (nullopt: absent).
  // UNAUTHENTICATED when it is absent, not "Bearer <token>", or matches no principal.
  absl::StatusOr<Principal> Authenticate(const std::optional<std::string>& authorization) const;

 private:
  Authenticator(bool open, std::vector<TokenEntry> entries)
      : open_(open), entries_(std::move(entries)) {}

  bool open_;
  std::vector<TokenEntry> entries_;
};

}  // namespace kiln

#endif  // KILN_ACCESS_AUTHENTICATOR_H_
