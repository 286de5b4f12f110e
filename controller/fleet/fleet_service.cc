#include "controller/fleet/fleet_service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "access/call_metadata.h"
#include "controller/campaign_archive.h"
#include "controller/fleet/fleet_calls.h"
#include "controller/fleet/merge.h"

namespace kiln::controller {
namespace {

// Sets `cancelled` when the caller goes away, until destroyed.
class CancelWatch {
 public:
  explicit CancelWatch(grpc::ServerContext* context)
      : thread_([this, context] {
          std::unique_lock<std::mutex> lock(mu_);
          while (!done_) {
            if (context->IsCancelled()) {
              cancelled.store(true);
              return;
            }
            changed_.wait_for(lock, std::chrono::milliseconds(100));
          }
        }) {}
  ~CancelWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  std::atomic<bool> cancelled{false};

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

FleetService::FleetService(HarnessPool& pool, RunIndex& index, Authenticator auth,
                           RegistrationLog* log)
    : pool_(pool), index_(index), auth_(std::move(auth)), log_(log) {}

grpc::Status FleetService::Store(const Registration& entry) {
  if (log_ == nullptr) return grpc::Status::OK;
  if (absl::Status s = log_->Put(entry); !s.ok()) {
    return grpc::Status(grpc::StatusCode::INTERNAL,
                        absl::StrCat("kiln-controller: the harnesses took the ", entry.kind,
                                     " but the controller could not journal it (", s.message(),
                                     "); register it again"));
  }
  return grpc::Status::OK;
}

grpc::Status FleetService::Journal(const Registration& entry,
                                   const std::vector<std::string>& took) {
  if (grpc::Status s = Store(entry); !s.ok()) return s;
  pool_.Remember(entry, took);
  return grpc::Status::OK;
}

absl::StatusOr<std::string> FleetService::Authorize(grpc::ServerContext* context) const {
  const std::optional<std::string> authorization = AuthorizationMetadata(*context);
  if (!auth_.open()) {
    absl::StatusOr<Principal> caller = auth_.Authenticate(authorization);
    if (!caller.ok()) {
      std::fprintf(stderr, "kiln-controller: unauthenticated call from %s: %s\n",
                   context->peer().c_str(), std::string(caller.status().message()).c_str());
      return caller.status();
    }
  }
  return authorization.value_or("");
}

grpc::Status FleetService::StreamRuns(grpc::ServerContext* context,
                                      const std::string& authorization,
                                      const std::string& definition, const std::string& backend,
                                      const std::string& language,
                                      const HarnessPool::OpenRunStream& open, int max_attempts,
                                      grpc::ServerWriter<v1::EvaluateEvent>* writer) {
  CancelWatch watch(context);
  AttemptObserver observer;
  observer.authorization = authorization;
  std::set<std::string> indexed;  // each run once, not once per progress event
  observer.event = [this, writer, &indexed](const std::string& harness,
                                            const v1::EvaluateEvent& event) {
    // Every run of the stream (a batch's too, which the pool does not hear of) on its first event.
    IndexOnce(event, harness, &indexed);
    writer->Write(event);
  };
  observer.ended = [writer, max_attempts, attempt = 0](const AttemptEnd& end) mutable {
    ++attempt;
    if (end.outcome != "broken" && end.outcome != "interrupted" && end.outcome != "abandoned") {
      return;
    }
    v1::EvaluateEvent note;
    v1::Progress* progress = note.mutable_progress();
    progress->set_run_id(end.run_id);
    progress->set_message(
        attempt < max_attempts
            ? absl::StrCat("kiln-controller: harness ", end.harness, " lost the run (", end.outcome,
                           ": ", end.detail, "); evaluating it again on another harness")
            : absl::StrCat("kiln-controller: harness ", end.harness, " lost the run (", end.outcome,
                           ": ", end.detail, ")"));
    writer->Write(note);
  };
  absl::StatusOr<HarnessRun> run =
      pool_.RunOnPool(definition, open, backend, observer, watch.cancelled, max_attempts, language);
  if (!run.ok()) {
    if (watch.cancelled.load()) return grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled");
    return ToGrpcStatus(run.status());
  }
  return grpc::Status::OK;
}

grpc::Status FleetService::Evaluate(grpc::ServerContext* context,
                                    const v1::EvaluateRequest* request,
                                    grpc::ServerWriter<v1::EvaluateEvent>* writer) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  return StreamRuns(
      context, *authorization, request->definition(), request->backend(),
      request->solution().spec().language(),
      [request](v1::Harness::Stub& stub, grpc::ClientContext* c) {
        return stub.Evaluate(c, *request);
      },
      /*max_attempts=*/3, writer);
}

grpc::Status FleetService::Profile(grpc::ServerContext* context, const v1::ProfileRequest* request,
                                   grpc::ServerWriter<v1::EvaluateEvent>* writer) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  // Profiles are taken by Nsight Compute on CUDA harnesses.
  return StreamRuns(
      context, *authorization, request->definition(), "cuda", request->solution().spec().language(),
      [request](v1::Harness::Stub& stub, grpc::ClientContext* c) {
        return stub.Profile(c, *request);
      },
      /*max_attempts=*/1, writer);
}

grpc::Status FleetService::EvaluateBatch(grpc::ServerContext* context,
                                         const v1::EvaluateBatchRequest* request,
                                         grpc::ServerWriter<v1::EvaluateEvent>* writer) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  if (request->confirm_runs_size() > 0) {
    // A confirmation evaluates archived runs again on the harness that holds them (it has their
    // solutions): one batch per harness, in the order their first run is named, each run's
    // confirmation naming the run it confirms (Run.confirms).
    std::vector<std::string> holders;
    std::map<std::string, v1::EvaluateBatchRequest> batches;
    for (const std::string& run_id : request->confirm_runs()) {
      absl::StatusOr<std::string> holder = HarnessOfRun(run_id, *authorization);
      if (!holder.ok()) return ToGrpcStatus(holder.status());
      auto [it, fresh] = batches.try_emplace(*holder, *request);
      if (fresh) {
        it->second.clear_confirm_runs();
        holders.push_back(*holder);
      }
      it->second.add_confirm_runs(run_id);
    }
    for (const std::string& holder : holders) {
      v1::Harness::Stub* stub = pool_.StubOf(holder);
      if (stub == nullptr) return NoHarness();
      grpc::ClientContext call;
      pool_.Prepare(&call, 6 * 3600, *authorization);
      std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader =
          stub->EvaluateBatch(&call, batches[holder]);
      v1::EvaluateEvent event;
      std::set<std::string> indexed;
      while (reader->Read(&event)) {
        IndexOnce(event, holder, &indexed);
        if (context->IsCancelled()) call.TryCancel();
        writer->Write(event);
      }
      if (grpc::Status s = reader->Finish(); !s.ok()) return Named(s, holder);
    }
    return grpc::Status::OK;
  }
  // A batch stays on one harness: retried elsewhere, runs that finished would be evaluated twice.
  return StreamRuns(
      context, *authorization, request->request().definition(), request->request().backend(),
      request->solutions_size() > 0 ? request->solutions(0).spec().language() : std::string(),
      [request](v1::Harness::Stub& stub, grpc::ClientContext* c) {
        return stub.EvaluateBatch(c, *request);
      },
      /*max_attempts=*/1, writer);
}

void FleetService::Index(const std::string& run_id, const std::string& harness) {
  if (absl::Status s = index_.Record(run_id, harness); !s.ok()) {
    std::fprintf(stderr, "kiln-controller: run %s on %s not indexed: %s\n", run_id.c_str(),
                 harness.c_str(), std::string(s.message()).c_str());
  }
}

void FleetService::IndexOnce(const v1::EvaluateEvent& event, const std::string& harness,
                             std::set<std::string>* indexed) {
  const std::string& run_id =
      event.has_progress() ? event.progress().run_id() : event.run().run_id();
  if (run_id.empty() || !indexed->insert(run_id).second) return;
  Index(run_id, harness);
}

absl::StatusOr<std::string> FleetService::HarnessOfRun(const std::string& run_id,
                                                       const std::string& authorization) {
  absl::StatusOr<std::optional<std::string>> indexed = index_.HarnessOf(run_id);
  if (!indexed.ok()) return indexed.status();
  if (indexed->has_value() && pool_.StubOf(**indexed) != nullptr) return **indexed;
  for (const std::string& address : pool_.Healthy(kHealthyWaitS)) {
    grpc::ClientContext call;
    pool_.Prepare(&call, kUnaryDeadlineS, authorization);
    v1::GetRunRequest get;
    get.set_run_id(run_id);
    v1::Run run;
    grpc::Status s = pool_.StubOf(address)->GetRun(&call, get, &run);
    if (s.ok()) {
      Index(run.run_id(), address);
      return address;
    }
    if (Broken(s)) pool_.ReportBroken(address, s.error_message());
  }
  return absl::NotFoundError(
      absl::StrCat("run ", run_id, " is on no healthy harness of the fleet"));
}

template <typename Request, typename Response, typename Method>
grpc::Status FleetService::Forward(const std::string& authorization, const std::string& address,
                                   const Request& request, Response* response, Method method) {
  std::vector<std::string> candidates;
  if (address.empty()) {
    candidates = pool_.Healthy(kHealthyWaitS);
  } else {
    candidates.push_back(address);
  }
  grpc::Status last = NoHarness();
  for (const std::string& target : candidates) {
    v1::Harness::Stub* stub = pool_.StubOf(target);
    if (stub == nullptr) continue;
    grpc::ClientContext call;
    pool_.Prepare(&call, kUnaryDeadlineS, authorization);
    grpc::Status s = std::invoke(method, *stub, &call, request, response);
    if (!Broken(s)) return Named(s, target);
    // The harness, not the request: another healthy one may answer.
    pool_.ReportBroken(target, s.error_message());
    last = Named(s, target);
  }
  return last;
}

template <typename Request, typename Response, typename Method>
grpc::Status FleetService::Gather(const std::string& authorization, const Request& request,
                                  Method method, Reach reach, std::vector<Response>* answers,
                                  std::vector<std::string>* took) {
  const std::vector<std::string> targets = pool_.Healthy(kHealthyWaitS);
  if (targets.empty()) return NoHarness();
  std::vector<grpc::Status> results(targets.size());
  std::vector<Response> responses(targets.size());
  std::vector<std::thread> calls;
  for (size_t i = 0; i < targets.size(); ++i) {
    calls.emplace_back([&, i] {
      grpc::ClientContext call;
      pool_.Prepare(&call, kUnaryDeadlineS, authorization);
      results[i] = std::invoke(method, *pool_.StubOf(targets[i]), &call, request, &responses[i]);
    });
  }
  for (std::thread& t : calls) t.join();
  std::vector<std::string> missing;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (results[i].ok()) {
      answers->push_back(std::move(responses[i]));
      if (took != nullptr) took->push_back(targets[i]);
      continue;
    }
    // A refusal (a bad request, a role, a malformed page token) is the caller's answer,
    // whatever the other harnesses said.
    if (!Broken(results[i])) return Named(results[i], targets[i]);
    pool_.ReportBroken(targets[i], results[i].error_message());
    missing.push_back(targets[i]);
  }
  // An answer that leaves out a healthy harness without saying so would be wrong, unless the
  // pool makes up for it (a definition is registered again before that harness's next run).
  if (!missing.empty() && (reach == Reach::kEvery || answers->empty())) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("kiln-controller: harness ", absl::StrJoin(missing, ", "),
                                     " did not answer; ask again"));
  }
  return grpc::Status::OK;
}

std::vector<std::string> FleetService::LeftOut(const std::vector<std::string>& took) const {
  return LeftOutHarnesses(pool_.Health(), took, NowUnixMs());
}

grpc::Status FleetService::GetRun(grpc::ServerContext* context, const v1::GetRunRequest* request,
                                  v1::Run* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  absl::StatusOr<std::string> holder = HarnessOfRun(request->run_id(), *authorization);
  if (!holder.ok()) return ToGrpcStatus(holder.status());
  return Forward(*authorization, *holder, *request, response, &v1::Harness::Stub::GetRun);
}

grpc::Status FleetService::DesignateRun(grpc::ServerContext* context,
                                        const v1::DesignateRunRequest* request,
                                        v1::DesignateRunResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  if (request->clear()) {
    // The caller's designation on this definition and mode, wherever it was made.
    std::vector<v1::DesignateRunResponse> answers;
    grpc::Status s =
        Gather(*authorization, *request, &v1::Harness::Stub::DesignateRun, Reach::kEvery, &answers);
    if (!s.ok()) return s;
    *response = answers.front();
    for (const v1::DesignateRunResponse& a : answers) {
      if (!a.previous_run_id().empty()) *response = a;  // the harness that held it
    }
    return grpc::Status::OK;
  }
  absl::StatusOr<std::string> holder = HarnessOfRun(request->run_id(), *authorization);
  if (!holder.ok()) return ToGrpcStatus(holder.status());
  return Forward(*authorization, *holder, *request, response, &v1::Harness::Stub::DesignateRun);
}

grpc::Status FleetService::GetArtifact(grpc::ServerContext* context,
                                       const v1::GetArtifactRequest* request,
                                       v1::Artifact* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  // Artifacts are named by their content only: the first harness that has it.
  grpc::Status last = NoHarness();
  for (const std::string& address : pool_.Healthy(kHealthyWaitS)) {
    grpc::ClientContext call;
    pool_.Prepare(&call, kUnaryDeadlineS, *authorization);
    grpc::Status s = pool_.StubOf(address)->GetArtifact(&call, *request, response);
    if (s.ok()) return s;
    if (Broken(s)) pool_.ReportBroken(address, s.error_message());
    last = Named(s, address);
    if (s.error_code() != grpc::StatusCode::NOT_FOUND && !Broken(s)) return last;
  }
  return last;
}

grpc::Status FleetService::ListRuns(grpc::ServerContext* context,
                                    const v1::ListRunsRequest* request,
                                    v1::ListRunsResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  std::vector<v1::ListRunsResponse> pages;
  std::vector<std::string> took;
  grpc::Status s =
      Gather(*authorization, *request, &v1::Harness::Stub::ListRuns, Reach::kEvery, &pages, &took);
  if (!s.ok()) return s;
  *response = MergeRunPages(pages, request->limit());
  for (std::string& h : LeftOut(took)) response->add_left_out(std::move(h));
  return grpc::Status::OK;
}

grpc::Status FleetService::GetLeaderboard(grpc::ServerContext* context,
                                          const v1::LeaderboardRequest* request,
                                          v1::Leaderboard* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  std::vector<v1::Leaderboard> boards;
  std::vector<std::string> took;
  grpc::Status s = Gather(*authorization, *request, &v1::Harness::Stub::GetLeaderboard,
                          Reach::kEvery, &boards, &took);
  if (!s.ok()) return s;
  absl::StatusOr<v1::Leaderboard> merged = MergeLeaderboards(boards);
  if (!merged.ok()) return ToGrpcStatus(merged.status());
  *response = *std::move(merged);
  for (std::string& h : LeftOut(took)) response->add_left_out(std::move(h));
  return grpc::Status::OK;
}

grpc::Status FleetService::PutDefinition(grpc::ServerContext* context,
                                         const v1::PutDefinitionRequest* request,
                                         v1::PutDefinitionResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  // A healthy harness that missed it takes it from the pool before its next run.
  std::vector<v1::PutDefinitionResponse> answers;
  std::vector<std::string> took;
  grpc::Status s = Gather(*authorization, *request, &v1::Harness::Stub::PutDefinition,
                          Reach::kAnswered, &answers, &took);
  if (!s.ok()) return s;
  if (grpc::Status stored =
          Store({"definition", request->definition().name(), request->SerializeAsString()});
      !stored.ok()) {
    return stored;
  }
  pool_.RememberDefinition(*request, took);  // journals it in the pool too
  *response = std::move(answers.front());
  return grpc::Status::OK;
}

grpc::Status FleetService::SetDefinitionSettings(grpc::ServerContext* context,
                                                 const v1::SetDefinitionSettingsRequest* request,
                                                 v1::DefinitionDetail* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  std::vector<v1::DefinitionDetail> answers;
  std::vector<std::string> took;
  grpc::Status s = Gather(*authorization, *request, &v1::Harness::Stub::SetDefinitionSettings,
                          Reach::kAnswered, &answers, &took);
  if (!s.ok()) return s;
  // Replayed as the settings now stand (a request may set only some fields): all of them, in
  // place of whatever the harness had.
  v1::SetDefinitionSettingsRequest replay;
  replay.set_definition(request->definition());
  *replay.mutable_settings() = answers.front().summary().settings();
  replay.set_reset(true);
  s = Journal({"settings", request->definition(), replay.SerializeAsString()}, took);
  if (!s.ok()) return s;
  *response = std::move(answers.front());
  return grpc::Status::OK;
}

grpc::Status FleetService::PutSolution(grpc::ServerContext* context,
                                       const v1::PutSolutionRequest* request,
                                       v1::PutSolutionResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  std::vector<v1::PutSolutionResponse> answers;
  std::vector<std::string> took;
  grpc::Status s = Gather(*authorization, *request, &v1::Harness::Stub::PutSolution,
                          Reach::kAnswered, &answers, &took);
  if (!s.ok()) return s;
  const std::string& name = request->name().empty() ? request->solution().name() : request->name();
  s = Journal({"solution", name, request->SerializeAsString()}, took);
  if (!s.ok()) return s;
  *response = std::move(answers.front());
  return grpc::Status::OK;
}

grpc::Status FleetService::ListDefinitions(grpc::ServerContext* context,
                                           const v1::ListDefinitionsRequest* request,
                                           v1::ListDefinitionsResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  return Forward(*authorization, "", *request, response, &v1::Harness::Stub::ListDefinitions);
}

grpc::Status FleetService::GetDefinition(grpc::ServerContext* context,
                                         const v1::GetDefinitionRequest* request,
                                         v1::DefinitionDetail* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  return Forward(*authorization, "", *request, response, &v1::Harness::Stub::GetDefinition);
}

grpc::Status FleetService::ListSolutions(grpc::ServerContext* context,
                                         const v1::ListSolutionsRequest* request,
                                         v1::ListSolutionsResponse* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  return Forward(*authorization, "", *request, response, &v1::Harness::Stub::ListSolutions);
}

grpc::Status FleetService::GetNodeInfo(grpc::ServerContext* context,
                                       const v1::GetNodeInfoRequest* request,
                                       v1::NodeInfo* response) {
  absl::StatusOr<std::string> authorization = Authorize(context);
  if (!authorization.ok()) return ToGrpcStatus(authorization.status());
  // The fleet's: every healthy harness's counts and devices, and each harness's state.
  std::vector<v1::NodeInfo> infos;
  std::vector<std::string> took;
  grpc::Status s = Gather(*authorization, *request, &v1::Harness::Stub::GetNodeInfo,
                          Reach::kAnswered, &infos, &took);
  if (!s.ok()) return s;
  *response = MergeNodeInfos(infos, took);
  for (std::string& h : FleetHarnesses(pool_.Health(), took, NowUnixMs())) {
    response->add_fleet(std::move(h));
  }
  return grpc::Status::OK;
}

}  // namespace kiln::controller
