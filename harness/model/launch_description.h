// The launch description of an OpenCL solution: which kernel to run, what each of its
// parameters is bound to, and its global and local sizes as expressions of the definition's
// axes. It travels as a source file named launch.json, so the Solution JSON stays exactly
// flashinfer-bench's:
//
//   {"kernel": "vector_add",                      // optional: the entry point's function
//    "args": [{"input": "x"}, {"input": "y"},     // tensor -> __global pointer; scalar -> value
//             {"output": "out"},
//             {"axis": "n", "type": "int"},       // int | uint | long | ulong (default int)
//             {"value": "n / 4", "type": "uint"}, // any launch expression
//             {"local": "256 * 4"}],              // a __local buffer of that many bytes
//    "global": ["round_up(n, 256)"],              // 1 to 3 dimensions; strings or integers
//    "local": [256]}                              // optional: else the driver picks
//
// Parsing binds every name to the definition's calling order (inputs, then outputs), so the
// result is a complete kiln_launch::Plan (launch_plan.h).
#ifndef KILN_HARNESS_MODEL_LAUNCH_DESCRIPTION_H_
#define KILN_HARNESS_MODEL_LAUNCH_DESCRIPTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/model/launch_expression.h"
#include "harness/model/launch_plan.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// The source path that holds an OpenCL solution's launch description.
inline constexpr char kLaunchDescriptionPath[] = "launch.json";

struct LaunchDescription {
  struct Tensor {
    std::string name;
    int32_t dtype = 0;  // kiln_dtype
    int32_t ndim = 0;
  };
  struct Axis {
    std::string name;
    int32_t tensor = -1;  // -1: a const axis (constant), or a var axis in no shape (unusable)
    int32_t dim = 0;
    int64_t constant = 0;
  };
  struct Argument {
    int32_t kind = kiln_launch::kBuffer;
    int32_t tensor = -1;
    int32_t bytes = 0;
    bool is_signed = true;
    LaunchExpression expr;
  };

  std::string kernel_name;
  std::vector<Tensor> tensors;  // the entry point's arguments: inputs, then outputs
  std::vector<Axis> axes;       // the definition's axes, in order
  std::vector<Argument> args;   // the kernel's parameters, in order
  std::vector<LaunchExpression> global;
  std::vector<LaunchExpression> local;  // empty, or one per global dimension
};

// Parses launch.json for `definition`. `default_kernel` names the kernel when "kernel" is
// absent. INVALID_ARGUMENT names the offending field ("launch.json: args[1].input: 'z' is not an
// input of definition 'vector_add'").
absl::StatusOr<LaunchDescription> ParseLaunchDescription(const std::string& json_text,
                                                         const v1::Definition& definition,
                                                         const std::string& default_kernel);

// launch.json's content in `solution`; INVALID_ARGUMENT when it is missing.
absl::StatusOr<std::string> LaunchDescriptionSource(const v1::Solution& solution);

// The plan of a description, for the evaluator in launch_plan.h. Holds pointers into
// `description`, which must outlive it and stay unchanged.
class LaunchPlanView {
 public:
  explicit LaunchPlanView(const LaunchDescription& description);
  LaunchPlanView(const LaunchPlanView&) = delete;
  LaunchPlanView& operator=(const LaunchPlanView&) = delete;
  const kiln_launch::Plan& plan() const { return plan_; }

 private:
  std::vector<kiln_launch::TensorSignature> tensors_;
  std::vector<kiln_launch::AxisSource> axes_;
  std::vector<kiln_launch::ArgBinding> args_;
  kiln_launch::Plan plan_{};
};

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_LAUNCH_DESCRIPTION_H_
