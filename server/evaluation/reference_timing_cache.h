// Timings of the reference on a workload, kept so that the reference is timed once per
// (compiled reference, workload, mode, backend, device) rather than once per run. Entries live in
// memory and in the archive's settings table, so they survive a restart.
#ifndef KILN_SERVER_EVALUATION_REFERENCE_TIMING_CACHE_H_
#define KILN_SERVER_EVALUATION_REFERENCE_TIMING_CACHE_H_

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "harness/archive/archive.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

class ReferenceTimingCache {
 public:
  explicit ReferenceTimingCache(Archive* archive) : archive_(archive) {}

  // `reference_cache_key` is the compile cache key of the reference's shared object.
  static std::string Key(const std::string& reference_cache_key, const v1::Workload& workload,
                         const std::string& mode, const std::string& backend,
                         const std::string& device);

  std::optional<v1::TimingResult> Find(const std::string& key);
  // Best effort: a failed archive write only means the reference is timed again next time.
  void Store(const std::string& key, const v1::TimingResult& timing);

 private:
  Archive* archive_;
  std::mutex mu_;
  std::unordered_map<std::string, v1::TimingResult> memory_;  // guarded by mu_
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_REFERENCE_TIMING_CACHE_H_
