// The fleet front door's answers made from several harnesses' answers to the same request.
#ifndef KILN_CONTROLLER_FLEET_MERGE_H_
#define KILN_CONTROLLER_FLEET_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/harness.pb.h"

namespace kiln::controller {

struct HarnessHealth;  // controller/harness_pool.h

// One page of runs: newest first (created_unix_ms, then run_id, both descending: the harnesses'
// keyset order), at most `limit` (0: 50), a run listed by two harnesses once, and a
// next_page_token naming the last run given when any harness had more or the merge left some
// out (the harnesses read it as their own, so the next page continues on each).
v1::ListRunsResponse MergeRunPages(const std::vector<v1::ListRunsResponse>& pages, int limit);

// One leaderboard from the boards several harnesses gave for the same request, with one
// harness's rules over all their runs: per principal, rule latest takes its designated run (the
// newest of those, should it have designated on several harnesses), else its newest run; rule
// best its PASSED run of lowest mean latency (then the earlier run); passed_runs adds up.
// Entries ranked as a harness ranks them (harness/model/leaderboard_order.h). FAILED_PRECONDITION
// when the boards are of different modes or rules (harnesses with different default modes).
absl::StatusOr<v1::Leaderboard> MergeLeaderboards(const std::vector<v1::Leaderboard>& boards);

// What a fleet answer leaves out: each harness of `fleet` (the pool's view, in its order) that
// is not among `took` (those whose answers were merged), as "ADDRESS: STATE for N s (WHY)",
// WHY being its last error, or for a healthy one that it is still taking what it missed.
// `now_unix_ms` dates the states.
std::vector<std::string> LeftOutHarnesses(const std::vector<HarnessHealth>& fleet,
                                          const std::vector<std::string>& took,
                                          int64_t now_unix_ms);

// Every harness of `fleet`, as LeftOutHarnesses names those not in `took`, and those in it as
// "ADDRESS: STATE for N s".
std::vector<std::string> FleetHarnesses(const std::vector<HarnessHealth>& fleet,
                                        const std::vector<std::string>& took, int64_t now_unix_ms);

// The fleet's NodeInfo from its harnesses' answers, in `took`'s order (NodeInfo.fleet says how):
// queue depth, running runs and archived runs summed, devices listed with their harness,
// backends and languages any of them runs, the rest (version, defaults, toolchains, sandbox,
// profiling where none can) as the first says.
v1::NodeInfo MergeNodeInfos(const std::vector<v1::NodeInfo>& infos,
                            const std::vector<std::string>& took);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_FLEET_MERGE_H_
