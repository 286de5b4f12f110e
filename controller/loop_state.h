// What a campaign's loop remembers between rounds, saved as campaigns.state_json in the same
// transaction as the rest of the campaign row. Counters that can be recounted from the archive
// (candidates evaluated, cost, GPU-seconds) are not kept here, so a kill between two writes
// cannot make them drift.
#ifndef KILN_CONTROLLER_LOOP_STATE_H_
#define KILN_CONTROLLER_LOOP_STATE_H_

#include <string>
#include <vector>

#include "controller/evidence.h"

namespace kiln::controller {

struct LoopState {
  int round = 0;
  std::string pass = "functional";  // functional | optimization
  int agent_index = 0;
  // Supervisor counters.
  int plateau = 0;                 // optimisation rounds since the last promotion
  int consecutive_failures = 0;    // candidates in a row that did not pass
  int consecutive_duplicates = 0;  // answers in a row that held only duplicates
  int functional_attempts = 0;     // functional rounds since a candidate last passed
  int duplicates = 0, failures = 0, promotions = 0;
  bool baseline_done = false;
  bool have_correct = false;  // some solution (baseline or candidate) passed everywhere
  double baseline_latency_ms = 0;
  // The incumbent; an empty hash means the definition's reference.
  std::string incumbent_hash;
  std::string incumbent_solution_json;
  std::string incumbent_params = "{}";
  std::string incumbent_agent;
  double incumbent_latency_ms = 0;
  double incumbent_noise = 0;
  Json incumbent_summary = Json::object();
  Json last_failure = Json::object();  // summary of the last failing candidate
  std::vector<DirectionHistory> history;
  int64_t open_request = 0;  // a request whose candidates are not all decided yet
  std::string open_direction;
};

std::string StateToJson(const LoopState& s);
LoopState StateFromJson(const std::string& json);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_LOOP_STATE_H_
