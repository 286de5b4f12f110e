// SHA-256 of bytes, as lowercase hex. Content addresses of artifacts and compile-cache keys.
#ifndef KILN_HARNESS_COMMON_SHA256_H_
#define KILN_HARNESS_COMMON_SHA256_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kiln {

std::string Sha256Hex(std::string_view bytes);

// SHA-256 of the file at `path`, read in pieces; its size in `*size` when given. Errors name the
// path (INVALID_ARGUMENT: it cannot be opened or read).
absl::StatusOr<std::string> Sha256File(const std::string& path, int64_t* size = nullptr);

// Whether `s` is a SHA-256 as kiln writes it: 64 lowercase hex digits.
bool IsSha256Hex(std::string_view s);

// Incremental form, for hashing several parts without concatenating them.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  // Feeds bytes. Parts are length-prefixed so that ("ab","c") and ("a","bc") differ.
  void AddPart(std::string_view bytes);
  // Feeds bytes as they are, no prefix: Update("ab"), Update("c") digests like Sha256Hex("abc").
  void Update(std::string_view bytes);
  std::string HexDigest();  // finalises; call once

 private:
  void* ctx_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_SHA256_H_
