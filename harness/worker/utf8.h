// Text that crosses the worker pipe must be valid UTF-8 (proto3 string fields reject anything
// else on parse), and worker logs and error text come from untrusted code.
#ifndef KILN_HARNESS_WORKER_UTF8_H_
#define KILN_HARNESS_WORKER_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

// Length of the valid UTF-8 sequence starting at text[i], or 0 when there is none.
inline size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char c1 = byte(i + 1);
  if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogates
  if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // beyond U+10FFFF
  return n;
}

// `text` with every byte that is not part of a valid UTF-8 sequence replaced by '?'.
inline std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out.push_back('?');
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_UTF8_H_
