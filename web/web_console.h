// kiln-harness --http-listen (and kiln-controller --http-listen): a read-only web console over
// the service's own RPCs.
//
// Every page is one or two kiln.v1.Harness calls made through an in-process channel to the
// harness's gRPC server, with the viewer's token as the call's "authorization: Bearer" metadata:
// the console sees exactly what the viewer's principal may see through the RPCs, nothing more.
// The token comes from an "Authorization: Bearer" header or from the cookie the login form sets;
// without --tokens (loopback only) every viewer is the operator. Every page is also JSON at the
// same path when the request's Accept names application/json. Nothing the console serves
// changes state. TLS (the harness's --tls-cert/--tls-key) when the harness serves TLS.
#ifndef KILN_WEB_WEB_CONSOLE_H_
#define KILN_WEB_WEB_CONSOLE_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "access/server_credentials.h"

namespace kiln {

struct WebConsoleOptions {
  // --http-listen as `access.listen` (port 0 picks a free one), with the service's tokens file
  // (none: every viewer is the operator 'local'), TLS files (HTTPS; mutual with tls_client_ca)
  // and --allow-insecure-remote, under the gRPC port's rules (CheckExposure).
  ListenAccess access;
  // Which service `channel` reaches: kiln.v1.Harness (node, definitions, runs) or
  // kiln.v1.Controller (campaigns).
  bool controller = false;
};

class WebConsole {
 public:
  // Binds and starts serving on a thread of its own. `channel` reaches the harness's service.
  static absl::StatusOr<std::unique_ptr<WebConsole>> Start(const WebConsoleOptions& options,
                                                           std::shared_ptr<grpc::Channel> channel);
  virtual ~WebConsole() = default;
  // "http://HOST:PORT" (or https) actually bound.
  virtual std::string url() const = 0;
  // Stops serving (also done by the destructor).
  virtual void Stop() = 0;
};

}  // namespace kiln

#endif  // KILN_WEB_WEB_CONSOLE_H_
