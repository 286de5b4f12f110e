#include "harness/model/launch_expression.h"

#include <catch2/catch.hpp>

namespace kiln {
namespace {

const std::vector<std::string> kAxes = {"n", "heads", "block"};

int64_t Eval(const std::string& text, std::vector<int64_t> values = {1000, 8, 256}) {
  absl::StatusOr<LaunchExpression> e = ParseLaunchExpression(text, kAxes, "global[0]");
  INFO(e.status().ToString());
  REQUIRE(e.ok());
  absl::StatusOr<int64_t> v = EvaluateLaunchExpression(*e, values);
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return *v;
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<LaunchExpression> e = ParseLaunchExpression(text, kAxes, "global[0]");
  REQUIRE_FALSE(e.ok());
  return std::string(e.status().message());
}

std::string EvalError(const std::string& text, std::vector<int64_t> values = {1000, 8, 256}) {
  absl::StatusOr<LaunchExpression> e = ParseLaunchExpression(text, kAxes, "global[0]");
  REQUIRE(e.ok());
  absl::StatusOr<int64_t> v = EvaluateLaunchExpression(*e, values);
  REQUIRE_FALSE(v.ok());
  return std::string(v.status().message());
}

TEST_CASE("launch expressions follow arithmetic precedence over the axes") {
  CHECK(Eval("42") == 42);
  CHECK(Eval("n") == 1000);
  CHECK(Eval("n + heads * 2") == 1016);
  CHECK(Eval("(n + heads) * 2") == 2016);
  CHECK(Eval("n - heads - 2") == 990);
  CHECK(Eval("n / 3 % 7") == (1000 / 3) % 7);
  CHECK(Eval("-heads + 10") == 2);
  CHECK(Eval("  n*heads  ") == 8000);
}

TEST_CASE("launch expressions offer ceil_div, round_up, min and max") {
  CHECK(Eval("ceil_div(n, block)") == 4);
  CHECK(Eval("round_up(n, block)") == 1024);
  CHECK(Eval("round_up(1024, block)") == 1024);
  CHECK(Eval("min(n, 64)") == 64);
  CHECK(Eval("max(n, heads * block)") == 2048);
  CHECK(Eval("ceil_div(n, block) * block") == Eval("round_up(n, block)"));
  CHECK(Eval("ceil_div(0, block)") == 0);
}

TEST_CASE("a launch expression naming no axis of the definition is refused with its position") {
  std::string e = ParseError("n + batch");
  CHECK(e.find("global[0]") != std::string::npos);
  CHECK(e.find("'batch' is not an axis") != std::string::npos);
  CHECK(e.find("at 4") != std::string::npos);
}

TEST_CASE("malformed launch expressions are refused") {
  CHECK(ParseError("n +").find("expected a value") != std::string::npos);
  CHECK(ParseError("(n").find("expected ')'") != std::string::npos);
  CHECK(ParseError("n n").find("unexpected character") != std::string::npos);
  CHECK(ParseError("pow(n, 2)").find("unknown function 'pow'") != std::string::npos);
  CHECK(ParseError("min(n)").find("expected ','") != std::string::npos);
  CHECK(ParseError("99999999999999999999").find("too large") != std::string::npos);
  CHECK(ParseError("").find("expected a value") != std::string::npos);
}

TEST_CASE("evaluating a launch expression reports overflow and division by zero") {
  CHECK(EvalError("n / (heads - 8)").find("division by zero") != std::string::npos);
  CHECK(EvalError("n % 0").find("division by zero") != std::string::npos);
  CHECK(EvalError("ceil_div(n, 0)").find("must be positive") != std::string::npos);
  CHECK(EvalError("n * n", {int64_t{1} << 40, 1, 1}).find("overflow") != std::string::npos);
  CHECK(EvalError("n + n", {INT64_MAX, 1, 1}).find("overflow") != std::string::npos);
}

}  // namespace
}  // namespace kiln
