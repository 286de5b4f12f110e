// One kiln-worker evaluation: load the solution, build its tensors, run the checked calls of
// every trial (fresh seeded inputs, poisoned fresh outputs, input checksums, outputs written to
// files), and, when asked, the timing protocol. Runs in the worker process; the harness judges
// the outputs.
#ifndef KILN_HARNESS_WORKER_EVALUATION_H_
#define KILN_HARNESS_WORKER_EVALUATION_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "kiln/abi.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

// Called at each stage change: "inputs", "verify", "warmup", "timing", with the trial (from 0).
using StageReporter = std::function<void(std::string_view stage, int trial)>;

// A solution supplied by the process itself instead of a library to dlopen: the Python reference
// runner hands kiln the definition's `reference` run() this way (harness/worker/python/).
// `entry` has the ABI's signature. A value-returning solution (flashinfer-bench's reference style)
// keeps its outputs and leaves the output arguments alone; `collect`, when set, then copies the
// last call's outputs into the output arguments. kiln calls it after every checked call, outside
// any timed window, so a timed call is the solution's own work only, as flashinfer-bench times a
// reference.
struct ExternalEntry {
  kiln_entry entry = nullptr;
  kiln_entry collect = nullptr;
};

// Runs the request. Never fails as a function: every failure becomes the result's status
// (RUNTIME_ERROR, or REJECTED for an integrity check) and error, with the trials completed so
// far. PASSED means "ran cleanly".
// `external` (optional) replaces request.library_path/symbol.
v1::WorkerResult Evaluate(const v1::WorkerRequest& request, const StageReporter& report,
                          const ExternalEntry* external = nullptr);

// The input seed of trial t: request.trial_seeds[t]; trials beyond the list (a timing protocol
// that runs more trials than seeds were sent) derive a fresh seed from the list.
uint64_t TrialSeed(const v1::WorkerRequest& request, int trial);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_EVALUATION_H_
