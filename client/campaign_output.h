// How the CLI shows campaigns: progress lines while one runs, the table of `campaign list`, the
// text of `campaign show`, and the JSON objects of --json.
#ifndef KILN_CLIENT_CAMPAIGN_OUTPUT_H_
#define KILN_CLIENT_CAMPAIGN_OUTPUT_H_

#include <string>

#include "client/json_output.h"
#include "kiln/v1/controller.pb.h"

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

std::string CampaignText(const v1::Campaign& c);
std::string CampaignTable(const v1::ListCampaignsResponse& list);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_CAMPAIGN_OUTPUT_H_
