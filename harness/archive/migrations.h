// The harness archive's schema: the migrations compiled into this binary
// (migrations/harness/*.sql), applied with sqlite/migrations.h.
#ifndef KILN_HARNESS_ARCHIVE_MIGRATIONS_H_
#define KILN_HARNESS_ARCHIVE_MIGRATIONS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "sqlite/migrations.h"

namespace kiln::archive {

// Ordered by version. INTERNAL when a file name does not start with a number or two files
// share one.
absl::StatusOr<std::vector<Migration>> HarnessMigrations();

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_MIGRATIONS_H_
