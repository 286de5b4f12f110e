// What the fleet front door's calls to its harnesses share (fleet_service.cc, fleet_blob.cc).
#ifndef KILN_CONTROLLER_FLEET_FLEET_CALLS_H_
#define KILN_CONTROLLER_FLEET_FLEET_CALLS_H_

#include <grpcpp/grpcpp.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace kiln::controller {

inline constexpr double kUnaryDeadlineS = 60;
// How long a call waits for a healthy harness when none is (the pool probes every harness
// every --harness-probe-s; a controller just started has heard from none yet).
inline constexpr double kHealthyWaitS = 30;

// `s` with the harness that answered it named.
inline grpc::Status Named(const grpc::Status& s, const std::string& harness) {
  if (s.ok()) return s;
  return grpc::Status(s.error_code(), absl::StrCat("harness ", harness, ": ", s.error_message()));
}

// A call that did not reach the harness or got no answer: the harness, not the request.
inline bool Broken(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

inline grpc::Status NoHarness() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                      "kiln-controller: no harness of the fleet is healthy now");
}

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_FLEET_FLEET_CALLS_H_
