// kiln runs export --format flashinfer-trace: archived runs as flashinfer-bench Trace lines (JSONL),
// the pieces that do not need a harness (tests/unit/client/export_test.cc).
#ifndef KILN_CLIENT_EXPORT_H_
#define KILN_CLIENT_EXPORT_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kiln/v1/types.pb.h"

namespace kiln::cli {

// Whether `trace` has a verdict; traces of runs that never finished have none and are skipped.
bool HasVerdict(const v1::Trace& trace);

// The flashinfer-bench Trace line (no newline) of `trace`, one of `run`'s: TraceToJson's export
// (harness/model/trace_json.cc), with the run's backend standing in for an empty
// environment.hardware, the run's finish (else creation) time for an empty timestamp, and
// `solution_name` for the trace's solution when it is not empty.
std::string FlashinferTraceLine(const v1::Run& run, const v1::Trace& trace,
                                const std::string& solution_name = "");

// The run's Solution as a flashinfer-bench Solution document (pretty-printed), named
// `solution_name` when not empty; an empty author becomes the run's author (else principal, else
// "unknown") and empty target_hardware the run's backend, both required non-empty there.
std::string FlashinferSolutionJson(const v1::Run& run, const std::string& solution_name = "");

// --since: a date "2026-11-29" (UTC midnight), an RFC 3339 time "2026-11-29T12:00:00Z", or an age
// before `now`: "90m", "24h", "7d" (s, m, h, d).
absl::StatusOr<absl::Time> ParseSince(std::string_view text, absl::Time now);

// Names the runs' solutions in the exported dataset. flashinfer-bench's TraceSet requires
// solution names to be unique across a dataset, while kiln archives every submission under the
// name it was given: a name already used by other code (another solution_hash) is exported as
// "<name>_<first 8 hex of the hash>" (the whole hash when that too names other code).
class SolutionNames {
 public:
  // The name `run`'s traces and solution file carry; the same for every run of one code.
  std::string NameFor(const v1::Run& run);
  // Solutions (distinct codes) given a name other than their own.
  int renamed() const { return renamed_; }

 private:
  std::map<std::string, std::string> hash_of_name_;
  int renamed_ = 0;
};

// A file name for `name`: characters other than [A-Za-z0-9._-] become '_'.
std::string SafeFileName(std::string_view name);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_EXPORT_H_
