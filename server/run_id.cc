#include "server/run_id.h"

#include <cstdint>
#include <random>

#include "absl/strings/str_format.h"

namespace kiln {

std::string NewRunId(absl::Time now) {
  static thread_local std::random_device device;
  const uint64_t ms = static_cast<uint64_t>(absl::ToUnixMillis(now)) & 0xffffffffffffULL;
  const uint32_t random = static_cast<uint32_t>(device());
  return absl::StrFormat("%012x%08x", ms, random);
}

}  // namespace kiln
