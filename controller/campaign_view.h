// A campaign as clients see it (kiln.v1.Campaign), assembled from its archive row, loop state
// and the archive's counts; and the budget usage the loop checks before each request.
#ifndef KILN_CONTROLLER_CAMPAIGN_VIEW_H_
#define KILN_CONTROLLER_CAMPAIGN_VIEW_H_

#include "absl/status/statusor.h"
#include "controller/campaign_archive.h"
#include "controller/spec/campaign_spec.h"
#include "kiln/v1/controller.pb.h"

namespace kiln::controller {

// Recounted from the archive: candidates evaluated (the baseline excluded), agent cost, device
// seconds of every evaluation (confirmations included), rounds, and wall-clock since creation.
absl::StatusOr<v1::BudgetUsage> ComputeUsage(CampaignArchive& archive, const CampaignRow& row);

absl::StatusOr<v1::Campaign> BuildCampaign(CampaignArchive& archive, const CampaignRow& row);

v1::Budget BudgetOf(const BudgetSpec& b);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_CAMPAIGN_VIEW_H_
