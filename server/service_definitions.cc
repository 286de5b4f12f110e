// HarnessService: listing and registering definitions with their workloads (ListDefinitions,
// PutDefinition). service_registry.cc has their settings and the solution registry.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "harness/definitions/builtins.h"
#include "harness/model/validate.h"
#include "server/log_line.h"
#include "server/service.h"

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

}  // namespace

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

}  // namespace kiln
