// kiln's figures of a kernel (KernelProfile) as the protocol carries them (v1.KernelProfile),
// and back: the harness sends them in Run.profile; the CLI, the web console and the controller
// render them with the same code as the harness's tests.
#ifndef KILN_HARNESS_PROFILE_PROFILE_PROTO_H_
#define KILN_HARNESS_PROFILE_PROFILE_PROTO_H_

#include "harness/profile/ncu_profile.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// With the kernel's direction (DirectionFor) filled in.
v1::KernelProfile KernelProfileToProto(const KernelProfile& kernel);
KernelProfile KernelProfileFromProto(const v1::KernelProfile& kernel);

// The target named `target` ("solution", "reference", ...) of a run's profile, or null.
const v1::ProfiledTarget* FindProfiledTarget(const v1::RunProfile& profile,
                                             const std::string& target);

// Every kernel of the run's profile that was profiled, side by side (the target as each column's
// owner when there are several targets), and a line per target that failed; "" when none.
std::string RenderRunProfile(const v1::RunProfile& profile);

}  // namespace kiln

#endif  // KILN_HARNESS_PROFILE_PROFILE_PROTO_H_
