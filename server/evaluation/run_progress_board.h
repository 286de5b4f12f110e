// The last progress line of every run in flight on this node ("reference for workload 1/3:
// timing"), kept in memory for GetRun and the web console: a run's page says whose work is
// running, not only its state. Not archived: a line lives only while its run does (the archive
// keeps the state and the stage seconds).
//
//   board.Set(run_id, "reference for workload 1/3: timing");
//   std::string line = board.Get(run_id);  // "" when the run is not in flight
//   board.Clear(run_id);                   // when the run is done
#ifndef KILN_SERVER_EVALUATION_RUN_PROGRESS_BOARD_H_
#define KILN_SERVER_EVALUATION_RUN_PROGRESS_BOARD_H_

#include <map>
#include <mutex>
#include <string>

namespace kiln {

class RunProgressBoard {
 public:
  void Set(const std::string& run_id, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_[run_id] = line;
  }
  void Clear(const std::string& run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.erase(run_id);
  }
  std::string Get(const std::string& run_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = lines_.find(run_id);
    return it == lines_.end() ? std::string() : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> lines_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_RUN_PROGRESS_BOARD_H_
