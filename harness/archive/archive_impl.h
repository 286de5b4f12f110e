// Archive's private state, shared by the files that implement its parts (archive.cc,
// archive_runs.cc, archive_run_reads.cc, archive_definitions.cc, archive_definition_settings.cc,
// archive_solutions.cc).
#ifndef KILN_HARNESS_ARCHIVE_ARCHIVE_IMPL_H_
#define KILN_HARNESS_ARCHIVE_ARCHIVE_IMPL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "harness/archive/archive.h"
#include "harness/archive/reader_pool.h"
#include "sqlite/sqlite_connection.h"

namespace kiln {

struct Archive::Impl {
  Impl(std::string path, std::unique_ptr<archive::Connection> writer_conn, int version);

  // Runs `body` on the writer connection inside one BEGIN IMMEDIATE transaction and commits
  // before returning, so a change reported as done survives a crash. Errors are prefixed with
  // `what` (what was being done) unless they already name their subject.
  [[nodiscard]] absl::Status Write(absl::string_view what,
                                   absl::FunctionRef<absl::Status(archive::Connection&)> body);
  // Runs `body` on a pooled read-only connection inside one read transaction (one snapshot).
  [[nodiscard]] absl::Status Read(absl::string_view what,
                                  absl::FunctionRef<absl::Status(archive::Connection&)> body);

  const std::string db_path;
  const int schema_version;
  absl::Mutex write_mu;
  std::unique_ptr<archive::Connection> writer ABSL_GUARDED_BY(write_mu);
  archive::ReaderPool readers;
};

namespace archive {
int64_t NowUnixMs();
// The seven definition_settings columns (atol, rtol, required_matched_ratio, warmup, iterations,
// trials, min_own_kernel_share) of the current row from column `first` on; NULL columns stay unset.
v1::DefinitionSettings DefinitionSettingsColumns(const Statement& s, int first);
}  // namespace archive

}  // namespace kiln

#endif  // KILN_HARNESS_ARCHIVE_ARCHIVE_IMPL_H_
