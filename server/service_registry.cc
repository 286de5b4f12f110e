// HarnessService: how definitions are judged (GetDefinition, SetDefinitionSettings) and the
// solution registry (PutSolution, ListSolutions). service.cc has the rest of the service.
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/model/definition_settings.h"
#include "harness/model/solution_baseline.h"
#include "harness/model/validate.h"
#include "server/definition_settings.h"
#include "server/log_line.h"
#include "server/service.h"

namespace kiln {

grpc::ServerUnaryReactor* HarnessService::GetDefinition(grpc::CallbackServerContext* ctx,
                                                        const v1::GetDefinitionRequest* request,
                                                        v1::DefinitionDetail* response) {
  if (absl::StatusOr<Principal> caller = Caller(ctx); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  if (request->name().empty()) return Reply(ctx, absl::InvalidArgumentError("name: required"));
  absl::StatusOr<v1::DefinitionDetail> detail =
      DescribeDefinition(*context_.node->archive, request->name());
  if (absl::IsNotFound(detail.status())) {
    return Reply(ctx, UnknownDefinition(*context_.node->archive, request->name(), "name"));
  }
  if (!detail.ok()) return Reply(ctx, detail.status());
  *response = *std::move(detail);
  if (request->include_workloads()) {
    absl::StatusOr<std::vector<v1::Workload>> workloads =
        context_.node->archive->GetWorkloads(request->name());
    if (!workloads.ok()) return Reply(ctx, workloads.status());
    for (v1::Workload& w : *workloads) *response->add_workloads() = std::move(w);
  }
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* HarnessService::SetDefinitionSettings(
    grpc::CallbackServerContext* ctx, const v1::SetDefinitionSettingsRequest* request,
    v1::DefinitionDetail* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoSetDefinitionSettings(*caller, *request, response));
}

absl::Status HarnessService::DoSetDefinitionSettings(
    const Principal& caller, const v1::SetDefinitionSettingsRequest& request,
    v1::DefinitionDetail* response) {
  if (absl::Status s = RequireOperator(caller, "changing how a definition is judged"); !s.ok()) {
    return s;
  }
  if (request.definition().empty()) return absl::InvalidArgumentError("definition: required");
  if (absl::Status s = ValidateDefinitionSettings(request.settings(), SettingNames::kField);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::DefinitionSettings> stored = context_.node->archive->UpdateDefinitionSettings(
      request.definition(), request.settings(), request.reset());
  if (absl::IsNotFound(stored.status())) {
    return UnknownDefinition(*context_.node->archive, request.definition(), "definition");
  }
  if (!stored.ok()) return stored.status();
  LogEvent(context_.node->quiet, "definition_settings",
           {{"definition", request.definition()},
            {"by", caller.name},
            {"settings", DefinitionSettingsText(*stored)}});
  absl::StatusOr<v1::DefinitionDetail> detail =
      DescribeDefinition(*context_.node->archive, request.definition());
  if (!detail.ok()) return detail.status();
  *response = *std::move(detail);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* HarnessService::PutSolution(grpc::CallbackServerContext* ctx,
                                                      const v1::PutSolutionRequest* request,
                                                      v1::PutSolutionResponse* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoPutSolution(*caller, *request, response));
}

absl::Status HarnessService::DoPutSolution(const Principal& caller,
                                           const v1::PutSolutionRequest& request,
                                           v1::PutSolutionResponse* response) {
  if (absl::Status s = RequireOperator(caller, "registering a solution"); !s.ok()) return s;
  const v1::Solution& solution = request.solution();
  if (solution.definition().empty()) {
    return absl::InvalidArgumentError("solution.definition: required (the definition it solves)");
  }
  const bool named = !request.name().empty();
  const std::string& name = named ? request.name() : solution.name();
  if (absl::Status s = ValidateSolutionName(name, named ? "name" : "solution.name"); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::Definition> def = context_.node->archive->GetDefinition(solution.definition());
  if (absl::IsNotFound(def.status())) {
    return UnknownDefinition(*context_.node->archive, solution.definition(),
                             "solution.definition");
  }
  if (!def.ok()) return def.status();
  // As a submitted solution is admitted: relative paths, sizes, entry point, known language.
  if (absl::Status s = ValidateSolution(*def, solution, context_.admission.limits); !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::PutSolutionResponse> put =
      context_.node->archive->PutSolution(name, solution, request.replace());
  if (!put.ok()) return put.status();
  LogEvent(context_.node->quiet, "solution_registered",
           {{"definition", solution.definition()},
            {"name", name},
            {"by", caller.name},
            {"outcome", put->outcome()},
            {"sha256", put->solution().sha256()}});
  *response = *std::move(put);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* HarnessService::ListSolutions(grpc::CallbackServerContext* ctx,
                                                        const v1::ListSolutionsRequest* request,
                                                        v1::ListSolutionsResponse* response) {
  if (absl::StatusOr<Principal> caller = Caller(ctx); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  absl::StatusOr<v1::ListSolutionsResponse> listed =
      context_.node->archive->ListSolutions(request->definition());
  if (!listed.ok()) return Reply(ctx, listed.status());
  *response = *std::move(listed);
  return Reply(ctx, absl::OkStatus());
}

}  // namespace kiln
