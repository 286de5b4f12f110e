#include "harness/profile/profiling_support.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "harness/common/cuda_toolkit.h"

namespace kiln {

std::vector<std::string> ProfilerSearchDirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      dirs.emplace_back(dir);
    }
  }
  for (const std::string& root : CudaToolkitRoots()) dirs.push_back(root + "/bin");
  return dirs;
}

ProfilingSupport CheckProfiling(int cuda_devices, const std::vector<std::string>& search_dirs,
                                const std::string& driver_params) {
  ProfilingSupport out;
  for (const std::string& dir : search_dirs) {
    const std::string candidate = dir + "/ncu";
    if (::access(candidate.c_str(), X_OK) == 0) {
      out.ncu = candidate;
      break;
    }
  }
  if (cuda_devices <= 0) {
    out.reason = "no CUDA GPU on this node";
    return out;
  }
  if (out.ncu.empty()) {
    out.reason = absl::StrCat("ncu (Nsight Compute) not found in ",
                              search_dirs.empty() ? "any folder" : absl::StrJoin(search_dirs, ":"));
    return out;
  }
  std::ifstream params(driver_params);
  if (!params.good()) {
    out.reason = absl::StrCat("cannot read the NVIDIA driver's parameters (", driver_params,
                              "), so whether its performance counters are open is unknown");
    return out;
  }
  for (std::string line; std::getline(params, line);) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "RmProfilingAdminOnly:")) continue;
    int value = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &value) && value != 0) {
      out.reason =
          "the driver restricts GPU performance counters to administrators "
          "(RmProfilingAdminOnly: 1; load the nvidia module with "
          "NVreg_RestrictProfilingToAdminUsers=0 to open them)";
      return out;
    }
  }
  out.available = true;
  return out;
}

std::string DescribeProfiling(const ProfilingSupport& support) {
  return support.available ? absl::StrCat("available: ncu at ", support.ncu)
                           : absl::StrCat("unavailable: ", support.reason);
}

const std::vector<std::string>& ProfileSectionNames() {
  static const auto* names = new std::vector<std::string>{"basic", "memory", "compute", "full"};
  return *names;
}

absl::Status ValidateProfileSection(const std::string& section, const std::string& field) {
  for (const std::string& name : ProfileSectionNames()) {
    if (section == name) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": '", section, "' is not one of ",
                                                 absl::StrJoin(ProfileSectionNames(), ", ")));
}

}  // namespace kiln
