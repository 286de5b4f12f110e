// The CLI's link to one kiln-harness: a channel and stub for HOST:PORT, call deadlines, and the
// single place where gRPC errors become the lines users see.
#ifndef KILN_CLIENT_CONNECTION_H_
#define KILN_CLIENT_CONNECTION_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "client/cli.h"
#include "kiln/v1/harness.grpc.pb.h"

namespace kiln::cli {

// Deadline of every call but submit's.
inline constexpr double kDefaultCallTimeoutS = 30;

// What a failed call tells a person: "kiln: cannot reach kiln-harness at HOST:PORT: ..." when
// the server could not be reached, else "kiln: <CODE>: <message>"; each with the next step
// where there is an obvious one (where the address comes from, how to pass a token).
std::string FailureText(const std::string& server, const grpc::Status& status, bool unreachable,
                        bool sent_token);

// Plaintext, or TLS (mutual with a client certificate) from the --tls-* flags. Throws
// std::runtime_error naming the file when one cannot be read.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(const ConnectionFlags& flags);

class Connection {
 public:
  // Creates the channel lazily; nothing is dialled until the first call. Plaintext, no token.
  explicit Connection(std::string server);
  // The server, token and TLS settings of `inv`. Throws std::runtime_error naming the file when
  // a TLS file cannot be read (the CLI's top level prints it).
  explicit Connection(const Invocation& inv);

  const std::string& server() const { return server_; }
  v1::Harness::Stub& stub() { return *stub_; }

  // Sets a deadline `seconds` from now on `context`.
  static void SetDeadline(grpc::ClientContext* context, double seconds);
  // SetDeadline, and the bearer token when there is one. Every call's context goes through it.
  void Prepare(grpc::ClientContext* context, double seconds) const;

  // FailureText for this connection's server, with whether the server could be reached.
  std::string Describe(const grpc::Status& status);
  // Prints Describe(status) on console.err and returns kExitUsage.
  int Fail(const grpc::Status& status, Console& console);

 private:
  std::string server_;
  std::string token_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Harness::Stub> stub_;
};

// "INVALID_ARGUMENT", "UNAVAILABLE", ...
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_CONNECTION_H_
