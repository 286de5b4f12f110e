// Evidence from one harness run, as the loop uses it: the verdict, per-workload latency, speedup
// and distance to the roofline floor, the first failure (for functional feedback), and kernel
// resources (registers, shared memory, spills) when the harness archived them. Kept as JSON in
// the controller's archive and shown to agents in TASK.md.
//
// Choosing a direction: exactly one optimisation direction per request, from the evidence and
// the history of directions already tried (a direction that was rejected is not proposed again
// while another applies).
#ifndef KILN_CONTROLLER_EVIDENCE_H_
#define KILN_CONTROLLER_EVIDENCE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/v1/types.pb.h"

namespace kiln::controller {

using Json = nlohmann::ordered_json;

// Summary of one run. `peak_bandwidth_gbps` > 0 adds floor_ms (bytes moved / peak bandwidth)
// per workload, using `definition` when it is complete.
Json SummarizeRun(const v1::Run& run, const v1::Definition& definition, double peak_bandwidth_gbps);

// Device seconds the run used (verify + timing).
double GpuSeconds(const v1::Run& run);

// Adds the "resources" list of a resource_usage artifact (kernels.json) to `summary`.
void AttachResources(const std::string& kernels_json, Json* summary);

// Feedback for a functional pass: the verdict, the reason, compiler diagnostics (first lines
// with file:line) and the first mismatching workload.
std::string FunctionalFeedback(const Json& summary);

struct DirectionHistory {
  std::string direction;
  std::string outcome;  // promoted | rejected | failed | duplicate
};

// The evidence of a profile run (Profile RPC) of the incumbent on the workload `axes`:
// {"run_id", "workload", "section", "kernels": [{"name", "duration_us", "direction_kind",
// "direction"}], "direction" (the longest kernel's: the one direction the profile points to),
// "table" (the text table)}, or {"error": why the solution has no profile}.
Json ProfileEvidence(const v1::Run& profile_run, const std::string& axes);

// The incumbent's slowest workload relative to the reference among those it PASSED (lowest
// speedup), or null.
const Json* SlowestWorkload(const Json& summary);

// One direction for the next optimisation request. A profile in the summary ("profile", from
// ProfileEvidence) comes first: its direction, unless tried already.
std::string ChooseDirection(const Json& incumbent_summary, const std::vector<DirectionHistory>& h);

// The evidence packet as markdown for TASK.md.
std::string EvidenceMarkdown(const Json& incumbent_summary,
                             const std::vector<DirectionHistory>& history);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_EVIDENCE_H_
