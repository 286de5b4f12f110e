// One kiln-worker evaluation: load the solution, build its tensors, run the checked calls of
// every trial (fresh seeded inputs, poisoned fresh outputs, input checksums, outputs written to
// files), and, when asked, the timing protocol. Runs in the worker process; the harness judges
// the outputs.
#ifndef KILN_HARNESS_WORKER_EVALUATION_H_
#define KILN_HARNESS_WORKER_EVALUATION_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "kiln/v1/worker.pb.h"

namespace kiln {

// Called at each stage change: "inputs", "verify", "warmup", "timing", with the trial (from 0).
using StageReporter = std::function<void(std::string_view stage, int trial)>;

// Runs the request. Never fails as a function: every failure becomes the result's status
// (RUNTIME_ERROR, or REJECTED for an integrity check) and error, with the trials completed so
// far. PASSED means "ran cleanly".
v1::WorkerResult Evaluate(const v1::WorkerRequest& request, const StageReporter& report);

// The input seed of trial t: request.trial_seeds[t]; trials beyond the list (a timing protocol
// that runs more trials than seeds were sent) derive a fresh seed from the list.
uint64_t TrialSeed(const v1::WorkerRequest& request, int trial);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_EVALUATION_H_
