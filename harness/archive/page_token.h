// Keyset pagination of run listings. The token names the last run of a page (its creation
// time and id); the next page starts strictly after it in (created_ms DESC, run_id DESC)
// order, so runs added meanwhile cause neither duplicates nor omissions.
#ifndef KILN_HARNESS_ARCHIVE_PAGE_TOKEN_H_
#define KILN_HARNESS_ARCHIVE_PAGE_TOKEN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::archive {

struct RunCursor {
  int64_t created_ms = 0;
  std::string run_id;
};

// Opaque to clients: URL-safe base64 of "r1:<created_ms>:<run_id>".
std::string EncodePageToken(const RunCursor& cursor);
// INVALID_ARGUMENT naming page_token when `token` is not one EncodePageToken wrote.
absl::StatusOr<RunCursor> DecodePageToken(absl::string_view token);

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_PAGE_TOKEN_H_
