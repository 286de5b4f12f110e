#include "client/connection.h"

#include <chrono>
#include <utility>

#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "access/server_credentials.h"

namespace kiln::cli {

namespace {

grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  // Traces and sources of a large run can exceed the 4 MiB default.
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  return args;
}

}  // namespace

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const ConnectionFlags& flags) {
  // Without --tls-ca, the system's trust store.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(flags.tls_ca, flags.tls_cert, flags.tls_key);
  if (!credentials.ok()) throw std::runtime_error(std::string(credentials.status().message()));
  return *std::move(credentials);
}

Connection::Connection(std::string server) : server_(std::move(server)) {
  channel_ = grpc::CreateCustomChannel(server_, grpc::InsecureChannelCredentials(), ChannelArgs());
  stub_ = v1::Harness::NewStub(channel_);
}

Connection::Connection(const Invocation& inv) : server_(inv.server), token_(inv.connection.token) {
  grpc::ChannelArguments args = ChannelArgs();
  if (!inv.connection.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(inv.connection.tls_server_name);
  }
  channel_ = grpc::CreateCustomChannel(server_, ChannelCredentialsFor(inv.connection), args);
  stub_ = v1::Harness::NewStub(channel_);
}

void Connection::Prepare(grpc::ClientContext* context, double seconds) const {
  SetDeadline(context, seconds);
  if (!token_.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token_));
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
  return FailureText(server_, status, unreachable, !token_.empty());
}

std::string FailureText(const std::string& server, const grpc::Status& status, bool unreachable,
                        bool sent_token) {
  if (unreachable) {
    return absl::StrCat("kiln: cannot reach kiln-harness at ", server, ": ",
                        status.error_message(),
                        "\nkiln: is kiln-harness running there? The address comes from --server, "
                        "else $KILN_SERVER, else 127.0.0.1:50051.");
  }
  std::string text =
      absl::StrCat("kiln: ", StatusCodeName(status.error_code()), ": ", status.error_message());
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    absl::StrAppend(&text, sent_token
                               ? "\nkiln: the harness does not know this token (--token, else "
                                 "$KILN_TOKEN); ask its operator for one"
                               : "\nkiln: this harness needs a token: pass --token TOKEN or set "
                                 "$KILN_TOKEN");
  }
  return text;
}

int Connection::Fail(const grpc::Status& status, Console& console) {
  console.err << Describe(status) << "\n";
  return kExitUsage;
}

}  // namespace kiln::cli
