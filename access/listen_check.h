// Whether a service can listen on HOST:PORT, checked before gRPC tries: gRPC reports a port in
// use only as an internal error line on stderr. Binding the address first (and letting it go)
// names the cause. Used by kiln-harness and kiln-controller.
#ifndef KILN_ACCESS_LISTEN_CHECK_H_
#define KILN_ACCESS_LISTEN_CHECK_H_

#include <string>

#include "absl/status/status.h"

namespace kiln {

// OK when `listen` (HOST:PORT, [V6]:PORT; port 0 always passes) can be bound, or when it does
// not resolve (gRPC then says what it makes of it); else UNAVAILABLE "cannot listen on ADDRESS:
// the address is in use (another PROGRAM or another program listens there; ...)" or the
// system's reason.
absl::Status CheckListenAddress(const std::string& listen, const std::string& program);

}  // namespace kiln

#endif  // KILN_ACCESS_LISTEN_CHECK_H_
