#include "harness/archive/page_token.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln::archive {

namespace {
constexpr absl::string_view kPrefix = "r1:";

absl::Status Malformed() {
  return absl::InvalidArgumentError(
      "page_token is malformed: pass the next_page_token of a previous listing unchanged");
}
}  // namespace

std::string EncodePageToken(const RunCursor& cursor) {
  return absl::WebSafeBase64Escape(absl::StrCat(kPrefix, cursor.created_ms, ":", cursor.run_id));
}

absl::StatusOr<RunCursor> DecodePageToken(absl::string_view token) {
  std::string plain;
  if (!absl::WebSafeBase64Unescape(token, &plain) || !absl::StartsWith(plain, kPrefix)) {
    return Malformed();
  }
  absl::string_view rest = absl::string_view(plain).substr(kPrefix.size());
  size_t colon = rest.find(':');
  RunCursor cursor;
  if (colon == absl::string_view::npos || colon == 0 || colon + 1 >= rest.size() ||
      !absl::SimpleAtoi(rest.substr(0, colon), &cursor.created_ms)) {
    return Malformed();
  }
  cursor.run_id = std::string(rest.substr(colon + 1));
  return cursor;
}

}  // namespace kiln::archive
