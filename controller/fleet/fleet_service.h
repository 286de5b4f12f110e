// kiln.v1.Harness on the controller's port: the fleet's front door. Teams, agents and the CLI
// speak to one address; the controller sends each call to the harnesses of its pool
// (HarnessPool) and answers for the whole fleet. The harness stays the per-node service with
// its own archive; the controller keeps only an index of which harness holds which run.
//
//   Evaluate, Profile   to the healthy harness serving the request's backend and its solution's
//                       language with the shortest queue; a harness lost mid-run (call broken, run interrupted, harness
//                       gone) costs an attempt: the run is evaluated again on another harness,
//                       and the caller's stream goes on and says so (Evaluate: 3 attempts;
//                       Profile: 1). Every run admitted is recorded in the index.
//   EvaluateBatch       one harness for the whole batch, one attempt (a confirmation goes to the
//                       harness that holds the runs it confirms).
//   PutDefinition, PutSolution, SetDefinitionSettings
//                       every healthy harness; once one took it, it is journaled (the pool's
//                       journal, kept in controller.db by RegistrationLog) and replayed, in
//                       order, to every harness that missed it, joins or comes back, before
//                       that harness is offered a run or a call. A refusal is the answer.
//   GetRun, GetArtifact, DesignateRun
//                       the harness the index names (clearing a designation: every healthy
//                       harness); a run the index does not have (made on a
//                       harness directly, or named by a prefix) is looked for on every healthy
//                       harness and the index learns where it is.
//   ListRuns            every healthy harness, merged newest first into one page (keyset page
//                       tokens are the harnesses' own, so the next page continues on each).
//   GetLeaderboard      every healthy harness, merged with one harness's rules over all their
//                       runs (merge.h): a team's designated run, else its latest, wherever it
//                       ran; confirmation runs are never ranked (the harnesses leave them out).
//   ListDefinitions, GetDefinition, ListSolutions, GetNodeInfo
//                       the least loaded healthy harness (they hold the same definitions).
//   PutBlob             every healthy harness, the chunks passed on as they come; an error of
//                       any harness is the answer (a run there would lack the inputs).
// A harness that is down is left out of listings and leaderboards until it answers again.
//
// Access: the caller is authenticated with the controller's tokens (the harnesses' tokens file)
// and each call goes to the harness with the caller's own authorization metadata, so runs are the
// caller's and the harness applies its roles; without one, the controller's harness token.
#ifndef KILN_CONTROLLER_FLEET_FLEET_SERVICE_H_
#define KILN_CONTROLLER_FLEET_FLEET_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include <set>
#include <string>
#include <vector>

#include "access/authenticator.h"
#include "controller/fleet/registration_log.h"
#include "controller/fleet/run_index.h"
#include "controller/harness_pool.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace kiln::controller {

class FleetService final : public v1::Harness::Service {
 public:
  // `log`: where the journal is kept across restarts (null: in memory only).
  FleetService(HarnessPool& pool, RunIndex& index, Authenticator auth = Authenticator::Open(),
               RegistrationLog* log = nullptr);

  grpc::Status Evaluate(grpc::ServerContext* context, const v1::EvaluateRequest* request,
                        grpc::ServerWriter<v1::EvaluateEvent>* writer) override;
  grpc::Status EvaluateBatch(grpc::ServerContext* context, const v1::EvaluateBatchRequest* request,
                             grpc::ServerWriter<v1::EvaluateEvent>* writer) override;
  grpc::Status Profile(grpc::ServerContext* context, const v1::ProfileRequest* request,
                       grpc::ServerWriter<v1::EvaluateEvent>* writer) override;
  grpc::Status GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                      v1::Run* response) override;
  grpc::Status ListRuns(grpc::ServerContext* context, const v1::ListRunsRequest* request,
                        v1::ListRunsResponse* response) override;
  grpc::Status GetArtifact(grpc::ServerContext* context, const v1::GetArtifactRequest* request,
                           v1::Artifact* response) override;
  grpc::Status ListDefinitions(grpc::ServerContext* context,
                               const v1::ListDefinitionsRequest* request,
                               v1::ListDefinitionsResponse* response) override;
  grpc::Status PutDefinition(grpc::ServerContext* context, const v1::PutDefinitionRequest* request,
                             v1::PutDefinitionResponse* response) override;
  grpc::Status GetNodeInfo(grpc::ServerContext* context, const v1::GetNodeInfoRequest* request,
                           v1::NodeInfo* response) override;
  grpc::Status GetLeaderboard(grpc::ServerContext* context, const v1::LeaderboardRequest* request,
                              v1::Leaderboard* response) override;
  grpc::Status DesignateRun(grpc::ServerContext* context, const v1::DesignateRunRequest* request,
                            v1::DesignateRunResponse* response) override;
  grpc::Status PutBlob(grpc::ServerContext* context, grpc::ServerReader<v1::PutBlobChunk>* reader,
                       v1::PutBlobResponse* response) override;
  grpc::Status GetDefinition(grpc::ServerContext* context, const v1::GetDefinitionRequest* request,
                             v1::DefinitionDetail* response) override;
  grpc::Status SetDefinitionSettings(grpc::ServerContext* context,
                                     const v1::SetDefinitionSettingsRequest* request,
                                     v1::DefinitionDetail* response) override;
  grpc::Status PutSolution(grpc::ServerContext* context, const v1::PutSolutionRequest* request,
                           v1::PutSolutionResponse* response) override;
  grpc::Status ListSolutions(grpc::ServerContext* context, const v1::ListSolutionsRequest* request,
                             v1::ListSolutionsResponse* response) override;

 private:
  // The caller's authorization metadata to forward ("" when it sent none), after the caller was
  // authenticated; UNAUTHENTICATED otherwise.
  absl::StatusOr<std::string> Authorize(grpc::ServerContext* context) const;
  // Streams a call's run events from the pool to `writer`, recording each admitted run, and
  // telling the caller when an attempt is given up and the run goes to another harness.
  grpc::Status StreamRuns(grpc::ServerContext* context, const std::string& authorization,
                          const std::string& definition, const std::string& backend,
                          const std::string& language,
                          const HarnessPool::OpenRunStream& open, int max_attempts,
                          grpc::ServerWriter<v1::EvaluateEvent>* writer);
  // The harness that holds `run_id`: the index's, else the first healthy harness that answers
  // GetRun for it (then recorded). NOT_FOUND when none has it.
  absl::StatusOr<std::string> HarnessOfRun(const std::string& run_id,
                                           const std::string& authorization);
  // Records where `run_id` is (errors are logged: the run goes on unindexed, found later by
  // asking every harness).
  void Index(const std::string& run_id, const std::string& harness);
  // Index, for the run an event names, the first time `indexed` sees it.
  void IndexOnce(const v1::EvaluateEvent& event, const std::string& harness,
                 std::set<std::string>* indexed);
  // A unary call to the least loaded healthy harness that answers, or to `address` when given.
  template <typename Request, typename Response, typename Method>
  grpc::Status Forward(const std::string& authorization, const std::string& address,
                       const Request& request, Response* response, Method method);
  // Which healthy harnesses must answer a call to all of them.
  enum class Reach {
    kEvery,     // every one (a listing, a solution or a setting there is no other way to get)
    kAnswered,  // one at least (the pool registers a definition again where one is missing)
  };
  // A unary call to every healthy harness at once, every answer kept (and in `took` who gave it):
  // a refusal (a bad request, a role) is the caller's answer, naming the harness; a harness that
  // did not answer makes it UNAVAILABLE as `reach` says.
  template <typename Request, typename Response, typename Method>
  grpc::Status Gather(const std::string& authorization, const Request& request, Method method,
                      Reach reach, std::vector<Response>* answers,
                      std::vector<std::string>* took = nullptr);

  // The harnesses a listing merged from those in `took` leaves out (merge.h LeftOutHarnesses).
  std::vector<std::string> LeftOut(const std::vector<std::string>& took) const;

  HarnessPool& pool_;
  RunIndex& index_;
  const Authenticator auth_;
  RegistrationLog* log_;
  // Journals `entry` (taken by the harnesses in `took`): on disk first, then in the pool.
  // INTERNAL when it cannot be stored: the harnesses took it, but one that comes back would
  // not, so the caller is told to register it again.
  grpc::Status Journal(const Registration& entry, const std::vector<std::string>& took);
  // Journal's first half: `entry` on disk (controller.db), INTERNAL as Journal says.
  grpc::Status Store(const Registration& entry);
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_FLEET_FLEET_SERVICE_H_
