// The tokens file of kiln-harness (--tokens FILE): one principal a line,
//
//   # NAME      ROLE      SHA256HEX (of the bearer token)
//   team-red    team      9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//
// separated by whitespace; ROLE is team, agent or operator; `#` starts a comment. Only hashes are
// stored, so the file reveals no token. Names are [A-Za-z0-9._-], at most 64 characters.
#ifndef KILN_ACCESS_TOKEN_FILE_H_
#define KILN_ACCESS_TOKEN_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "access/principal.h"

namespace kiln {

struct TokenEntry {
  Principal principal;
  std::string sha256_hex;  // lowercase
};

// Whether `name` may name a principal: [A-Za-z0-9._-], 1 to 64 characters.
bool ValidPrincipalName(const std::string& name);

// Parses the text of a tokens file. Errors are INVALID_ARGUMENT "PATH:LINE: what is wrong" (a
// bad role, a malformed hash, a name or hash given twice, ...). `path` only names the file.
absl::StatusOr<std::vector<TokenEntry>> ParseTokenFile(const std::string& text,
                                                       const std::string& path);
// Reads and parses `path`; FAILED_PRECONDITION when it cannot be read or names no principal.
absl::StatusOr<std::vector<TokenEntry>> LoadTokenFile(const std::string& path);

}  // namespace kiln

#endif  // KILN_ACCESS_TOKEN_FILE_H_
