// The harness's log: one line per event worth an operator's attention (start, admitted run,
// finished run, refused call), on stderr, unless the node is quiet. Lines are logfmt, so log
// pipelines can parse them and grep by run id:
//
//   ts=2025-05-20T10:00:00.123Z level=info event=run_finished run_id=20250520-... status=PASSED
//
// Values holding spaces, quotes, '=' or control characters are quoted and escaped.
#ifndef KILN_SERVER_LOG_LINE_H_
#define KILN_SERVER_LOG_LINE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace kiln {

using LogField = std::pair<std::string, std::string>;

// An event with its fields, e.g. LogEvent(quiet, "run_admitted", {{"run_id", id}, ...}).
void LogEvent(bool quiet, const std::string& event, const std::vector<LogField>& fields);
// A free-form message: "... level=info msg=\"<line>\"".
void LogLine(bool quiet, absl::string_view line);

// The text of one line (without the newline); `event` empty leaves out the event field, and a
// field whose value is empty is left out too.
std::string FormatLogLine(absl::Time at, const std::string& event,
                          const std::vector<LogField>& fields);

}  // namespace kiln

#endif  // KILN_SERVER_LOG_LINE_H_
