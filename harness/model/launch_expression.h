// Launch-size expressions of OpenCL solutions: integer arithmetic over a definition's axes, as
// written in launch.json ("ceil_div(n, 256) * 256", "batch * heads").
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := integer | axis | func '(' expr ',' expr ')' | '(' expr ')'
//   func    := ceil_div | round_up | min | max
//
// Values are int64; '/' and '%' truncate as in C. Evaluation (launch_plan.h) reports overflow and
// division by zero.
#ifndef KILN_HARNESS_MODEL_LAUNCH_EXPRESSION_H_
#define KILN_HARNESS_MODEL_LAUNCH_EXPRESSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/model/launch_plan.h"

namespace kiln {

struct LaunchExpression {
  std::string text;
  std::vector<kiln_launch::Op> ops;  // postfix; kPushAxis values index `axis_names`

  // A view for the plan evaluator; valid while this object is alive and unchanged.
  kiln_launch::Expr view() const {
    return kiln_launch::Expr{ops.data(), static_cast<int32_t>(ops.size()), text.c_str()};
  }
};

// Parses `text`; identifiers must be among `axis_names`. INVALID_ARGUMENT names `field`, the
// position and what was expected ("launch.json: global[0]: 'n +': expected a value at 3").
absl::StatusOr<LaunchExpression> ParseLaunchExpression(const std::string& text,
                                                       const std::vector<std::string>& axis_names,
                                                       const std::string& field);

// Evaluates with axis_values[i] for axis_names[i]. INVALID_ARGUMENT on overflow or division by
// zero, naming the expression.
absl::StatusOr<int64_t> EvaluateLaunchExpression(const LaunchExpression& expr,
                                                 const std::vector<int64_t>& axis_values);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_LAUNCH_EXPRESSION_H_
