#include "server/service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/message_differencer.h"
#include "harness/definitions/builtins.h"
#include "harness/model/validate.h"
#include "server/batch_references.h"
#include "server/evaluate_reactor.h"
#include "server/evaluation.h"
#include "server/event_sink.h"
#include "server/log_line.h"
#include "server/profile_run.h"
#include "server/put_blob_reactor.h"
#include "server/run_id.h"
#include "server/run_progress_board.h"

namespace kiln {

namespace {

// Whether `def` is registered with exactly these workloads (in this order) already.
bool SameAsRegistered(Archive& archive, const v1::Definition& def,
                      const std::vector<v1::Workload>& workloads) {
  absl::StatusOr<v1::Definition> stored = archive.GetDefinition(def.name());
  if (!stored.ok() || !google::protobuf::util::MessageDifferencer::Equals(*stored, def)) {
    return false;
  }
  absl::StatusOr<std::vector<v1::Workload>> registered = archive.GetWorkloads(def.name());
  if (!registered.ok() || registered->size() != workloads.size()) return false;
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals((*registered)[i], workloads[i])) {
      return false;
    }
  }
  return true;
}

constexpr int kDefaultListLimit = 50;
constexpr int kMaxListLimit = 1000;

absl::Status ValidateWorkloadList(const v1::Definition& def,
                                  const google::protobuf::RepeatedPtrField<v1::Workload>& list,
                                  const Limits& limits) {
  if (list.size() > limits.max_workloads) {
    return absl::InvalidArgumentError(
        absl::StrCat("workloads: ", list.size(), " given, at most ", limits.max_workloads));
  }
  std::set<std::string> uuids;
  for (int i = 0; i < list.size(); ++i) {
    const std::string where = absl::StrCat("workloads[", i, "]");
    if (absl::Status s = ValidateWorkload(def, list[i], limits, where); !s.ok()) return s;
    if (list[i].uuid().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".uuid: required"));
    }
    if (!uuids.insert(list[i].uuid()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".uuid: '", list[i].uuid(), "' given twice"));
    }
  }
  return absl::OkStatus();
}

// Keeps of a profile's admitted workloads (the registered ones) the one named by `uuid` (empty:
// the first); NOT_FOUND naming workload_uuid when none is.
absl::Status KeepProfiledWorkload(const std::string& uuid, AdmittedRun& admitted) {
  for (v1::Workload& w : admitted.workloads) {
    if (!uuid.empty() && w.uuid() != uuid) continue;
    v1::Workload kept = std::move(w);
    admitted.workloads = {std::move(kept)};
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat(
      "workload_uuid: '", uuid, "' is not a registered workload of '", admitted.definition.name(),
      "' (", admitted.workloads.size(), " registered; kiln defs show ",
      admitted.definition.name(), " lists them)"));
}

}  // namespace

grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share their numbering (the canonical codes).
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::StatusOr<Principal> HarnessService::Caller(grpc::CallbackServerContext* ctx) const {
  if (context_.auth == nullptr) return LocalOperator();
  std::optional<std::string> authorization;
  const auto& metadata = ctx->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = std::string(it->second.data(), it->second.size());
  }
  absl::StatusOr<Principal> caller = context_.auth->Authenticate(authorization);
  if (!caller.ok()) {
    LogEvent(context_.node->quiet, "unauthenticated",
             {{"peer", ctx->peer()}, {"reason", std::string(caller.status().message())}});
  }
  return caller;
}

grpc::ServerWriteReactor<v1::EvaluateEvent>* HarnessService::Evaluate(
    grpc::CallbackServerContext* ctx, const v1::EvaluateRequest* request) {
  auto* reactor = new EvaluateReactor();
  absl::StatusOr<Principal> caller = Caller(ctx);
  absl::Status started = caller.ok() ? StartRun(*caller, *request, reactor) : caller.status();
  if (!started.ok()) {
    context_.metrics->RunRefused(absl::StatusCodeToString(started.code()));
    LogEvent(context_.node->quiet, "evaluate_refused",
             {{"principal", caller.ok() ? caller->name : ""},
              {"code", absl::StatusCodeToString(started.code())},
              {"reason", std::string(started.message())}});
    reactor->Reject(ToGrpcStatus(started));
  }
  return reactor;
}

grpc::ServerWriteReactor<v1::EvaluateEvent>* HarnessService::Profile(
    grpc::CallbackServerContext* ctx, const v1::ProfileRequest* request) {
  auto* reactor = new EvaluateReactor();
  absl::StatusOr<Principal> caller = Caller(ctx);
  absl::Status started = caller.ok() ? StartProfile(*caller, *request, reactor) : caller.status();
  if (!started.ok()) {
    context_.metrics->RunRefused(absl::StatusCodeToString(started.code()));
    LogEvent(context_.node->quiet, "profile_refused",
             {{"principal", caller.ok() ? caller->name : ""},
              {"code", absl::StatusCodeToString(started.code())},
              {"reason", std::string(started.message())}});
    reactor->Reject(ToGrpcStatus(started));
  }
  return reactor;
}

absl::Status HarnessService::StartProfile(const Principal& caller,
                                          const v1::ProfileRequest& request,
                                          EvaluateReactor* reactor) {
  const ProfilingSupport& profiling = context_.node->profiling;
  if (!profiling.available) {
    return absl::FailedPreconditionError(
        absl::StrCat("this node cannot take profiles: ", profiling.reason));
  }
  ProfileOptions options;
  if (!request.section().empty()) options.section = request.section();
  if (absl::Status s = ValidateProfileSection(options.section, "section"); !s.ok()) return s;
  if (!request.has_solution()) return absl::InvalidArgumentError("solution: required");
  // Admitted on the registered workloads (the definition and solution checked as Evaluate
  // checks them); StartRun keeps the one profiled.
  v1::EvaluateRequest evaluate;
  evaluate.set_definition(request.definition());
  *evaluate.mutable_solution() = request.solution();
  evaluate.set_backend(request.backend());
  options.workload_uuid = request.workload_uuid();
  std::set<std::string> seen;
  for (int i = 0; i < request.also_size(); ++i) {
    const std::string& target = request.also(i);
    const std::string where = absl::StrCat("also[", i, "]");
    if (!seen.insert(target).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": '", target, "' given twice"));
    }
    if (target == "solution") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the solution is always profiled; name the reference or a "
                              "baseline"));
    }
    // The baselines are admitted (and built) as a run's baselines are; errors name them there.
    if (target != "reference") evaluate.add_baselines(target);
    options.also.push_back(target);
  }
  const std::string principal = caller.name.empty() ? "local" : caller.name;
  Archive& archive = *context_.node->archive;
  std::lock_guard<std::mutex> lock(profile_mu_);
  if (const int limit = context_.max_profiles_per_hour; limit > 0) {
    const int64_t now_ms = absl::ToUnixMillis(absl::Now());
    absl::StatusOr<Archive::ProfileCount> taken =
        archive.CountProfilesSince(principal, now_ms - 3600 * 1000);
    if (!taken.ok()) return taken.status();
    if (taken->count >= limit) {
      const int64_t wait_s = std::max<int64_t>(1, (taken->oldest_unix_ms + 3600 * 1000 - now_ms) / 1000);
      return absl::ResourceExhaustedError(absl::StrCat(
          "profiles: '", principal, "' took ", taken->count, " profiles in the last hour, the "
          "node's limit (--max-profiles-per-hour ", limit, "); the next can start in ",
          (wait_s + 59) / 60, " min"));
    }
  }
  return StartRun(caller, evaluate, reactor, std::move(options));
}

grpc::ServerWriteReactor<v1::EvaluateEvent>* HarnessService::EvaluateBatch(
    grpc::CallbackServerContext* ctx, const v1::EvaluateBatchRequest* request) {
  auto* reactor = new EvaluateReactor();
  absl::StatusOr<Principal> caller = Caller(ctx);
  absl::Status started = caller.ok() ? StartBatch(*caller, *request, reactor) : caller.status();
  if (!started.ok()) {
    context_.metrics->RunRefused(absl::StatusCodeToString(started.code()));
    LogEvent(context_.node->quiet, "evaluate_batch_refused",
             {{"principal", caller.ok() ? caller->name : ""},
              {"code", absl::StatusCodeToString(started.code())},
              {"reason", std::string(started.message())}});
    reactor->Reject(ToGrpcStatus(started));
  }
  return reactor;
}

absl::Status HarnessService::StartBatch(const Principal& caller,
                                        const v1::EvaluateBatchRequest& request,
                                        EvaluateReactor* reactor) {
  constexpr int kMaxBatch = 64;
  if (request.request().has_solution()) {
    return absl::InvalidArgumentError(
        "request.solution: must be empty in a batch (the solutions are in `solutions`)");
  }
  // A confirmation evaluates archived runs' solutions again; each run records which it confirms.
  v1::EvaluateBatchRequest confirmation;
  std::vector<std::string> confirms;
  if (!request.confirm_runs().empty()) {
    auto built = ConfirmationBatch(caller, request, &confirms);
    if (!built.ok()) return built.status();
    confirmation = *std::move(built);
  }
  const v1::EvaluateBatchRequest& batch = confirms.empty() ? request : confirmation;
  if (batch.solutions().empty()) {
    return absl::InvalidArgumentError("solutions: a batch needs at least one solution");
  }
  if (batch.solutions_size() > kMaxBatch) {
    return absl::InvalidArgumentError(absl::StrCat("solutions: ", batch.solutions_size(),
                                                   " solutions, at most ", kMaxBatch,
                                                   " in one batch"));
  }
  Scheduler& scheduler = *context_.scheduler;
  if (!scheduler.admitting()) return absl::UnavailableError("draining");
  // Every solution is admitted before anything is reserved or created: a bad one changes nothing.
  std::vector<AdmittedRun> admitted;
  for (int i = 0; i < batch.solutions_size(); ++i) {
    v1::EvaluateRequest one = batch.request();
    *one.mutable_solution() = batch.solutions(i);
    auto run = AdmitRequest(one, *context_.node->archive, context_.admission);
    if (!run.ok()) {
      const std::string where = confirms.empty()
                                    ? absl::StrCat("solutions[", i, "]")
                                    : absl::StrCat("confirm_runs[", i, "] (", confirms[i], ")");
      return absl::Status(run.status().code(),
                          absl::StrCat(where, ": ", run.status().message()));
    }
    if (!confirms.empty()) run->confirms = confirms[static_cast<size_t>(i)];
    admitted.push_back(*std::move(run));
  }
  int reserved = 0;
  auto release = [&] {
    for (; reserved > 0; --reserved) scheduler.Release();
  };
  for (AdmittedRun& run : admitted) {
    if (absl::Status s = scheduler.Reserve(); !s.ok()) {
      release();
      return s;
    }
    ++reserved;
    if (context_.quota != nullptr) {
      absl::StatusOr<std::shared_ptr<void>> hold = context_.quota->Admit(caller);
      if (!hold.ok()) {
        release();
        return hold.status();
      }
      run.quota_hold = *std::move(hold);
    }
  }
  const absl::Time now = absl::Now();
  const std::string batch_id = absl::StrCat("b", NewRunId(now));
  auto shared = std::make_shared<BatchReferences>();
  LogEvent(context_.node->quiet, "batch_admitted",
           {{"batch_id", batch_id},
            {"principal", caller.name},
            {"definition", batch.request().definition()},
            {"runs", absl::StrCat(admitted.size())},
            {"confirmation", confirms.empty() ? "no" : "yes"}});
  std::vector<std::shared_ptr<Evaluation>> runs;
  for (AdmittedRun& run : admitted) {
    run.principal = caller.name;
    run.batch_id = batch_id;
    run.batch = shared;
    reactor->AttachRun();
    runs.push_back(std::make_shared<Evaluation>(*context_.node, NewRunId(absl::Now()),
                                                std::move(run), reactor->cancel_flag(), reactor,
                                                now));
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (absl::Status created = runs[i]->Create(); !created.ok()) {
      // The runs before it are queued and go on; this one and those after it are released.
      context_.metrics->RunRefused(absl::StatusCodeToString(created.code()));
      for (size_t j = i; j < runs.size(); ++j) {
        scheduler.Release();
        reactor->Reject(ToGrpcStatus(created), /*release_run=*/true);
      }
      return absl::OkStatus();
    }
    context_.metrics->RunAdmitted();
    scheduler.Submit(runs[i]);
  }
  return absl::OkStatus();
}

absl::StatusOr<AdmittedRun> HarnessService::AdmitAndReserve(const v1::EvaluateRequest& request) {
  Scheduler& scheduler = *context_.scheduler;
  if (!scheduler.admitting()) return absl::UnavailableError("draining");
  auto admitted = AdmitRequest(request, *context_.node->archive, context_.admission);
  if (!admitted.ok()) return admitted.status();
  if (absl::Status reserved = scheduler.Reserve(); !reserved.ok()) return reserved;
  return admitted;
}

absl::Status HarnessService::StartRun(const Principal& caller, const v1::EvaluateRequest& request,
                                      EvaluateReactor* reactor,
                                      std::optional<ProfileOptions> profile) {
  Scheduler& scheduler = *context_.scheduler;
  auto admitted = AdmitAndReserve(request);
  if (!admitted.ok()) return admitted.status();
  if (profile.has_value()) {
    absl::Status refused = KeepProfiledWorkload(profile->workload_uuid, *admitted);
    if (refused.ok() && admitted->backend->name != "cuda") {
      refused = absl::FailedPreconditionError(absl::StrCat(
          "backend: profiles are taken on the cuda backend, not '", admitted->backend->name,
          "'"));
    }
    if (!refused.ok()) {
      scheduler.Release();
      return refused;
    }
    admitted->profile = std::move(profile);
    admitted->registered_workloads = false;  // a profile is never ranked
  }
  if (context_.quota != nullptr) {
    absl::StatusOr<std::shared_ptr<void>> hold = context_.quota->Admit(caller);
    if (!hold.ok()) {
      scheduler.Release();
      return hold.status();
    }
    admitted->quota_hold = *std::move(hold);
  }
  admitted->principal = caller.name;
  const absl::Time now = absl::Now();
  reactor->AttachRun();
  auto run = std::make_shared<Evaluation>(*context_.node, NewRunId(now), *std::move(admitted),
                                          reactor->cancel_flag(), reactor, now);
  if (absl::Status created = run->Create(); !created.ok()) {
    // The reactor is attached: it is rejected here, and the call reports no error.
    scheduler.Release();
    context_.metrics->RunRefused(absl::StatusCodeToString(created.code()));
    reactor->Reject(ToGrpcStatus(created), /*release_run=*/true);
    return absl::OkStatus();
  }
  context_.metrics->RunAdmitted();
  scheduler.Submit(std::move(run));
  return absl::OkStatus();
}

namespace {

// Where the events of a run no client waits for go: nowhere. Deletes itself with the final one.
class DetachedSink final : public EventSink {
 public:
  void Send(const v1::EvaluateEvent& event) override { (void)event; }
  void Close(const v1::EvaluateEvent& event) override {
    (void)event;
    delete this;
  }
};

}  // namespace

absl::StatusOr<v1::EvaluateBatchRequest> HarnessService::ConfirmationBatch(
    const Principal& caller, const v1::EvaluateBatchRequest& request,
    std::vector<std::string>* confirms) {
  // Re-measuring other teams' runs reads their sources: operators only.
  if (absl::Status s = RequireOperator(caller, "confirming ranked runs"); !s.ok()) return s;
  if (!request.solutions().empty()) {
    return absl::InvalidArgumentError(
        "solutions: must be empty with confirm_runs (the runs' own solutions are evaluated)");
  }
  const v1::EvaluateRequest& shared = request.request();
  if (!shared.workloads().empty()) {
    return absl::InvalidArgumentError(
        "request.workloads: must be empty with confirm_runs (ranked runs ran on the registered "
        "workloads, and so does their confirmation)");
  }
  if (shared.definition().empty()) {
    return absl::InvalidArgumentError("request.definition: required");
  }
  v1::EvaluateBatchRequest batch;
  *batch.mutable_request() = shared;
  std::string mode = shared.mode();
  for (int i = 0; i < request.confirm_runs_size(); ++i) {
    const std::string field = absl::StrCat("confirm_runs[", i, "]");
    auto run = ReadRun(caller, request.confirm_runs(i), /*include_sources=*/true, field);
    if (!run.ok()) return run.status();
    if (run->definition() != shared.definition()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": run '", run->run_id(),
                                                     "' is of definition '", run->definition(),
                                                     "', not '", shared.definition(), "'"));
    }
    if (std::string why = NotRankable(*run); !why.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(field, ": run '", run->run_id(), "' is not ranked: ", why));
    }
    if (mode.empty()) mode = run->mode();
    if (run->mode() != mode) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": run '", run->run_id(),
                                                     "' was timed in mode ", run->mode(),
                                                     ", the confirmation in ", mode));
    }
    for (const std::string& seen : *confirms) {
      if (seen == run->run_id()) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": run '", run->run_id(), "' is named twice"));
      }
    }
    confirms->push_back(run->run_id());
    *batch.add_solutions() = run->solution();
  }
  batch.mutable_request()->set_mode(mode);
  return batch;
}

absl::StatusOr<std::string> HarnessService::StartReferenceCheck(const Principal& caller,
                                                                const v1::Definition& def,
                                                                const v1::Workload& workload) {
  v1::EvaluateRequest request;
  request.set_definition(def.name());
  *request.mutable_solution() = def.native_reference();
  request.mutable_solution()->set_definition(def.name());
  request.mutable_solution()->set_name(absl::StrCat(def.name(), "_reference_check"));
  *request.add_workloads() = workload;
  Scheduler& scheduler = *context_.scheduler;
  auto admitted = AdmitAndReserve(request);
  if (!admitted.ok()) return admitted.status();
  admitted->principal = kHarnessPrincipal;
  const absl::Time now = absl::Now();
  LogEvent(context_.node->quiet, "reference_check",
           {{"definition", def.name()}, {"added_by", caller.name}});
  auto* sink = new DetachedSink();
  auto run = std::make_shared<Evaluation>(*context_.node, NewRunId(now), *std::move(admitted),
                                          std::make_shared<std::atomic<bool>>(false), sink, now);
  if (absl::Status created = run->Create(); !created.ok()) {
    scheduler.Release();
    delete sink;  // Create failed before using it
    return created;
  }
  std::string run_id = run->run_id();
  context_.metrics->RunAdmitted();
  scheduler.Submit(std::move(run));
  return run_id;
}

grpc::ServerUnaryReactor* HarnessService::GetRun(grpc::CallbackServerContext* ctx,
                                                 const v1::GetRunRequest* request,
                                                 v1::Run* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoGetRun(*caller, *request, response));
}

absl::Status HarnessService::DoGetRun(const Principal& caller, const v1::GetRunRequest& request,
                                      v1::Run* response) {
  auto run = ReadRun(caller, request.run_id(), request.include_sources(), "run_id");
  if (!run.ok()) return run.status();
  *response = *std::move(run);
  return absl::OkStatus();
}

absl::StatusOr<v1::Run> HarnessService::ReadRun(const Principal& caller,
                                                const std::string& fragment,
                                                bool include_sources, const std::string& field) {
  if (fragment.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  std::string run_id = fragment;
  auto run = context_.node->archive->GetRun(run_id, include_sources);
  if (absl::IsNotFound(run.status())) {
    // Not a whole id: the start of one, or its random part (the 8 characters progress lines
    // show). Only runs the caller may see are candidates, so an ambiguity names none of others'.
    auto found = context_.node->archive->FindRunIds(run_id, 64);
    if (!found.ok()) return found.status();
    std::vector<std::string> matches;
    for (const auto& [id, owner] : *found) {
      if (MaySeeRun(caller, owner)) matches.push_back(id);
    }
    if (matches.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": '", run_id, "' is the start or end of ", matches.size() >= 64 ? "64 or more" : "",
          matches.size() >= 64 ? "" : absl::StrCat(matches.size()), " runs (",
          absl::StrJoin(std::vector<std::string>(matches.begin(),
                                                 matches.begin() + std::min<size_t>(5, matches.size())),
                        ", "),
          matches.size() > 5 ? ", ..." : "", "); give more of it"));
    }
    if (matches.size() == 1) {
      run_id = matches.front();
      run = context_.node->archive->GetRun(run_id, include_sources);
    }
  }
  if (!run.ok()) return run.status();
  // Another principal's run is refused whole: its traces carry logs and error messages too.
  if (absl::Status s = CheckRunAccess(caller, run_id, run->principal()); !s.ok()) {
    return s;
  }
  if (run->state() != v1::RUN_DONE && context_.node->progress != nullptr) {
    run->set_progress(context_.node->progress->Get(run_id));
  }
  return run;
}

grpc::ServerUnaryReactor* HarnessService::ListRuns(grpc::CallbackServerContext* ctx,
                                                   const v1::ListRunsRequest* request,
                                                   v1::ListRunsResponse* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoListRuns(*caller, *request, response));
}

absl::Status HarnessService::DoListRuns(const Principal& caller, const v1::ListRunsRequest& request,
                                        v1::ListRunsResponse* response) {
  if (request.limit() < 0) return absl::InvalidArgumentError("limit: must not be negative");
  if (!v1::EvaluationStatus_IsValid(request.status())) {
    return absl::InvalidArgumentError(absl::StrCat("status: unknown value ", request.status()));
  }
  RunFilter filter;
  filter.definition = request.definition();
  filter.status = request.status();
  filter.limit =
      request.limit() == 0 ? kDefaultListLimit : std::min(request.limit(), kMaxListLimit);
  filter.page_token = request.page_token();
  filter.principal = request.principal();
  if (!request.kind().empty() && request.kind() != "evaluation" && request.kind() != "profile") {
    return absl::InvalidArgumentError(
        absl::StrCat("kind: '", request.kind(), "' is not one of evaluation, profile"));
  }
  filter.kind = request.kind();
  if (request.exclude_reference_checks()) filter.exclude_principal = kHarnessPrincipal;
  if (!MaySeeOthersScores(caller)) {
    if (!filter.principal.empty() && filter.principal != caller.name) {
      return absl::PermissionDeniedError(absl::StrCat(
          "principal: ", RoleName(caller.role), " '", caller.name, "' lists its own runs only"));
    }
    filter.principal = caller.name;
  }
  auto runs = context_.node->archive->ListRuns(filter);
  if (!runs.ok()) return runs.status();
  *response = *std::move(runs);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* HarnessService::GetArtifact(grpc::CallbackServerContext* ctx,
                                                      const v1::GetArtifactRequest* request,
                                                      v1::Artifact* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoGetArtifact(*caller, *request, response));
}

absl::Status HarnessService::DoGetArtifact(const Principal& caller,
                                           const v1::GetArtifactRequest& request,
                                           v1::Artifact* response) {
  if (!IsSha256Hex(request.sha256())) {
    return absl::InvalidArgumentError(
        absl::StrCat("sha256: '", request.sha256(), "' is not a lowercase hex SHA-256 digest"));
  }
  if (caller.role != Role::kOperator) {
    // Blobs are shared by content: one is readable when a run of the caller references it. The
    // answer for another principal's blob is the one for a missing blob.
    absl::StatusOr<bool> owned =
        context_.node->archive->ArtifactBelongsTo(request.sha256(), caller.name);
    if (!owned.ok()) return owned.status();
    if (!*owned) {
      return absl::NotFoundError(absl::StrCat("artifact '", request.sha256(), "' not found"));
    }
  }
  auto content = context_.node->archive->GetArtifact(request.sha256());
  if (!content.ok()) return content.status();
  response->set_sha256(request.sha256());
  response->set_content(*std::move(content));
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* HarnessService::ListDefinitions(grpc::CallbackServerContext* ctx,
                                                          const v1::ListDefinitionsRequest* request,
                                                          v1::ListDefinitionsResponse* response) {
  if (absl::StatusOr<Principal> caller = Caller(ctx); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  auto list = context_.node->archive->ListDefinitions();
  if (!list.ok()) return Reply(ctx, list.status());
  *response = *std::move(list);
  for (v1::DefinitionSummary& summary : *response->mutable_definitions()) {
    auto def = context_.node->archive->GetDefinition(summary.name());
    if (def.ok()) summary.set_cannot_evaluate(CannotEvaluate(*def, context_.admission));
  }
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* HarnessService::PutDefinition(grpc::CallbackServerContext* ctx,
                                                        const v1::PutDefinitionRequest* request,
                                                        v1::PutDefinitionResponse* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoPutDefinition(*caller, *request, response));
}

absl::Status HarnessService::DoPutDefinition(const Principal& caller,
                                             const v1::PutDefinitionRequest& request,
                                             v1::PutDefinitionResponse* response) {
  // Definitions and their workloads are shared by every principal on the node.
  if (absl::Status s = RequireOperator(caller, "registering a definition"); !s.ok()) return s;
  v1::Definition def = request.definition();
  if (def.has_timing_overrides()) {
    return absl::InvalidArgumentError(
        "definition.timing_overrides: not part of a definition; set timed-call counts with "
        "SetDefinitionSettings (kiln defs set)");
  }
  if (def.has_min_own_kernel_share()) {
    return absl::InvalidArgumentError(
        "definition.min_own_kernel_share: not part of a definition; set it with "
        "SetDefinitionSettings (kiln defs set --min-own-kernel-share)");
  }
  if (!def.has_native_reference()) {
    // flashinfer-trace definitions carry only a Python reference; kiln ships native ones.
    absl::StatusOr<std::optional<v1::Solution>> shipped = ShippedNativeReference(def.name());
    if (!shipped.ok()) return shipped.status();
    if (shipped->has_value()) *def.mutable_native_reference() = **shipped;
  }
  if (absl::Status s = ValidateDefinition(def); !s.ok()) return s;
  if (context_.builtin_definitions.count(def.name()) > 0) {
    return absl::FailedPreconditionError(absl::StrCat("definition '", def.name(), "' is built in"));
  }
  if (absl::Status s = ValidateWorkloadList(def, request.workloads(), context_.admission.limits);
      !s.ok()) {
    return s;
  }
  std::vector<v1::Workload> workloads(request.workloads().begin(), request.workloads().end());
  if (workloads.empty()) {
    // Re-registering a definition without workloads keeps the ones it has, where they still
    // fit the new definition; otherwise it would silently lose them.
    absl::StatusOr<std::vector<v1::Workload>> existing =
        context_.node->archive->GetWorkloads(def.name());
    if (existing.ok()) {
      for (size_t i = 0; i < existing->size(); ++i) {
        if (ValidateWorkload(def, (*existing)[i], context_.admission.limits,
                             absl::StrCat("registered workload[", i, "]"))
                .ok()) {
          workloads.push_back((*existing)[i]);
        }
      }
    }
  }
  // A definition no backend here can compute the reference of would fail every run: refused
  // unless the caller registers it knowingly (a dataset staged on a node without torch).
  const std::string cannot = CannotEvaluate(def, context_.admission);
  if (!cannot.empty() && !request.allow_unevaluable()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "definition '", def.name(), "' cannot be evaluated on this node (", cannot,
        "); give it a native_reference, register it on a node that runs its reference, or "
        "register it anyway with allow_unevaluable (kiln defs add --allow-unevaluable)"));
  }
  response->set_name(def.name());
  response->set_workload_count(static_cast<int32_t>(workloads.size()));
  response->set_cannot_evaluate(cannot);
  // Registering the same definition and workloads again (each `kiln submit --definition FILE`
  // does) writes nothing and starts no second reference check.
  if (SameAsRegistered(*context_.node->archive, def, workloads)) {
    response->set_unchanged(true);
    response->set_reference_check_note("unchanged since it was registered");
    return absl::OkStatus();
  }
  if (absl::Status s = context_.node->archive->PutDefinition(def, workloads, /*builtin=*/false);
      !s.ok()) {
    return s;
  }
  // integrity.degenerate_definition: the reference's outputs are checked as soon as the
  // definition is added, not only when the first candidate runs.
  if (!context_.check_references) {
    response->set_reference_check_note("this harness runs with --check-references=false");
  } else if (!cannot.empty()) {
    response->set_reference_check_note("it cannot be evaluated on this node");
  } else if (!def.has_native_reference()) {
    response->set_reference_check_note("no native reference to check");
  } else if (workloads.empty()) {
    response->set_reference_check_note("no workload to check the reference on");
  } else {
    absl::StatusOr<std::string> check = StartReferenceCheck(caller, def, workloads.front());
    if (check.ok()) {
      response->set_reference_check_run_id(*check);
    } else {
      response->set_reference_check_note(
          absl::StrCat("reference check not started: ", check.status().message()));
    }
  }
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* HarnessService::GetNodeInfo(grpc::CallbackServerContext* ctx,
                                                      const v1::GetNodeInfoRequest* request,
                                                      v1::NodeInfo* response) {
  if (absl::StatusOr<Principal> caller = Caller(ctx); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  return Reply(ctx, DoGetNodeInfo(response));
}

absl::Status HarnessService::DoGetNodeInfo(v1::NodeInfo* response) {
  NodeLoad load = context_.scheduler->Load();
  auto archived = context_.node->archive->CountRuns();
  if (!archived.ok()) return archived.status();
  load.runs_archived = *archived;
  *response = DescribeNode(context_.facts, load);
  const auto& sandbox = context_.node->sandbox;
  // The sandbox's start-up line without its "sandbox: " label (the field names it).
  std::string described =
      sandbox != nullptr ? sandbox->Describe() : "unconfined: no sandbox on this node";
  absl::string_view text = described;
  absl::ConsumePrefix(&text, "sandbox: ");
  response->set_sandbox(std::string(text));
  // Waits for the node's Python probe (seconds after start at most).
  DescribeLanguages(context_.facts,
                    context_.node->python != nullptr ? &context_.node->python->Get() : nullptr,
                    response);
  return absl::OkStatus();
}

grpc::ServerReadReactor<v1::PutBlobChunk>* HarnessService::PutBlob(
    grpc::CallbackServerContext* ctx, v1::PutBlobResponse* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  absl::Status allowed =
      caller.ok() ? RequireOperator(*caller, "uploading a blob") : caller.status();
  return new PutBlobReactor(context_.node->blob_root, context_.admission.limits.max_workload_bytes,
                            response, allowed);
}

}  // namespace kiln
