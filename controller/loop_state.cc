#include "controller/loop_state.h"

namespace kiln::controller {

std::string StateToJson(const LoopState& s) {
  Json j;
  j["round"] = s.round;
  j["pass"] = s.pass;
  j["agent_index"] = s.agent_index;
  j["plateau"] = s.plateau;
  j["consecutive_failures"] = s.consecutive_failures;
  j["consecutive_duplicates"] = s.consecutive_duplicates;
  j["functional_attempts"] = s.functional_attempts;
  j["duplicates"] = s.duplicates;
  j["failures"] = s.failures;
  j["promotions"] = s.promotions;
  j["baseline_done"] = s.baseline_done;
  j["have_correct"] = s.have_correct;
  j["baseline_latency_ms"] = s.baseline_latency_ms;
  j["incumbent_hash"] = s.incumbent_hash;
  j["incumbent_solution_json"] = s.incumbent_solution_json;
  j["incumbent_params"] = s.incumbent_params;
  j["incumbent_agent"] = s.incumbent_agent;
  j["incumbent_latency_ms"] = s.incumbent_latency_ms;
  j["incumbent_noise"] = s.incumbent_noise;
  j["incumbent_summary"] = s.incumbent_summary;
  j["last_failure"] = s.last_failure;
  Json history = Json::array();
  for (const DirectionHistory& h : s.history) {
    history.push_back({{"direction", h.direction}, {"outcome", h.outcome}});
  }
  j["history"] = history;
  j["open_request"] = s.open_request;
  j["open_direction"] = s.open_direction;
  return j.dump();
}

LoopState StateFromJson(const std::string& json) {
  LoopState s;
  Json j = Json::parse(json, nullptr, false);
  if (!j.is_object()) return s;
  s.round = j.value("round", 0);
  s.pass = j.value("pass", std::string("functional"));
  s.agent_index = j.value("agent_index", 0);
  s.plateau = j.value("plateau", 0);
  s.consecutive_failures = j.value("consecutive_failures", 0);
  s.consecutive_duplicates = j.value("consecutive_duplicates", 0);
  s.functional_attempts = j.value("functional_attempts", 0);
  s.duplicates = j.value("duplicates", 0);
  s.failures = j.value("failures", 0);
  s.promotions = j.value("promotions", 0);
  s.baseline_done = j.value("baseline_done", false);
  s.have_correct = j.value("have_correct", false);
  s.baseline_latency_ms = j.value("baseline_latency_ms", 0.0);
  s.incumbent_hash = j.value("incumbent_hash", std::string());
  s.incumbent_solution_json = j.value("incumbent_solution_json", std::string());
  s.incumbent_params = j.value("incumbent_params", std::string("{}"));
  s.incumbent_agent = j.value("incumbent_agent", std::string());
  s.incumbent_latency_ms = j.value("incumbent_latency_ms", 0.0);
  s.incumbent_noise = j.value("incumbent_noise", 0.0);
  s.incumbent_summary = j.value("incumbent_summary", Json::object());
  s.last_failure = j.value("last_failure", Json::object());
  if (!s.incumbent_summary.is_object()) s.incumbent_summary = Json::object();
  if (!s.last_failure.is_object()) s.last_failure = Json::object();
  for (const auto& h : j.value("history", Json::array())) {
    s.history.push_back({h.value("direction", ""), h.value("outcome", "")});
  }
  s.open_request = j.value("open_request", int64_t{0});
  s.open_direction = j.value("open_direction", std::string());
  return s;
}

}  // namespace kiln::controller
