// How kiln-harness may be reached: TLS (optionally mutual) from the PEM files named in the
// options, plaintext only on loopback unless the operator insists (--allow-insecure-remote), and
// no remote clients at all without a tokens file.
#ifndef KILN_SERVER_SERVER_CREDENTIALS_H_
#define KILN_SERVER_SERVER_CREDENTIALS_H_

#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/harness_server.h"

namespace kiln {

// Whether HOST of "HOST:PORT" is a loopback address: 127.0.0.0/8, ::1 ("[::1]") or "localhost".
// Host names other than localhost count as remote.
bool IsLoopbackListen(const std::string& listen);

// The credentials to listen with. FAILED_PRECONDITION, naming the flag to add, for a remote
// address without --tokens, or without TLS and without --allow-insecure-remote; INVALID_ARGUMENT
// for half a key pair; FAILED_PRECONDITION naming the file that cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const HarnessOptions& options);

}  // namespace kiln

#endif  // KILN_SERVER_SERVER_CREDENTIALS_H_
