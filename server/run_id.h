// Run ids: 20 lowercase hex characters, the first 12 the creation time in milliseconds since the
// Unix epoch and the last 8 random, so ids sort by creation time and never repeat in practice.
#ifndef KILN_SERVER_RUN_ID_H_
#define KILN_SERVER_RUN_ID_H_

#include <string>

#include "absl/time/time.h"

namespace kiln {

std::string NewRunId(absl::Time now);

}  // namespace kiln

#endif  // KILN_SERVER_RUN_ID_H_
