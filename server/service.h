// kiln.v1.Harness over the gRPC callback API. Admission, the archive and the scheduler do the
// work; this file turns requests into their calls and their absl::Status into grpc::Status (the
// only place that conversion happens).
#ifndef KILN_SERVER_SERVICE_H_
#define KILN_SERVER_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <set>
#include <string>

#include "absl/status/status.h"
#include "access/authenticator.h"
#include "access/call_metadata.h"
#include "access/principal_quota.h"
#include "kiln/v1/harness.grpc.pb.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/scheduler.h"
#include "server/metrics.h"
#include "server/node_context.h"
#include "server/node_info.h"

namespace kiln {

class EvaluateReactor;

struct ServiceContext {
  const NodeContext* node = nullptr;  // archive, compiler, settings
  Scheduler* scheduler = nullptr;
  AdmissionPolicy admission;
  NodeFacts facts;
  std::set<std::string> builtin_definitions;  // PutDefinition refuses to replace these
  const Authenticator* auth = nullptr;        // null: every caller is LocalOperator()
  PrincipalQuota* quota = nullptr;            // null: no per-principal limits
  Metrics* metrics = NullMetrics();
  bool check_references = true;  // see HarnessOptions::check_references
  int max_profiles_per_hour = 30;  // per principal (--max-profiles-per-hour); 0: no limit
};

// Finishes a unary call with `status` (converted with ToGrpcStatus).
grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx, const absl::Status& status);

class HarnessService final : public v1::Harness::CallbackService {
 public:
  explicit HarnessService(ServiceContext context) : context_(std::move(context)) {}

  grpc::ServerWriteReactor<v1::EvaluateEvent>* Evaluate(
      grpc::CallbackServerContext* ctx, const v1::EvaluateRequest* request) override;
  grpc::ServerWriteReactor<v1::EvaluateEvent>* EvaluateBatch(
      grpc::CallbackServerContext* ctx, const v1::EvaluateBatchRequest* request) override;
  grpc::ServerWriteReactor<v1::EvaluateEvent>* Profile(
      grpc::CallbackServerContext* ctx, const v1::ProfileRequest* request) override;
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext* ctx,
                                   const v1::GetRunRequest* request, v1::Run* response) override;
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext* ctx,
                                     const v1::ListRunsRequest* request,
                                     v1::ListRunsResponse* response) override;
  grpc::ServerUnaryReactor* GetArtifact(grpc::CallbackServerContext* ctx,
                                        const v1::GetArtifactRequest* request,
                                        v1::Artifact* response) override;
  grpc::ServerUnaryReactor* ListDefinitions(grpc::CallbackServerContext* ctx,
                                            const v1::ListDefinitionsRequest* request,
                                            v1::ListDefinitionsResponse* response) override;
  grpc::ServerUnaryReactor* PutDefinition(grpc::CallbackServerContext* ctx,
                                          const v1::PutDefinitionRequest* request,
                                          v1::PutDefinitionResponse* response) override;
  grpc::ServerUnaryReactor* GetNodeInfo(grpc::CallbackServerContext* ctx,
                                        const v1::GetNodeInfoRequest* request,
                                        v1::NodeInfo* response) override;
  grpc::ServerUnaryReactor* GetLeaderboard(grpc::CallbackServerContext* ctx,
                                           const v1::LeaderboardRequest* request,
                                           v1::Leaderboard* response) override;
  grpc::ServerUnaryReactor* DesignateRun(grpc::CallbackServerContext* ctx,
                                         const v1::DesignateRunRequest* request,
                                         v1::DesignateRunResponse* response) override;
  // Operators only, like PutDefinition: blobs are shared by every workload on the node.
  grpc::ServerReadReactor<v1::PutBlobChunk>* PutBlob(grpc::CallbackServerContext* ctx,
                                                     v1::PutBlobResponse* response) override;
  // service_registry.cc: definition settings and the solution registry.
  grpc::ServerUnaryReactor* GetDefinition(grpc::CallbackServerContext* ctx,
                                          const v1::GetDefinitionRequest* request,
                                          v1::DefinitionDetail* response) override;
  // Operators only: the settings judge every team's runs.
  grpc::ServerUnaryReactor* SetDefinitionSettings(grpc::CallbackServerContext* ctx,
                                                  const v1::SetDefinitionSettingsRequest* request,
                                                  v1::DefinitionDetail* response) override;
  // Operators only: registered solutions are every team's baselines.
  grpc::ServerUnaryReactor* PutSolution(grpc::CallbackServerContext* ctx,
                                        const v1::PutSolutionRequest* request,
                                        v1::PutSolutionResponse* response) override;
  grpc::ServerUnaryReactor* ListSolutions(grpc::CallbackServerContext* ctx,
                                          const v1::ListSolutionsRequest* request,
                                          v1::ListSolutionsResponse* response) override;

 private:
  // The caller named by the call's bearer token (UNAUTHENTICATED when there is none or it is
  // unknown). Every RPC starts here.
  absl::StatusOr<Principal> Caller(grpc::CallbackServerContext* ctx) const;
  // Admission and a device-queue reservation, which the caller then owns (Release on failure).
  absl::StatusOr<AdmittedRun> AdmitAndReserve(const v1::EvaluateRequest& request);
  // Admission, quotas and the run's creation; on success the run is queued.
  // With `profile`: the run is a profile (Run.kind "profile") of its one workload.
  absl::Status StartRun(const Principal& caller, const v1::EvaluateRequest& request,
                        EvaluateReactor* reactor,
                        std::optional<ProfileOptions> profile = std::nullopt);
  // A ProfileRequest checked (the node can profile, section, workload, targets, the caller's
  // profiles per hour) and started as a run.
  absl::Status StartProfile(const Principal& caller, const v1::ProfileRequest& request,
                            EvaluateReactor* reactor);
  // Every solution of the batch admitted, reserved and within quota, or none; then the runs.
  absl::Status StartBatch(const Principal& caller, const v1::EvaluateBatchRequest& request,
                          EvaluateReactor* reactor);
  // The batch that evaluates again the solutions of request.confirm_runs (operators only, runs
  // that rank on the definition, one mode), and in `confirms` the whole id of each.
  absl::StatusOr<v1::EvaluateBatchRequest> ConfirmationBatch(
      const Principal& caller, const v1::EvaluateBatchRequest& request,
      std::vector<std::string>* confirms);

  absl::Status DoGetRun(const Principal& caller, const v1::GetRunRequest& request,
                        v1::Run* response);
  // The run `fragment` names (a whole id, its start or its random part) if the caller may see
  // it; an ambiguous fragment is INVALID_ARGUMENT naming `field` and up to 5 of the caller's
  // runs it matches.
  absl::StatusOr<v1::Run> ReadRun(const Principal& caller, const std::string& fragment,
                                  bool include_sources, const std::string& field);
  absl::Status DoListRuns(const Principal& caller, const v1::ListRunsRequest& request,
                          v1::ListRunsResponse* response);
  absl::Status DoGetArtifact(const Principal& caller, const v1::GetArtifactRequest& request,
                             v1::Artifact* response);
  // Queues a run of `def`'s native reference on `workload`, answered to no client, whose
  // reference outputs are checked for degeneracy like every run's (integrity
  // .degenerate_definition flags the definition). Returns the run id.
  absl::StatusOr<std::string> StartReferenceCheck(const Principal& caller,
                                                  const v1::Definition& def,
                                                  const v1::Workload& workload);
  absl::Status DoPutDefinition(const Principal& caller, const v1::PutDefinitionRequest& request,
                               v1::PutDefinitionResponse* response);
  absl::Status DoGetNodeInfo(v1::NodeInfo* response);
  // service_leaderboard.cc
  absl::Status DoGetLeaderboard(const Principal& caller, const v1::LeaderboardRequest& request,
                                v1::Leaderboard* response);
  absl::Status DoDesignateRun(const Principal& caller, const v1::DesignateRunRequest& request,
                              v1::DesignateRunResponse* response);
  // Why `run` cannot be ranked on its definition's leaderboard ("" when it can).
  static std::string NotRankable(const v1::Run& run);
  absl::Status DoSetDefinitionSettings(const Principal& caller,
                                       const v1::SetDefinitionSettingsRequest& request,
                                       v1::DefinitionDetail* response);
  absl::Status DoPutSolution(const Principal& caller, const v1::PutSolutionRequest& request,
                             v1::PutSolutionResponse* response);

  ServiceContext context_;
  // Held from counting a principal's profiles of the last hour to archiving the new one, so
  // that two calls at once cannot both take the last one.
  std::mutex profile_mu_;
};

}  // namespace kiln

#endif  // KILN_SERVER_SERVICE_H_
