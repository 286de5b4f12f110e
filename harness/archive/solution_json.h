// How a run's Solution is kept in runs.solution_json: protobuf JSON (readable with the sqlite3
// shell) with every source's path but none of its content; contents are artifacts of kind
// "source" named by path.
#ifndef KILN_HARNESS_ARCHIVE_SOLUTION_JSON_H_
#define KILN_HARNESS_ARCHIVE_SOLUTION_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln::archive {

absl::StatusOr<std::string> SolutionToStoredJson(const v1::Solution& solution);
// The Solution with sources holding paths only. DATA_LOSS when `json` does not parse.
absl::StatusOr<v1::Solution> SolutionFromStoredJson(const std::string& json);

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_SOLUTION_JSON_H_
