// Bearer tokens to principals; the role checks applied to them.
#include "access/authenticator.h"

#include <catch2/catch.hpp>

#include "access/principal.h"
#include "harness/common/sha256.h"

namespace kiln {
namespace {

Authenticator TwoPrincipals() {
  return Authenticator::WithTokens({{{"red", Role::kTeam}, Sha256Hex("red-secret")},
                                    {{"ops", Role::kOperator}, Sha256Hex("ops-secret")}});
}

TEST_CASE("a known bearer token names its principal") {
  Authenticator auth = TwoPrincipals();
  auto red = auth.Authenticate("Bearer red-secret");
  REQUIRE(red.ok());
  CHECK(red->name == "red");
  CHECK(red->role == Role::kTeam);
  auto ops = auth.Authenticate("bearer ops-secret");  // the scheme is case-insensitive
  REQUIRE(ops.ok());
  CHECK(ops->role == Role::kOperator);
}

TEST_CASE("a missing, malformed or unknown token is UNAUTHENTICATED") {
  Authenticator auth = TwoPrincipals();
  for (const std::optional<std::string>& header :
       {std::optional<std::string>(), std::optional<std::string>("red-secret"),
        std::optional<std::string>("Basic cmVkOnNlY3JldA=="), std::optional<std::string>("Bearer "),
        std::optional<std::string>("Bearer red-secret2"),
        std::optional<std::string>("Bearer " + Sha256Hex("red-secret"))}) {
    auto who = auth.Authenticate(header);
    REQUIRE_FALSE(who.ok());
    CHECK(who.status().code() == absl::StatusCode::kUnauthenticated);
  }
}

TEST_CASE("without a tokens file every caller is the local operator") {
  Authenticator auth = Authenticator::Open();
  CHECK(auth.open());
  auto who = auth.Authenticate(std::nullopt);
  REQUIRE(who.ok());
  CHECK(who->name == "local");
  CHECK(who->role == Role::kOperator);
}

TEST_CASE("teams and agents see their own runs only; operators see every run") {
  const Principal red{"red", Role::kTeam};
  const Principal bot{"bot", Role::kAgent};
  const Principal ops{"ops", Role::kOperator};
  CHECK(MaySeeRun(red, "red"));
  CHECK_FALSE(MaySeeRun(red, "blue"));
  CHECK(MaySeeRun(bot, "bot"));
  CHECK_FALSE(MaySeeRun(bot, "red"));
  CHECK(MaySeeRun(ops, "red"));
  absl::Status denied = CheckRunAccess(red, "run-1", "blue");
  CHECK(denied.code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(denied.message()), !Catch::Contains("blue"));
}

TEST_CASE("scores of others are for teams and operators; definitions for operators") {
  CHECK(MaySeeOthersScores({"red", Role::kTeam}));
  CHECK_FALSE(MaySeeOthersScores({"bot", Role::kAgent}));
  CHECK(MaySeeOthersScores({"ops", Role::kOperator}));
  CHECK(RequireOperator({"red", Role::kTeam}, "x").code() == absl::StatusCode::kPermissionDenied);
  CHECK(RequireOperator({"ops", Role::kOperator}, "x").ok());
  CHECK(HasQuota({"red", Role::kTeam}));
  CHECK_FALSE(HasQuota({"ops", Role::kOperator}));
}

TEST_CASE("roles parse from their names only") {
  CHECK(*ParseRole("agent") == Role::kAgent);
  CHECK_FALSE(ParseRole("Operator").ok());
}

}  // namespace
}  // namespace kiln
