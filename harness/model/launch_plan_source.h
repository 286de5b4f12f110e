// A launch description written out as C++: the definitions of a kiln_launch::Plan (named
// `plan_name`) and the arrays it points to, for the launcher the OpenCL toolchain generates. The
// text includes nothing; it expects launch_plan.h to have been included before it.
#ifndef KILN_HARNESS_MODEL_LAUNCH_PLAN_SOURCE_H_
#define KILN_HARNESS_MODEL_LAUNCH_PLAN_SOURCE_H_

#include <string>

#include "harness/model/launch_description.h"

namespace kiln {

std::string LaunchPlanSource(const LaunchDescription& description, const std::string& plan_name);

// `text` as a C string literal (quotes included; non-printable bytes escaped).
std::string CStringLiteral(const std::string& text);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_LAUNCH_PLAN_SOURCE_H_
