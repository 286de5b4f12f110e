#include "server/evaluation/reference_timing_cache.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "harness/common/sha256.h"
#include "harness/model/json_interop.h"

namespace kiln {

namespace {
constexpr char kSettingPrefix[] = "reference_timing/";
}  // namespace

std::string ReferenceTimingCache::Key(const std::string& reference_cache_key,
                                      const v1::Workload& workload, const std::string& mode,
                                      const std::string& backend, const std::string& device) {
  Sha256 hash;
  hash.AddPart(reference_cache_key);
  // The whole workload (uuid, axes and inputs): scalar input values change the work too.
  hash.AddPart(WorkloadToJson(workload));
  hash.AddPart(mode);
  hash.AddPart(backend);
  hash.AddPart(device);
  return hash.HexDigest();
}

std::optional<v1::TimingResult> ReferenceTimingCache::Find(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memory_.find(key);
    if (it != memory_.end()) return it->second;
  }
  auto stored = archive_->GetSetting(absl::StrCat(kSettingPrefix, key));
  if (!stored.ok() || !stored->has_value()) return std::nullopt;
  std::string bytes;
  v1::TimingResult timing;
  if (!absl::Base64Unescape(**stored, &bytes) || !timing.ParseFromString(bytes)) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  memory_[key] = timing;
  return timing;
}

void ReferenceTimingCache::Store(const std::string& key, const v1::TimingResult& timing) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    memory_[key] = timing;
  }
  (void)archive_->PutSetting(absl::StrCat(kSettingPrefix, key),
                             absl::Base64Escape(timing.SerializeAsString()));
}

}  // namespace kiln
