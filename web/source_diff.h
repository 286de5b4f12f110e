// Line diffs of solution sources for the web console's run page (the Debian dtl library: the
// shortest edit script, printed as unified hunks).
#ifndef KILN_WEB_SOURCE_DIFF_H_
#define KILN_WEB_SOURCE_DIFF_H_

#include <string>

#include "kiln/v1/types.pb.h"

namespace kiln::web {

// The unified diff ("--- PATH", "+++ PATH", "@@ ... @@" hunks, lines starting with ' ', '-',
// '+') from `before` to `after`, file by file in `after`'s order, then the files `before` had
// that `after` lacks. Files that did not change are left out; "" when nothing changed.
std::string UnifiedSourceDiff(const v1::Solution& before, const v1::Solution& after);

}  // namespace kiln::web

#endif  // KILN_WEB_SOURCE_DIFF_H_
