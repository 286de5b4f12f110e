#include "harness/common/sha256.h"

#include <openssl/evp.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln {

namespace {
std::string ToHex(const unsigned char* d, unsigned n) {
  static const char* kHex = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (unsigned i = 0; i < n; ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return out;
}
}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(bytes.data(), bytes.size(), d, &n, EVP_sha256(), nullptr);
  return ToHex(d, n);
}

absl::StatusOr<std::string> Sha256File(const std::string& path, int64_t* size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open"));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  int64_t total = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h.Update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
    total += in.gcount();
  }
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ": read failed"));
  if (size != nullptr) *size = total;
  return h.HexDigest();
}

bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::AddPart(std::string_view bytes) {
  uint64_t len = bytes.size();
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(len >> (8 * i));
  auto* c = static_cast<EVP_MD_CTX*>(ctx_);
  EVP_DigestUpdate(c, prefix, sizeof prefix);
  EVP_DigestUpdate(c, bytes.data(), bytes.size());
}

void Sha256::Update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::HexDigest() {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d, &n);
  return ToHex(d, n);
}

}  // namespace kiln
