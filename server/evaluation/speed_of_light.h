// The speed-of-light floor of a workload (integrity.faster_than_memory): the bytes the workload
// must move (every output written once, every fully read input read once; see
// integrity::CountsTowardFloor) over the node's measured peak bandwidth, with headroom. A
// candidate whose latency is below it did not do the work inside the timed window: it replayed
// an answer, or returned before its work ran.
//
// The peak is measured once per device by a kiln-worker (harness/worker/peak_bandwidth.h), on
// the device slot the first time it evaluates, and kept in <data dir>/peak_bandwidth.json.
#ifndef KILN_SERVER_EVALUATION_SPEED_OF_LIGHT_H_
#define KILN_SERVER_EVALUATION_SPEED_OF_LIGHT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// A kernel that reads only (most do) can beat the copy the peak is measured with, and the
// measurement has its own error: the floor divides by this many times the measured peak.
inline constexpr double kPeakHeadroom = 1.5;

// Bytes a workload must move at least. Errors name the tensor whose shape does not resolve.
absl::StatusOr<int64_t> BytesMoved(const v1::Definition& def, const v1::Workload& workload);

// {bytes, peak, floor_ms = bytes / (kPeakHeadroom * peak)}.
v1::SpeedOfLight FloorOf(int64_t bytes, double peak_gbps);

// Peak bandwidths by device, in memory and in a JSON file ({"cuda|NVIDIA H200": 4312.5, ...}).
class PeakBandwidthCache {
 public:
  explicit PeakBandwidthCache(std::string path) : path_(std::move(path)) {}

  // The peak of `device_key` (backend|device name): remembered or read from the file, else
  // measure()d once and stored. 0 when the measurement failed (no floor is applied then; a
  // later call measures again).
  double Get(const std::string& device_key, const std::function<absl::StatusOr<double>()>& measure);

 private:
  void LoadLocked();
  std::string path_;
  std::mutex mu_;
  bool loaded_ = false;
  std::map<std::string, double> peaks_;  // guarded by mu_
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_SPEED_OF_LIGHT_H_
