#include "server/log_line.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kiln {

void LogLine(bool quiet, absl::string_view line) {
  if (quiet) return;
  // One fwrite per line: lines from concurrent runs never interleave.
  std::string text =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   " kiln-harness: ", line, "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace kiln
