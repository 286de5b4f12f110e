// What the timed calls of one workload launched, as the worker reports it: the CUPTI timer's GPU
// work by kind (Device::TakeTimedWork) into TimingResult.gpu_work and TimingResult.kernels, which
// the harness reads for integrity.no_own_kernel and the own-kernel share (own_work.h).
#ifndef KILN_HARNESS_WORKER_TIMED_WORK_H_
#define KILN_HARNESS_WORKER_TIMED_WORK_H_

#include <vector>

#include "harness/backend/device.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// Adds `work` to `timing`: gpu_work longest first, and the kernels' names sorted. Both are
// bounded (a candidate may launch many kernels with long templated names): at most 128 entries,
// the work past them summed into one "(other work)" entry so that the GPU time still adds up,
// and signatures cut at 4096 characters.
void RecordTimedWork(std::vector<TimedWork> work, v1::TimingResult* timing);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_TIMED_WORK_H_
