// What a kiln service reads from a call to know who is calling, and how it answers in gRPC's
// terms: shared by kiln-harness's service and kiln-controller's two services.
#ifndef KILN_ACCESS_CALL_METADATA_H_
#define KILN_ACCESS_CALL_METADATA_H_

#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace kiln {

// The call's "authorization" metadata as the client sent it; nullopt when it sent none.
std::optional<std::string> AuthorizationMetadata(const grpc::ServerContextBase& context);

// absl::StatusCode and grpc::StatusCode share their numbering (the canonical codes).
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace kiln

#endif  // KILN_ACCESS_CALL_METADATA_H_
