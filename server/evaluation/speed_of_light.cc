#include "server/evaluation/speed_of_light.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/model/dtype.h"
#include "harness/model/validate.h"
#include "harness/verify/integrity_policy.h"

namespace kiln {

absl::StatusOr<int64_t> BytesMoved(const v1::Definition& def, const v1::Workload& workload) {
  int64_t bytes = 0;
  auto add = [&](const v1::TensorSpec& spec) -> absl::Status {
    absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, spec, workload);
    if (!shape.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", spec.name(), "': ", shape.status().message()));
    }
    bytes += DTypeStorageBytes(spec.dtype(), NumElements(*shape));
    return absl::OkStatus();
  };
  for (const v1::TensorSpec& in : def.inputs()) {
    bool present = false;
    for (const v1::WorkloadInput& w : workload.inputs()) present |= w.name() == in.name();
    if (!present || !integrity::CountsTowardFloor(def, in)) continue;
    if (absl::Status s = add(in); !s.ok()) return s;
  }
  for (const v1::TensorSpec& out : def.outputs()) {
    if (out.scalar()) continue;
    if (absl::Status s = add(out); !s.ok()) return s;
  }
  return bytes;
}

v1::SpeedOfLight FloorOf(int64_t bytes, double peak_gbps) {
  v1::SpeedOfLight sol;
  sol.set_bytes(bytes);
  sol.set_peak_gbps(peak_gbps);
  if (peak_gbps > 0) {
    sol.set_floor_ms(static_cast<double>(bytes) / (kPeakHeadroom * peak_gbps * 1e9) * 1e3);
  }
  return sol;
}

void PeakBandwidthCache::LoadLocked() {
  if (loaded_) return;
  loaded_ = true;
  absl::StatusOr<std::string> text = ReadFile(path_);
  if (!text.ok()) return;
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return;
  for (const auto& [key, value] : doc.items()) {
    if (value.is_number() && value.get<double>() > 0) peaks_[key] = value.get<double>();
  }
}

double PeakBandwidthCache::Get(const std::string& device_key,
                               const std::function<absl::StatusOr<double>()>& measure) {
  std::lock_guard<std::mutex> lock(mu_);
  LoadLocked();
  if (auto it = peaks_.find(device_key); it != peaks_.end()) return it->second;
  absl::StatusOr<double> measured = measure();
  if (!measured.ok() || *measured <= 0) return 0;
  peaks_[device_key] = *measured;
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [key, value] : peaks_) doc[key] = value;
  (void)WriteFile(path_, doc.dump(2) + "\n", /*durable=*/true);  // best effort: else re-measured
  return *measured;
}

}  // namespace kiln
