// HarnessService: reading runs (GetRun, ListRuns) and their artifacts (GetArtifact), each
// only for a caller who may see the run.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/common/sha256.h"
#include "server/evaluation/run_progress_board.h"
#include "server/service.h"

namespace kiln {

namespace {

constexpr int kDefaultListLimit = 50;  // ListRuns without a limit
constexpr int kMaxListLimit = 1000;

}  // namespace

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

}  // namespace kiln
