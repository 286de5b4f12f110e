// Whether this node can take Nsight Compute profiles, and why not: a CUDA GPU, `ncu`, and GPU
// performance counters open to the (unprivileged) user kiln runs candidates as.
#ifndef KILN_HARNESS_PROFILE_PROFILING_SUPPORT_H_
#define KILN_HARNESS_PROFILE_PROFILING_SUPPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kiln {

struct ProfilingSupport {
  bool available = false;
  std::string ncu;     // the ncu found ("" when none)
  std::string reason;  // why profiling is unavailable ("" when it is available)
};

// `cuda_devices`: how many CUDA devices the node drives. `search_dirs`: where to look for ncu,
// in order (ProfilerSearchDirs()). `driver_params`: the NVIDIA driver's parameters file, whose
// `RmProfilingAdminOnly: 1` restricts the counters to administrators.
ProfilingSupport CheckProfiling(int cuda_devices, const std::vector<std::string>& search_dirs,
                                const std::string& driver_params = "/proc/driver/nvidia/params");

// $PATH's folders, then each CUDA toolkit root's bin/ (CudaToolkitRoots()).
std::vector<std::string> ProfilerSearchDirs();

// "available: ncu at PATH" or "unavailable: REASON".
std::string DescribeProfiling(const ProfilingSupport& support);

// What a profile collects (`kiln profile --section`, ProfileRequest.section, a campaign's
// `profile:`): basic | memory | compute | full.
const std::vector<std::string>& ProfileSectionNames();
// INVALID_ARGUMENT "FIELD: 'x' is not one of basic, memory, compute, full".
absl::Status ValidateProfileSection(const std::string& section, const std::string& field);

}  // namespace kiln

#endif  // KILN_HARNESS_PROFILE_PROFILING_SUPPORT_H_
