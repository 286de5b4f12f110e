// The peak memory bandwidth of a device, the denominator of the speed-of-light floor
// (integrity.faster_than_memory). Host: the best of single-threaded and all-core memcpys of
// cache-resident (256 KiB, 4 MiB) and memory-sized (128 MiB) buffers; GPU: a 1 GiB
// device-to-device copy. Counted as bytes read + bytes written
// per second, best of several repetitions over buffers far larger than any cache.
#ifndef KILN_HARNESS_WORKER_PEAK_BANDWIDTH_H_
#define KILN_HARNESS_WORKER_PEAK_BANDWIDTH_H_

#include "absl/status/statusor.h"
#include "harness/backend/device.h"

namespace kiln {

// GB/s (1e9 bytes). Takes about a second.
absl::StatusOr<double> MeasurePeakBandwidth(Device& device);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_PEAK_BANDWIDTH_H_
