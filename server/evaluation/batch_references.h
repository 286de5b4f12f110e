// The reference outputs one batch's runs share (EvaluateBatch): its runs draw every workload's
// inputs from the batch's one secret seed, so the reference's outputs are computed once per
// workload, by the first run that needs them, and read by the others. Candidates never see
// them (they lie in the reference worker's folder); the folders go when the last run of the
// batch lets go of this.
#ifndef KILN_SERVER_EVALUATION_BATCH_REFERENCES_H_
#define KILN_SERVER_EVALUATION_BATCH_REFERENCES_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/evaluation/role_run.h"

namespace kiln {

class BatchReferences {
 public:
  BatchReferences() = default;
  ~BatchReferences();
  BatchReferences(const BatchReferences&) = delete;
  BatchReferences& operator=(const BatchReferences&) = delete;

  // Held while a workload's reference is looked up or computed, so that two runs of the batch
  // on two devices compute it once.
  std::mutex& mu() { return mu_; }
  // The reference of workload `index`, when a run of the batch computed it (mu() held).
  std::optional<RoleRun> Find(int index) const;
  // Keeps `ref` for the batch's other runs; `folder` (its outputs) is removed with the batch
  // (mu() held).
  void Keep(int index, const RoleRun& ref, const std::string& folder);

 private:
  std::mutex mu_;
  std::map<int, RoleRun> refs_;
  std::vector<std::string> folders_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_BATCH_REFERENCES_H_
