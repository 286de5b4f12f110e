#include "server/log_line.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kiln {

namespace {

bool NeedsQuotes(const std::string& value) {
  if (value.empty()) return true;
  for (unsigned char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

std::string Quoted(const std::string& value) {
  if (!NeedsQuotes(value)) return value;
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < ' ' || c == 0x7f) {
      out += absl::StrFormat("\\x%02x", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

void Emit(bool quiet, const std::string& event, const std::vector<LogField>& fields) {
  if (quiet) return;
  // One fwrite per line: lines from concurrent runs never interleave.
  std::string text = absl::StrCat(FormatLogLine(absl::Now(), event, fields), "\n");
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

std::string FormatLogLine(absl::Time at, const std::string& event,
                          const std::vector<LogField>& fields) {
  std::string line = absl::StrCat(
      "ts=", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", at, absl::UTCTimeZone()), " level=info");
  if (!event.empty()) absl::StrAppend(&line, " event=", Quoted(event));
  // A field without a value says nothing (reason="" on every PASSED run): it is left out.
  for (const auto& [key, value] : fields) {
    if (!value.empty()) absl::StrAppend(&line, " ", key, "=", Quoted(value));
  }
  return line;
}

void LogEvent(bool quiet, const std::string& event, const std::vector<LogField>& fields) {
  Emit(quiet, event, fields);
}

void LogLine(bool quiet, absl::string_view line) {
  Emit(quiet, "", {{"msg", std::string(line)}});
}

}  // namespace kiln
