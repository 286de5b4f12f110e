// The harness's own correctness judgement of one workload: it reads the output files both
// workers wrote for every trial and compares them with the definition's tolerances. Nothing the
// candidate's worker claims is trusted: shapes and sizes come from the definition, and an output
// file must be a plain, singly linked file inside the candidate's own job folder.
#ifndef KILN_SERVER_EVALUATION_OUTPUT_COMPARISON_H_
#define KILN_SERVER_EVALUATION_OUTPUT_COMPARISON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/verify/comparator.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

struct OutputVerdict {
  // PASSED, INCORRECT_SHAPE, INCORRECT_DTYPE, INCORRECT_NUMERICAL, RUNTIME_ERROR or REJECTED.
  v1::EvaluationStatus status = v1::PASSED;
  std::string reason;             // names the output and the trial
  bool reference_failed = false;  // the reference's outputs were unusable (status RUNTIME_ERROR)
  bool compared = false;          // at least one output pair was compared
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatched = 0;
  int64_t checked = 0;
  std::string worst_output;  // the output with the largest absolute error
  // Findings that do not fail the workload ("integrity.degenerate_definition: ...").
  std::vector<std::string> warnings;
};

// A worker's outputs and the folder they must lie in (canonical: resolved before the worker ran,
// so that a worker cannot redirect it). Relative output paths are taken against that folder.
struct WorkerOutputs {
  const v1::WorkerResult* result = nullptr;
  std::string dir;
};

class BufferPool;

// One workload's comparison, pass by pass: a trial's checked outputs as soon as the candidate's
// worker has written them (the harness judges them before the trial is timed), the rechecks
// once its request is done. Every pass and output is compared even after a numerical failure,
// so that the error figures cover what was compared; a missing or malformed output stops the
// comparison. Integrity findings:
//   integrity.unwritten_output  an output element still holds the poison (REJECTED; the reason
//                               gives the element's index)
//   integrity.output_caching    the checked outputs pass but a recheck's do not (REJECTED)
//   integrity.output_file       an output file outside the job folder, linked or not plain
//   integrity.degenerate_definition  zeros or a constant pass trial 0 (a warning only)
class OutputComparison {
 public:
  // `def`, `workload` and the reference's result must outlive the comparison.
  OutputComparison(const v1::Definition& def, const v1::Workload& workload,
                   const WorkerOutputs& reference);
  ~OutputComparison();
  OutputComparison(const OutputComparison&) = delete;
  OutputComparison& operator=(const OutputComparison&) = delete;

  // Compares every output of `candidate`'s pass (trial `trial`'s checked call, or its recheck)
  // with the reference's; false once the comparison cannot go on (the verdict says why).
  bool Compare(int trial, bool recheck, const WorkerOutputs& candidate);
  const OutputVerdict& verdict() const { return verdict_; }
  // The verdict; a numerical failure's reason gets the figures over every pass compared.
  OutputVerdict Finish();

 private:
  const v1::Definition& def_;
  const v1::Workload& workload_;
  WorkerOutputs reference_;
  const Tolerances tol_;  // the definition's, for every pass
  std::unique_ptr<BufferPool> pool_;  // the candidate's buffers, reused from pass to pass
  OutputVerdict verdict_;
  int pairs_ = 0;         // output pairs compared
  bool stopped_ = false;  // a comparison could not go on
};

// Every trial's checked outputs, then every trial's recheck outputs (the same input buffers
// refilled with new values at sparse positions), as OutputComparison.
OutputVerdict CompareOutputs(const v1::Definition& def, const v1::Workload& workload, int trials,
                             const WorkerOutputs& reference, const WorkerOutputs& candidate);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_OUTPUT_COMPARISON_H_
