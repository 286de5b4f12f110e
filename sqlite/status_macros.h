// Early-return helpers for absl::Status / absl::StatusOr in the archive's code.
//
//   ARCHIVE_ASSIGN_OR_RETURN(Statement select, conn.Prepare("SELECT ..."));
//   ARCHIVE_RETURN_IF_ERROR(select.Run());
#ifndef KILN_SQLITE_STATUS_MACROS_H_
#define KILN_SQLITE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"

#define ARCHIVE_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status archive_status_ = (expr);           \
    if (!archive_status_.ok()) return archive_status_; \
  } while (false)

#define ARCHIVE_CONCAT_INNER(a, b) a##b
#define ARCHIVE_CONCAT(a, b) ARCHIVE_CONCAT_INNER(a, b)

#define ARCHIVE_ASSIGN_OR_RETURN(lhs, expr) \
  ARCHIVE_ASSIGN_OR_RETURN_IMPL(ARCHIVE_CONCAT(archive_status_or_, __LINE__), lhs, expr)

#define ARCHIVE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(*tmp)

#endif  // KILN_SQLITE_STATUS_MACROS_H_
