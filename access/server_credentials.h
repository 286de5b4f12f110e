// How kiln-harness and kiln-controller may be reached: TLS (optionally mutual) from the PEM files
// named in the options, plaintext only on loopback unless the operator insists
// (--allow-insecure-remote), and no remote clients at all without a tokens file.
#ifndef KILN_ACCESS_SERVER_CREDENTIALS_H_
#define KILN_ACCESS_SERVER_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace kiln {

// What a server listens on and with which access flags (the same flag names in both programs).
struct ListenAccess {
  std::string listen;         // HOST:PORT
  std::string tokens_file;    // --tokens; empty: loopback only, every caller an operator
  std::string tls_cert;       // --tls-cert (PEM); with tls_key: serve TLS
  std::string tls_key;        // --tls-key (PEM)
  std::string tls_client_ca;  // --tls-client-ca (PEM): clients must present a certificate it signed
  bool allow_insecure_remote = false;  // --allow-insecure-remote: plaintext on a remote address
};

// Whether HOST of "HOST:PORT" is a loopback address: 127.0.0.0/8, ::1 ("[::1]") or "localhost".
// Host names other than localhost count as remote.
bool IsLoopbackListen(const std::string& listen);

// OK on a loopback address; elsewhere FAILED_PRECONDITION, naming the flag to add, without
// --tokens, or without TLS (--tls-cert) and without --allow-insecure-remote. Also applies to the
// web consoles (--http-listen).
absl::Status CheckExposure(const ListenAccess& access);

// The credentials to listen with. FAILED_PRECONDITION, naming the flag to add, for a remote
// address without --tokens, or without TLS and without --allow-insecure-remote; INVALID_ARGUMENT
// for half a key pair; FAILED_PRECONDITION naming the file that cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ListenAccess& access);

// The client side: plaintext when no file is named, else TLS trusting the PEM CA `ca` (the
// system's trust store when empty), with the client certificate `cert` and key `key` for mutual
// TLS. `flag` is the flags' common prefix, for errors ("--tls" names --tls-ca, --tls-cert,
// --tls-key): INVALID_ARGUMENT for half a key pair, FAILED_PRECONDITION naming a file that
// cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const std::string& ca, const std::string& cert, const std::string& key,
    const std::string& flag = "--tls");

}  // namespace kiln

#endif  // KILN_ACCESS_SERVER_CREDENTIALS_H_
