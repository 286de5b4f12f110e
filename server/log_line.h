// The harness's log: one line per event worth an operator's attention (start, admitted run,
// finished run), on stderr with a UTC timestamp, unless the node is quiet.
#ifndef KILN_SERVER_LOG_LINE_H_
#define KILN_SERVER_LOG_LINE_H_

#include "absl/strings/string_view.h"

namespace kiln {

void LogLine(bool quiet, absl::string_view line);

}  // namespace kiln

#endif  // KILN_SERVER_LOG_LINE_H_
