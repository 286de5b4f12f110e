#include "client/connection.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kiln::cli {

Connection::Connection(std::string server) : server_(std::move(server)) {
  grpc::ChannelArguments args;
  // Traces and sources of a large run can exceed the 4 MiB default.
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  channel_ = grpc::CreateCustomChannel(server_, grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Harness::NewStub(channel_);
}

void Connection::SetDeadline(grpc::ClientContext* context, double seconds) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    default:
      return absl::StrCat("CODE_", static_cast<int>(code));
  }
}

std::string Connection::Describe(const grpc::Status& status) {
  // A server that answers UNAVAILABLE itself (draining) keeps the channel READY; a refused or
  // broken connection leaves it in another state.
  bool unreachable = status.error_code() == grpc::StatusCode::UNAVAILABLE &&
                     channel_->GetState(false) != GRPC_CHANNEL_READY;
  if (unreachable) {
    return absl::StrCat("kiln: cannot reach kiln-harness at ", server_, ": ",
                        status.error_message());
  }
  return absl::StrCat("kiln: ", StatusCodeName(status.error_code()), ": ", status.error_message());
}

int Connection::Fail(const grpc::Status& status, Console& console) {
  console.err << Describe(status) << "\n";
  return kExitUsage;
}

}  // namespace kiln::cli
