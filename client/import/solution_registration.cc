#include "client/import/solution_registration.h"

#include "absl/strings/str_cat.h"

namespace kiln::cli {

bool IsFatal(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::PERMISSION_DENIED || code == grpc::StatusCode::UNIMPLEMENTED;
}

grpc::Status RegisterSolutions(Connection* connection, const DatasetScan& scan,
                               const std::set<std::string>& registered,
                               std::vector<SolutionRegistration>* out) {
  out->assign(scan.solutions.size(), SolutionRegistration{"not registered", ""});
  for (size_t i = 0; i < scan.solutions.size(); ++i) {
    const SolutionImport& s = scan.solutions[i];
    SolutionRegistration& r = (*out)[i];
    if (s.status != "valid") continue;  // its error is reported already
    if (registered.count(s.definition) == 0) {
      r.error = absl::StrCat(s.file, ": its definition ", s.definition,
                             " was not registered by this import");
      continue;
    }
    if (connection == nullptr) {
      r.status = "to register";
      continue;
    }
    v1::PutSolutionRequest request;
    *request.mutable_solution() = s.solution;
    grpc::ClientContext context;
    connection->Prepare(&context, kDefaultCallTimeoutS);
    v1::PutSolutionResponse response;
    grpc::Status status = connection->stub().PutSolution(&context, request, &response);
    if (!status.ok()) {
      if (IsFatal(status.error_code())) return status;
      r.status = "failed";
      r.error = absl::StrCat(s.file, ": registering: ", StatusCodeName(status.error_code()), ": ",
                             status.error_message());
      if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
        absl::StrAppend(&r.error, " (kiln solutions add ", scan.dir, "/", s.file,
                        " --replace replaces it)");
      }
      continue;
    }
    r.status = response.outcome() == "unchanged" ? "unchanged" : "registered";
  }
  return grpc::Status::OK;
}

}  // namespace kiln::cli
