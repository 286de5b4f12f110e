// How the CLI shows campaigns: progress lines while one runs, the table of `campaign list`, the
// text of `campaign show`, and the JSON objects of --json.
#ifndef KILN_CLIENT_CAMPAIGN_OUTPUT_H_
#define KILN_CLIENT_CAMPAIGN_OUTPUT_H_

#include <cstdint>
#include <string>

#include "kiln/v1/controller.pb.h"
#include "report/json_output.h"

namespace kiln::cli {

inline constexpr char kDefaultController[] = "127.0.0.1:50061";

// "round 3 optimization | agent blocks | best 1.234 ms (baseline 2.345 ms) | budget left: ..."
std::string ProgressLine(const v1::CampaignEvent& event);
// "[seq] kind: message"
std::string EventLine(const v1::CampaignEvent& event);

// The object `campaign start --wait --json` prints: {"campaign_id", "status",
// "baseline_latency_ms", "best_latency_ms", "promotions", "candidates_evaluated",
// "budget_used"}.
Json WaitJson(const v1::Campaign& c);
// The whole campaign (show --json, list --json).
Json CampaignJson(const v1::Campaign& c);

// The campaign for people, with the controller's view of each harness when the campaign carries
// it (GetCampaign); durations are counted to `now_unix_ms` (0: now).
std::string CampaignText(const v1::Campaign& c, int64_t now_unix_ms = 0);
std::string CampaignTable(const v1::ListCampaignsResponse& list);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_CAMPAIGN_OUTPUT_H_
