// kiln.v1.Controller: starts campaigns (one CampaignRunner thread each), answers queries from
// the archive, streams events, cancels, exports. On start it resumes every campaign the archive
// has as "running". absl::Status becomes grpc::Status here and nowhere else.
//
// Access (kiln-controller --tokens, the harness's tokens file format and roles): every call is
// authenticated from its "authorization: Bearer TOKEN" metadata. Operators start and cancel
// campaigns and see all of them; a team or agent principal sees (gets, lists, watches, exports)
// the campaigns started for it (StartCampaignRequest.owner) and nothing else. Without a tokens
// file every caller is the operator "local" (loopback only, MakeServerCredentials).
#ifndef KILN_CONTROLLER_CONTROLLER_SERVICE_H_
#define KILN_CONTROLLER_CONTROLLER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "access/authenticator.h"
#include "controller/campaign_archive.h"
#include "controller/campaign_runner.h"
#include "controller/harness_pool.h"
#include "kiln/v1/controller.grpc.pb.h"

namespace kiln::controller {

class ControllerService final : public v1::Controller::Service {
 public:
  ControllerService(CampaignArchive& archive, HarnessPool& pool, std::string data_dir,
                    Authenticator auth = Authenticator::Open());
  ~ControllerService() override;

  // Starts a runner for every campaign the archive has as running. Returns how many.
  int ResumeAll();
  // Stops every runner (campaigns stay "running" in the archive) and joins them.
  void Shutdown();

  grpc::Status StartCampaign(grpc::ServerContext* context, const v1::StartCampaignRequest* request,
                             v1::Campaign* response) override;
  grpc::Status GetCampaign(grpc::ServerContext* context, const v1::GetCampaignRequest* request,
                           v1::Campaign* response) override;
  grpc::Status ListCampaigns(grpc::ServerContext* context, const v1::ListCampaignsRequest* request,
                             v1::ListCampaignsResponse* response) override;
  grpc::Status WatchCampaign(grpc::ServerContext* context, const v1::WatchCampaignRequest* request,
                             grpc::ServerWriter<v1::CampaignEvent>* writer) override;
  grpc::Status CancelCampaign(grpc::ServerContext* context,
                              const v1::CancelCampaignRequest* request,
                              v1::Campaign* response) override;
  grpc::Status ExportCampaign(grpc::ServerContext* context,
                              const v1::ExportCampaignRequest* request,
                              v1::ExportCampaignResponse* response) override;

 private:
  // The caller's principal from the call's authorization metadata; UNAUTHENTICATED otherwise.
  absl::StatusOr<Principal> Caller(grpc::ServerContext* context) const;
  absl::StatusOr<CampaignRow> Load(const std::string& id);
  // The campaign, if `caller` may see it: PERMISSION_DENIED (naming the id, never its contents)
  // for another principal's campaign unless `caller` is an operator.
  absl::StatusOr<CampaignRow> LoadFor(const Principal& caller, const std::string& id);
  void Launch(CampaignSpec spec, CampaignRow row);
  // A harness changed state: an event in every running campaign.
  void OnHarnessState(const HarnessHealth& health);
  // The pool's view of each harness, with what campaign `id` ran there.
  void AddHarnesses(const std::string& id, v1::Campaign* campaign);
  // Every round and candidate of campaign `id`.
  void AddRoundsAndCandidates(const std::string& id, v1::Campaign* campaign);
  void Notify(const std::string& id);

  CampaignArchive& archive_;
  HarnessPool& pool_;
  const Authenticator auth_;
  std::string data_dir_;
  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t generation_ = 0;  // bumped on every event, under mu_
  bool shutting_down_ = false;
  std::map<std::string, std::unique_ptr<CampaignRunner>> runners_;
  std::map<std::string, std::thread> threads_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_CONTROLLER_SERVICE_H_
