#include "harness/backend/host/cpu_info.h"

#include <sys/utsname.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// First line of a small text file, trimmed; empty when unreadable.
std::string ReadFirstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

int64_t ParseCacheSize(std::string_view text_in) {
  absl::string_view text(text_in.data(), text_in.size());
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return -1;
  int64_t scale = 1;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = int64_t{1} << 10;
      break;
    case 'M':
      scale = int64_t{1} << 20;
      break;
    case 'G':
      scale = int64_t{1} << 30;
      break;
    default:
      break;
  }
  if (scale != 1) text.remove_suffix(1);
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) return -1;
  return value * scale;
}

int64_t LastLevelCacheBytes(const std::string& cache_dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(cache_dir, ec);
  if (ec) return 0;
  int best_level = -1;
  int64_t best_bytes = 0;
  for (const auto& entry : it) {
    if (!absl::StartsWith(entry.path().filename().string(), "index")) continue;
    int level = 0;
    if (!absl::SimpleAtoi(ReadFirstLine(entry.path() / "level"), &level)) continue;
    int64_t bytes = ParseCacheSize(ReadFirstLine(entry.path() / "size"));
    if (bytes <= 0) continue;
    if (level > best_level || (level == best_level && bytes > best_bytes)) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes;
}

std::string CpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name(absl::StripAsciiWhitespace(absl::string_view(line).substr(colon + 1)));
    if (!name.empty()) return name;
  }
  struct utsname u;
  if (uname(&u) == 0) return absl::StrCat("host ", u.machine);
  return "host";
}

}  // namespace kiln
