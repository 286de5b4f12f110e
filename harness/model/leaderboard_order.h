// The order of a leaderboard's entries, one rule for a harness's leaderboard and the fleet's
// (the controller's front door merging several harnesses' entries).
#ifndef KILN_HARNESS_MODEL_LEADERBOARD_ORDER_H_
#define KILN_HARNESS_MODEL_LEADERBOARD_ORDER_H_

#include "kiln/v1/harness.pb.h"

namespace kiln {

// Higher score first; a run with no score (no reference latency) after those with one; then
// lower mean latency (0: nothing timed, last), then the earlier run.
inline bool LeaderboardRanksBefore(const v1::LeaderboardEntry& a, const v1::LeaderboardEntry& b) {
  if (a.score() != b.score()) return a.score() > b.score();
  const bool a_timed = a.mean_latency_ms() > 0;
  const bool b_timed = b.mean_latency_ms() > 0;
  if (a_timed != b_timed) return a_timed;
  if (a.mean_latency_ms() != b.mean_latency_ms()) return a.mean_latency_ms() < b.mean_latency_ms();
  if (a.created_unix_ms() != b.created_unix_ms()) return a.created_unix_ms() < b.created_unix_ms();
  return a.run_id() < b.run_id();
}

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_LEADERBOARD_ORDER_H_
