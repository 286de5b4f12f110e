#include "harness/model/validate.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "harness/model/json_interop.h"

namespace kiln {
namespace {

// The message starts with the field path, as validate.h promises.
void CheckInvalid(const absl::Status& s, const std::string& message_prefix) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StartsWith(std::string(s.message()), message_prefix));
}

v1::Definition FusedAddRmsNorm() {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(R"({
    "name": "fused_add_rmsnorm_h8",
    "op_type": "rmsnorm",
    "axes": {
      "batch_size": {"type": "var"},
      "hidden_size": {"type": "const", "value": 8}
    },
    "inputs": {
      "hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
      "residual": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
      "weight": {"shape": ["hidden_size"], "dtype": "bfloat16"},
      "eps": {"shape": null, "dtype": "float32"},
      "bias": {"shape": ["hidden_size"], "dtype": "float32", "optional": true}
    },
    "outputs": {
      "output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}
    },
    "reference": "def run(hidden_states, residual, weight, eps, bias): pass"
  })");
  REQUIRE(def.ok());
  return *def;
}

v1::Workload Batch(int64_t batch_size) {
  absl::StatusOr<v1::Workload> w = ParseWorkloadJson(R"({
    "uuid": "w0",
    "axes": {"batch_size": 4},
    "inputs": {
      "hidden_states": {"type": "random"},
      "residual": {"type": "random"},
      "weight": {"type": "safetensors", "path": "w.safetensors", "tensor_key": "weight"},
      "eps": {"type": "scalar", "value": 1e-6}
    }
  })");
  REQUIRE(w.ok());
  w->mutable_axes(0)->set_value(batch_size);
  return *w;
}

TEST_CASE("a well-formed definition and workload validate") {
  const v1::Definition def = FusedAddRmsNorm();
  CHECK(ValidateDefinition(def).ok());
  CHECK(ValidateWorkload(def, Batch(4), Limits{}).ok());
  // A batch of 0 empties every output: nothing to compute, compare or time.
  CheckInvalid(ValidateWorkload(def, Batch(0), Limits{}),
               "workload.axes: every output is empty (batch_size = 0)");
}

TEST_CASE("definition errors start with the path of the field") {
  v1::Definition def = FusedAddRmsNorm();
  SECTION("an output named like an input") {
    def.mutable_outputs(0)->set_name("residual");
    CheckInvalid(ValidateDefinition(def), "definition.outputs.residual: duplicate name");
  }
  SECTION("two inputs of one name") {
    def.mutable_inputs(1)->set_name("hidden_states");
    CheckInvalid(ValidateDefinition(def), "definition.inputs.hidden_states: duplicate name");
  }
  SECTION("a shape naming an unknown axis") {
    def.mutable_inputs(2)->set_shape(0, "hidden");
    CheckInvalid(ValidateDefinition(def),
                 "definition.inputs.weight.shape[0]: unknown axis 'hidden'");
  }
  SECTION("a negative const axis") {
    def.mutable_axes(1)->set_value(-8);
    CheckInvalid(ValidateDefinition(def), "definition.axes.hidden_size.value: -8 is negative");
  }
  SECTION("a zero const axis used in a shape") {
    def.mutable_axes(1)->set_value(0);
    CheckInvalid(ValidateDefinition(def), "definition.inputs.hidden_states.shape[1]: const axis");
  }
  SECTION("a duplicate axis") {
    *def.add_axes() = def.axes(0);
    CheckInvalid(ValidateDefinition(def), "definition.axes.batch_size: duplicate axis");
  }
  SECTION("no outputs") {
    def.clear_outputs();
    CheckInvalid(ValidateDefinition(def), "definition.outputs: ");
  }
  SECTION("no dtype") {
    def.mutable_outputs(0)->set_dtype(v1::DTYPE_UNSPECIFIED);
    CheckInvalid(ValidateDefinition(def), "definition.outputs.output.dtype: unknown dtype");
  }
  SECTION("a scalar with a shape") {
    def.mutable_inputs(3)->add_shape("hidden_size");
    CheckInvalid(ValidateDefinition(def), "definition.inputs.eps.shape: ");
  }
  SECTION("no name") {
    def.clear_name();
    CheckInvalid(ValidateDefinition(def), "definition.name: ");
  }
  SECTION("a native reference in python") {
    v1::Solution* ref = def.mutable_native_reference();
    ref->mutable_spec()->set_language("python");
    ref->mutable_spec()->set_entry_point("ref.py::run");
    v1::SourceFile* f = ref->add_sources();
    f->set_path("ref.py");
    f->set_content("def run(): pass");
    CheckInvalid(ValidateDefinition(def), "definition.native_reference.spec.language: 'python'");
    ref->mutable_spec()->set_language("cpp");
    CHECK(ValidateDefinition(def).ok());
    ref->mutable_spec()->set_entry_point("ref.cc::run");
    CheckInvalid(ValidateDefinition(def),
                 "definition.native_reference.spec.entry_point: 'ref.cc' is not among");
  }
  SECTION("a native reference without an entry point") {
    def.mutable_native_reference()->mutable_spec()->set_language("cuda");
    def.mutable_native_reference()->add_sources()->set_path("ref.cu");
    CheckInvalid(ValidateDefinition(def), "definition.native_reference.spec.entry_point: ");
  }
  SECTION("a matched ratio above one") {
    def.mutable_tolerance()->set_required_matched_ratio(2);
    CheckInvalid(ValidateDefinition(def), "definition.tolerance.required_matched_ratio: ");
  }
  SECTION("a negative atol") {
    def.mutable_tolerance()->set_atol(-1);
    CheckInvalid(ValidateDefinition(def), "definition.tolerance.atol: ");
  }
}

TEST_CASE("workload errors start with the path of the field") {
  const v1::Definition def = FusedAddRmsNorm();
  v1::Workload w = Batch(4);
  SECTION("a var axis missing") {
    w.clear_axes();
    CheckInvalid(ValidateWorkload(def, w, Limits{}, "workload[3]"),
                 "workload[3].axes: missing var axis 'batch_size'");
  }
  SECTION("an axis the definition does not have") {
    v1::AxisValue* a = w.add_axes();
    a->set_name("seq_len");
    a->set_value(3);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.axes.seq_len: not an axis");
  }
  SECTION("a const axis given") {
    v1::AxisValue* a = w.add_axes();
    a->set_name("hidden_size");
    a->set_value(8);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.axes.hidden_size: const axis");
  }
  SECTION("an axis given twice") {
    *w.add_axes() = w.axes(0);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.axes.batch_size: given twice");
  }
  SECTION("a negative axis value") {
    w.mutable_axes(0)->set_value(-1);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.axes.batch_size: -1 is negative");
  }
  SECTION("an unknown input") {
    v1::WorkloadInput* in = w.add_inputs();
    in->set_name("gamma");
    in->set_kind(v1::WorkloadInput::RANDOM);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.gamma: not an input");
  }
  SECTION("a missing input") {
    w.mutable_inputs()->DeleteSubrange(1, 1);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs: missing input 'residual'");
  }
  SECTION("an input given twice") {
    *w.add_inputs() = w.inputs(0);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.hidden_states: given twice");
  }
  SECTION("a scalar for a tensor input") {
    w.mutable_inputs(0)->set_kind(v1::WorkloadInput::SCALAR);
    w.mutable_inputs(0)->set_value_json("1.0");
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.hidden_states: a scalar");
  }
  SECTION("a scalar value that is not a number") {
    w.mutable_inputs(3)->set_value_json("\"tiny\"");
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.eps.value: ");
  }
  SECTION("an input of no kind") {
    w.mutable_inputs(0)->set_kind(v1::WorkloadInput::KIND_UNSPECIFIED);
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.hidden_states.type: ");
  }
  SECTION("a safetensors input without a path") {
    w.mutable_inputs(2)->clear_path();
    CheckInvalid(ValidateWorkload(def, w, Limits{}), "workload.inputs.weight.path: ");
  }
}

TEST_CASE("an optional input may be left out of a workload, and given") {
  const v1::Definition def = FusedAddRmsNorm();
  v1::Workload w = Batch(2);
  CHECK(ValidateWorkload(def, w, Limits{}).ok());
  v1::WorkloadInput* bias = w.add_inputs();
  bias->set_name("bias");
  bias->set_kind(v1::WorkloadInput::RANDOM);
  CHECK(ValidateWorkload(def, w, Limits{}).ok());
}

TEST_CASE("a workload over the byte limit is refused with both sizes") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(R"({
    "name": "copy", "op_type": "copy", "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}}, "reference": ""})");
  REQUIRE(def.ok());
  v1::Workload w;
  v1::AxisValue* n = w.add_axes();
  n->set_name("n");
  n->set_value(int64_t{5} << 27);  // 2 tensors x 4 bytes x 5 * 2^27 = 5 GiB
  v1::WorkloadInput* x = w.add_inputs();
  x->set_name("x");
  x->set_kind(v1::WorkloadInput::RANDOM);
  absl::Status s = ValidateWorkload(*def, w, Limits{}, "workload[2]");
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(s.message() == "workload[2]: tensors need 5.0 GiB, limit 4.0 GiB (kiln-harness --max-tensor-bytes)");

  Limits roomy;
  roomy.max_workload_bytes = int64_t{6} << 30;
  CHECK(ValidateWorkload(*def, w, roomy).ok());
}

TEST_CASE("axis values whose product overflows are refused, not wrapped") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(R"({
    "name": "outer", "op_type": "outer",
    "axes": {"m": {"type": "var"}, "n": {"type": "var"}},
    "inputs": {"x": {"shape": ["m", "n"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["m", "n", "m"], "dtype": "float4_e2m1"}}, "reference": ""})");
  REQUIRE(def.ok());
  v1::Workload w;
  for (const char* name : {"m", "n"}) {
    v1::AxisValue* a = w.add_axes();
    a->set_name(name);
    a->set_value(int64_t{1} << 40);
  }
  v1::WorkloadInput* x = w.add_inputs();
  x->set_name("x");
  x->set_kind(v1::WorkloadInput::RANDOM);
  absl::StatusOr<int64_t> bytes = WorkloadBytes(*def, w);
  REQUIRE(bytes.ok());
  CHECK(*bytes == INT64_MAX);
  CheckInvalid(ValidateWorkload(*def, w, Limits{}), "workload: tensors need ");
}

TEST_CASE("sizes past 8 EiB are reported as they are, not all as 8.0 EiB") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(R"({
    "name": "copy", "op_type": "copy", "axes": {"n": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}}, "reference": ""})");
  REQUIRE(def.ok());
  auto message = [&](int64_t n) {
    v1::Workload w;
    v1::AxisValue* a = w.add_axes();
    a->set_name("n");
    a->set_value(n);
    v1::WorkloadInput* x = w.add_inputs();
    x->set_name("x");
    x->set_kind(v1::WorkloadInput::RANDOM);
    return std::string(ValidateWorkload(*def, w, Limits{}).message());
  };
  // 2 tensors x 4 bytes: 2^62 elements need 32 EiB, 2^63 - 1 elements 64 EiB.
  CHECK(message(int64_t{1} << 62) == "workload: tensors need 32.0 EiB, limit 4.0 GiB (kiln-harness --max-tensor-bytes)");
  CHECK(message(INT64_MAX) == "workload: tensors need 64.0 EiB, limit 4.0 GiB (kiln-harness --max-tensor-bytes)");
  CHECK(message(int64_t{1} << 40) == "workload: tensors need 8.0 TiB, limit 4.0 GiB (kiln-harness --max-tensor-bytes)");
}

TEST_CASE("a workload whose every output is empty is refused; an empty input alone is not") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(R"({
    "name": "gather", "op_type": "gather",
    "axes": {"n": {"type": "var"}, "pages": {"type": "var"}},
    "inputs": {"x": {"shape": ["n"], "dtype": "float32"},
               "cache": {"shape": ["pages"], "dtype": "float32"}},
    "outputs": {"y": {"shape": ["n"], "dtype": "float32"}}, "reference": ""})");
  REQUIRE(def.ok());
  auto workload = [](int64_t n, int64_t pages) {
    v1::Workload w;
    for (const auto& [name, value] : {std::pair{"n", n}, std::pair{"pages", pages}}) {
      v1::AxisValue* a = w.add_axes();
      a->set_name(name);
      a->set_value(value);
    }
    for (const char* input : {"x", "cache"}) {
      v1::WorkloadInput* in = w.add_inputs();
      in->set_name(input);
      in->set_kind(v1::WorkloadInput::RANDOM);
    }
    return w;
  };
  CheckInvalid(ValidateWorkload(*def, workload(0, 4), Limits{}, "workloads[1]"),
               "workloads[1].axes: every output is empty (n = 0): there is nothing to compute");
  // flashinfer-trace has workloads with num_pages = 0 beside non-empty outputs: valid.
  CHECK(ValidateWorkload(*def, workload(16, 0), Limits{}).ok());
}

TEST_CASE("shapes resolve const and var axes in order") {
  const v1::Definition def = FusedAddRmsNorm();
  const v1::Workload w = Batch(3);
  absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, def.inputs(0), w);
  REQUIRE(shape.ok());
  CHECK(*shape == std::vector<int64_t>{3, 8});
  shape = ResolveShape(def, def.inputs(3), w);
  REQUIRE(shape.ok());
  CHECK(shape->empty());
  CHECK(NumElements({}) == 1);
  CHECK(NumElements({3, 8}) == 24);
  CHECK(NumElements({3, 0, 8}) == 0);

  v1::Workload no_axes = w;
  no_axes.clear_axes();
  CheckInvalid(ResolveShape(def, def.inputs(0), no_axes).status(), "workload.axes: missing var");
  v1::TensorSpec stray = def.outputs(0);
  stray.set_shape(0, "tokens");
  CheckInvalid(ResolveShape(def, stray, w).status(), "definition.outputs.output.shape[0]: ");
}

TEST_CASE("workload bytes count every input and output at its storage size") {
  const v1::Definition def = FusedAddRmsNorm();
  absl::StatusOr<int64_t> bytes = WorkloadBytes(def, Batch(3));
  REQUIRE(bytes.ok());
  // hidden_states, residual, output: 3*8 bf16 each; weight: 8 bf16; eps: one float32;
  // bias: 8 float32.
  CHECK(*bytes == 3 * 24 * 2 + 8 * 2 + 4 + 8 * 4);
}

}  // namespace
}  // namespace kiln
