#include "server/service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "harness/model/validate.h"
#include "server/evaluate_reactor.h"
#include "server/evaluation/batch_references.h"
#include "server/evaluation/evaluation.h"
#include "server/evaluation/profile_run.h"
#include "server/event_sink.h"
#include "server/log_line.h"
#include "server/put_blob_reactor.h"
#include "server/run_id.h"

namespace kiln {

namespace {

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

absl::StatusOr<Principal> HarnessService::Caller(grpc::CallbackServerContext* ctx) const {
  if (context_.auth == nullptr) return LocalOperator();
  absl::StatusOr<Principal> caller = context_.auth->Authenticate(AuthorizationMetadata(*ctx));
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
