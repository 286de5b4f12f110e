// One kiln-worker evaluation: load the solution, build its tensors, run the checked calls of
// every trial (fresh seeded inputs, poisoned fresh outputs, input checksums, outputs written to
// files), and, when asked, the timing protocol. Runs in the worker process; the harness judges
// the outputs.
#ifndef KILN_HARNESS_WORKER_EVALUATION_H_
#define KILN_HARNESS_WORKER_EVALUATION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kiln/abi.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

// Called at each stage change: "inputs", "verify", "warmup", "timing", with the trial (from 0).
using StageReporter = std::function<void(std::string_view stage, int trial)>;

// A solution supplied by the process itself instead of a library to dlopen: kiln's Python runner
// (harness/worker/python/) hands kiln a definition's `reference` run(), or a Python/Triton
// solution's entry point, this way. `entry` has the ABI's signature.
//
// A value-returning solution (flashinfer-bench's `destination_passing_style: false`, and every
// reference) keeps its outputs and leaves the output arguments alone; `collect` then copies the
// last call's outputs into the output arguments, outside any timed window, so that a timed call
// is the solution's own work only, as flashinfer-bench times it. A reference is collected after
// its checked calls only; a candidate (`collect_timed_calls`) after every call, timed ones too
// once the timer has stopped, so that the outputs of every timed call are checked.
//
// Return codes of `entry` and `collect` (an external entry only; a library's non-zero return is
// a RUNTIME_ERROR): kExternalFailed and any other non-zero code is a RUNTIME_ERROR, the others
// the status they name. `explain` says why (the runner's exception or the check that refused,
// "integrity.output_aliases_input: ..."); it is read, and cleared, once per failure.
//
// `fill_inputs` (optional) makes the inputs instead of kiln's generator: a KernelBench problem's
// inputs are what its own get_inputs() returns under torch.manual_seed(seed). It is called with
// the trial's seed after kiln's generator ran (scalars and shapes stay kiln's), must write every
// tensor input and leave the device idle; kiln then checksums the inputs as usual. A recheck
// calls it with the recheck's own seed instead of perturbing a few elements, so the recheck runs
// on a fresh input set drawn by the same code.
using kiln_fill_inputs = int (*)(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx,
                                 uint64_t seed);
struct ExternalEntry {
  kiln_entry entry = nullptr;
  kiln_entry collect = nullptr;
  kiln_fill_inputs fill_inputs = nullptr;
  bool collect_timed_calls = false;
  std::function<std::string()> explain;
};
inline constexpr int kExternalFailed = 1;
inline constexpr int kExternalRejected = 2;         // REJECTED: `explain` names the check
inline constexpr int kExternalIncorrectShape = 3;   // INCORRECT_SHAPE
inline constexpr int kExternalIncorrectDtype = 4;   // INCORRECT_DTYPE

// request.gate_trials: called with each trial's checked outputs once they are written, before
// the trial is timed (`recheck` false), and with its recheck's once they are written, before the
// next trial's inputs are made (`recheck` true); true: go on; false: stop (the result is then
// PASSED with the passes so far and no timing); an error fails the request.
using TrialGate =
    std::function<absl::StatusOr<bool>(const v1::TrialOutputs& outputs, bool recheck)>;

// Runs the request. Never fails as a function: every failure becomes the result's status
// (RUNTIME_ERROR, or REJECTED for an integrity check) and error, with the trials completed so
// far. PASSED means "ran cleanly".
// `external` (optional) replaces request.artifact_path/symbol.
// `gate` is required when request.gate_trials is set.
v1::WorkerResult Evaluate(const v1::WorkerRequest& request, const StageReporter& report,
                          const ExternalEntry* external = nullptr,
                          const TrialGate& gate = nullptr);

// The input seed of trial t: request.trial_seeds[t]; trials beyond the list (a timing protocol
// that runs more trials than seeds were sent) derive a fresh seed from the list.
uint64_t TrialSeed(const v1::WorkerRequest& request, int trial);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_EVALUATION_H_
