#include "access/call_metadata.h"

namespace kiln {

std::optional<std::string> AuthorizationMetadata(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return std::nullopt;
  return std::string(it->second.data(), it->second.size());
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace kiln
