// What the CLI tells a person when a call fails: where the address came from when the harness
// cannot be reached, how to pass a token when it asks for one.
#include "client/connection.h"

#include <catch2/catch.hpp>

namespace kiln::cli {
namespace {

TEST_CASE("an unreachable harness names the address and where it comes from") {
  grpc::Status status(grpc::StatusCode::UNAVAILABLE, "DNS resolution failed for nosuch.invalid");
  const std::string text = FailureText("nosuch.invalid:50051", status, true, false);
  CHECK(text.rfind("kiln: cannot reach kiln-harness at nosuch.invalid:50051: DNS resolution", 0) ==
        0);
  CHECK(text.find("$KILN_SERVER") != std::string::npos);
  CHECK(text.find("--server") != std::string::npos);
}

TEST_CASE("a missing or unknown token says how to pass one") {
  grpc::Status status(grpc::StatusCode::UNAUTHENTICATED, "missing bearer token");
  const std::string missing = FailureText("h:1", status, false, false);
  CHECK(missing.rfind("kiln: UNAUTHENTICATED: missing bearer token", 0) == 0);
  CHECK(missing.find("pass --token TOKEN or set $KILN_TOKEN") != std::string::npos);
  const std::string unknown = FailureText("h:1", status, false, true);
  CHECK(unknown.find("does not know this token") != std::string::npos);
  // Other failures carry no hint.
  const std::string other =
      FailureText("h:1", grpc::Status(grpc::StatusCode::NOT_FOUND, "no run x"), false, true);
  CHECK(other == "kiln: NOT_FOUND: no run x");
}

}  // namespace
}  // namespace kiln::cli
