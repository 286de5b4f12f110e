// Shared fixtures of the Level Zero tests: a vector-add definition and its OpenCL solution.
#ifndef KILN_TESTS_UNIT_LEVEL_ZERO_LEVEL_ZERO_TEST_SUPPORT_H_
#define KILN_TESTS_UNIT_LEVEL_ZERO_LEVEL_ZERO_TEST_SUPPORT_H_

#include <string>

#include "kiln/v1/types.pb.h"

namespace kiln::testing {

// vector_add: inputs x, y [n] float32 and scalar alpha float32; output out [n]; axis n var,
// axis block const 256.
inline v1::Definition VectorAddDefinition() {
  v1::Definition def;
  def.set_name("vector_add");
  v1::Axis* n = def.add_axes();
  n->set_name("n");
  v1::Axis* block = def.add_axes();
  block->set_name("block");
  block->set_is_const(true);
  block->set_value(256);
  for (const char* name : {"x", "y"}) {
    v1::TensorSpec* t = def.add_inputs();
    t->set_name(name);
    t->set_dtype(v1::DTYPE_FLOAT32);
    t->add_shape("n");
  }
  v1::TensorSpec* alpha = def.add_inputs();
  alpha->set_name("alpha");
  alpha->set_dtype(v1::DTYPE_FLOAT32);
  alpha->set_scalar(true);
  v1::TensorSpec* out = def.add_outputs();
  out->set_name("out");
  out->set_dtype(v1::DTYPE_FLOAT32);
  out->add_shape("n");
  return def;
}

inline constexpr char kVectorAddKernel[] = R"(__kernel void vector_add(
    __global const float* x, __global const float* y, float alpha, __global float* out, int n) {
  int i = get_global_id(0);
  if (i < n) out[i] = alpha * x[i] + y[i];
}
)";

inline constexpr char kVectorAddLaunch[] = R"json({
  "args": [{"input": "x"}, {"input": "y"}, {"input": "alpha"}, {"output": "out"},
           {"axis": "n", "type": "int"}],
  "global": ["round_up(n, block)"],
  "local": ["block"]
})json";

inline v1::Solution VectorAddSolution(const std::string& kernel = kVectorAddKernel,
                                      const std::string& launch = kVectorAddLaunch) {
  v1::Solution s;
  s.set_name("vector_add_opencl");
  s.set_definition("vector_add");
  s.mutable_spec()->set_language("opencl");
  s.mutable_spec()->set_entry_point("kernel.cl::vector_add");
  s.mutable_spec()->add_target_hardware("Intel Arc B580");
  v1::SourceFile* k = s.add_sources();
  k->set_path("kernel.cl");
  k->set_content(kernel);
  v1::SourceFile* l = s.add_sources();
  l->set_path("launch.json");
  l->set_content(launch);
  return s;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_LEVEL_ZERO_LEVEL_ZERO_TEST_SUPPORT_H_
