// Semantic checks of definitions and workloads, and the shape arithmetic they share. Solutions
// are checked in validate_solution.cc.
#include "harness/model/validate.h"

#include <array>
#include <initializer_list>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/model/dtype.h"
#include "harness/model/validate_internal.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace validate_internal {

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

}  // namespace validate_internal

std::string FormatBytes(int64_t bytes) { return FormatBytes(static_cast<double>(bytes)); }

std::string FormatBytes(double bytes) {
  constexpr std::array<absl::string_view, 8> kUnits = {"KiB", "MiB", "GiB", "TiB",
                                                       "PiB", "EiB", "ZiB", "YiB"};
  if (bytes < 1024) return absl::StrCat(static_cast<int64_t>(bytes), " B");
  double value = bytes / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

namespace {

using validate_internal::Invalid;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

// Saturating arithmetic on sizes: a hostile workload may name axes whose product overflows.
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kMaxInt64 : out;
}
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? kMaxInt64 : out;
}

const v1::Axis* FindAxis(const v1::Definition& def, absl::string_view name) {
  for (const v1::Axis& a : def.axes()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const v1::TensorSpec* FindInput(const v1::Definition& def, absl::string_view name) {
  for (const v1::TensorSpec& t : def.inputs()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// "definition.inputs.x" or "definition.outputs.x", whichever list holds `t`.
std::string TensorPath(const v1::Definition& def, const v1::TensorSpec& t) {
  const bool is_input = FindInput(def, t.name()) != nullptr;
  return absl::StrCat("definition.", is_input ? "inputs." : "outputs.", t.name());
}

absl::Status ValidateAxes(const v1::Definition& def) {
  std::set<absl::string_view> seen;
  for (const v1::Axis& a : def.axes()) {
    const std::string path = absl::StrCat("definition.axes.", a.name());
    if (a.name().empty()) return Invalid("definition.axes", "an axis has an empty name");
    if (!seen.insert(a.name()).second) return Invalid(path, "duplicate axis");
    if (a.is_const() && a.value() < 0) {
      return Invalid(absl::StrCat(path, ".value"), absl::StrCat(a.value(), " is negative"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTensor(const v1::Definition& def, const v1::TensorSpec& t,
                            const std::string& path) {
  if (t.dtype() == v1::DTYPE_UNSPECIFIED || !v1::DType_IsValid(t.dtype())) {
    return Invalid(absl::StrCat(path, ".dtype"), "unknown dtype");
  }
  if (t.scalar() && t.shape_size() > 0) {
    return Invalid(absl::StrCat(path, ".shape"), "a scalar has no shape");
  }
  for (int i = 0; i < t.shape_size(); ++i) {
    const std::string dim_path = absl::StrCat(path, ".shape[", i, "]");
    const v1::Axis* axis = FindAxis(def, t.shape(i));
    if (axis == nullptr) return Invalid(dim_path, absl::StrCat("unknown axis '", t.shape(i), "'"));
    if (axis->is_const() && axis->value() == 0) {
      return Invalid(dim_path, absl::StrCat("const axis '", t.shape(i), "' is 0"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTensors(const v1::Definition& def) {
  std::set<absl::string_view> seen;
  for (const bool inputs : {true, false}) {
    const absl::string_view list = inputs ? "definition.inputs" : "definition.outputs";
    for (const v1::TensorSpec& t : inputs ? def.inputs() : def.outputs()) {
      if (t.name().empty()) return Invalid(list, "a tensor has an empty name");
      const std::string path = absl::StrCat(list, ".", t.name());
      if (!seen.insert(t.name()).second) {
        return Invalid(path, absl::StrCat("duplicate name '", t.name(),
                                          "' (inputs and outputs "
                                          "share one namespace)"));
      }
      if (absl::Status s = ValidateTensor(def, t, path); !s.ok()) return s;
    }
  }
  if (def.outputs_size() == 0) return Invalid("definition.outputs", "at least one output needed");
  return absl::OkStatus();
}

absl::Status ValidateTolerance(const v1::Tolerance& t) {
  auto finite_non_negative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!finite_non_negative(t.atol())) {
    return Invalid("definition.tolerance.atol", absl::StrCat(t.atol(), " is not >= 0"));
  }
  if (!finite_non_negative(t.rtol())) {
    return Invalid("definition.tolerance.rtol", absl::StrCat(t.rtol(), " is not >= 0"));
  }
  const double ratio = t.required_matched_ratio();
  if (!(ratio >= 0 && ratio <= 1)) {
    return Invalid("definition.tolerance.required_matched_ratio",
                   absl::StrCat(ratio, " is not within [0, 1]"));
  }
  return absl::OkStatus();
}

absl::Status ValidateNativeReference(const v1::Solution& s) {
  constexpr absl::string_view kPath = "definition.native_reference";
  const std::string& language = s.spec().language();
  if (language != "cpp" && language != "cuda") {
    return Invalid(absl::StrCat(kPath, ".spec.language"),
                   absl::StrCat("'", language, "' not allowed (cpp or cuda)"));
  }
  return validate_internal::ValidateSourcesAndEntryPoint(s, kPath, nullptr);
}

}  // namespace

absl::Status ValidateDefinition(const v1::Definition& def) {
  if (def.name().empty()) return Invalid("definition.name", "empty");
  if (absl::Status s = ValidateAxes(def); !s.ok()) return s;
  if (absl::Status s = ValidateTensors(def); !s.ok()) return s;
  if (def.has_native_reference()) {
    if (absl::Status s = ValidateNativeReference(def.native_reference()); !s.ok()) return s;
  }
  if (def.has_tolerance()) return ValidateTolerance(def.tolerance());
  return absl::OkStatus();
}

namespace {

absl::Status ValidateWorkloadAxes(const v1::Definition& def, const v1::Workload& w,
                                  const std::string& where) {
  std::set<absl::string_view> given;
  for (const v1::AxisValue& a : w.axes()) {
    const std::string path = absl::StrCat(where, ".axes.", a.name());
    const v1::Axis* axis = FindAxis(def, a.name());
    if (axis == nullptr) {
      return Invalid(path, absl::StrCat("not an axis of '", def.name(), "'"));
    }
    if (axis->is_const()) {
      return Invalid(path, absl::StrCat("const axis (", axis->value(), " in the definition)"));
    }
    if (!given.insert(a.name()).second) return Invalid(path, "given twice");
    if (a.value() < 0) return Invalid(path, absl::StrCat(a.value(), " is negative"));
  }
  for (const v1::Axis& axis : def.axes()) {
    if (!axis.is_const() && !given.contains(axis.name())) {
      return Invalid(absl::StrCat(where, ".axes"),
                     absl::StrCat("missing var axis '", axis.name(), "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateScalarValue(const std::string& value_json, const std::string& path) {
  const nlohmann::json value =
      nlohmann::json::parse(value_json, nullptr, /*allow_exceptions=*/false);
  if (value.is_number() || value.is_boolean()) return absl::OkStatus();
  constexpr size_t kShown = 40;  // value_json comes off the wire: quote only its start
  const std::string shown =
      value_json.size() > kShown ? absl::StrCat(value_json.substr(0, kShown), "...") : value_json;
  return Invalid(path, absl::StrCat("expected a number or bool, got '", shown, "'"));
}

absl::Status ValidateWorkloadInput(const v1::TensorSpec& spec, const v1::WorkloadInput& in,
                                   const std::string& path) {
  switch (in.kind()) {
    case v1::WorkloadInput::RANDOM:
      return absl::OkStatus();
    case v1::WorkloadInput::SCALAR:
      if (!spec.scalar()) return Invalid(path, "a scalar value given for a tensor input");
      return ValidateScalarValue(in.value_json(), absl::StrCat(path, ".value"));
    case v1::WorkloadInput::SAFETENSORS:
      if (in.path().empty()) return Invalid(absl::StrCat(path, ".path"), "empty");
      if (in.tensor_key().empty()) return Invalid(absl::StrCat(path, ".tensor_key"), "empty");
      return absl::OkStatus();
    default:
      return Invalid(absl::StrCat(path, ".type"), "expected random, scalar or safetensors");
  }
}

absl::Status ValidateWorkloadInputs(const v1::Definition& def, const v1::Workload& w,
                                    const std::string& where) {
  std::set<absl::string_view> given;
  for (const v1::WorkloadInput& in : w.inputs()) {
    const std::string path = absl::StrCat(where, ".inputs.", in.name());
    const v1::TensorSpec* spec = FindInput(def, in.name());
    if (spec == nullptr) return Invalid(path, absl::StrCat("not an input of '", def.name(), "'"));
    if (!given.insert(in.name()).second) return Invalid(path, "given twice");
    if (absl::Status s = ValidateWorkloadInput(*spec, in, path); !s.ok()) return s;
  }
  for (const v1::TensorSpec& t : def.inputs()) {
    if (!t.optional() && !given.contains(t.name())) {
      return Invalid(absl::StrCat(where, ".inputs"),
                     absl::StrCat("missing input '", t.name(), "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWorkload(const v1::Definition& def, const v1::Workload& w,
                              const Limits& limits, const std::string& where) {
  if (absl::Status s = ValidateWorkloadAxes(def, w, where); !s.ok()) return s;
  if (absl::Status s = ValidateWorkloadInputs(def, w, where); !s.ok()) return s;
  absl::StatusOr<int64_t> bytes = WorkloadBytes(def, w);
  if (!bytes.ok()) return Invalid(where, bytes.status().message());
  if (*bytes > limits.max_workload_bytes) {
    // The figure in floating point: byte counts past 2^63 saturate the exact sum.
    return Invalid(where, absl::StrCat("tensors need ", FormatBytes(WorkloadBytesApprox(def, w)),
                                       ", limit ", FormatBytes(limits.max_workload_bytes),
                                       " (kiln-harness --max-tensor-bytes)"));
  }
  // A workload whose every output is empty (an axis of 0 in each) computes nothing: a PASSED
  // verdict on it would compare nothing and time nothing.
  bool any_output = def.outputs().empty();
  std::string empty_axes;
  for (const v1::TensorSpec& t : def.outputs()) {
    absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, t, w);
    if (!shape.ok()) return shape.status();
    if (NumElements(*shape) > 0) any_output = true;
  }
  if (!any_output) {
    for (const v1::AxisValue& a : w.axes()) {
      if (a.value() == 0) absl::StrAppend(&empty_axes, empty_axes.empty() ? "" : ", ", a.name());
    }
    return Invalid(absl::StrCat(where, ".axes"),
                   absl::StrCat("every output is empty (", empty_axes.empty() ? "an axis" : empty_axes,
                                " = 0): there is nothing to compute, compare or time"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ResolveShape(const v1::Definition& def,
                                                  const v1::TensorSpec& t, const v1::Workload& w) {
  std::vector<int64_t> shape;
  shape.reserve(t.shape_size());
  for (int i = 0; i < t.shape_size(); ++i) {
    const std::string& name = t.shape(i);
    const v1::Axis* axis = FindAxis(def, name);
    if (axis == nullptr) {
      return Invalid(absl::StrCat(TensorPath(def, t), ".shape[", i, "]"),
                     absl::StrCat("unknown axis '", name, "'"));
    }
    if (axis->is_const()) {
      shape.push_back(axis->value());
      continue;
    }
    const v1::AxisValue* value = nullptr;
    for (const v1::AxisValue& a : w.axes()) {
      if (a.name() == name) value = &a;
    }
    if (value == nullptr) {
      return Invalid("workload.axes", absl::StrCat("missing var axis '", name, "'"));
    }
    if (value->value() < 0) {
      return Invalid(absl::StrCat("workload.axes.", name),
                     absl::StrCat(value->value(), " is negative"));
    }
    shape.push_back(value->value());
  }
  return shape;
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n = SaturatingMul(n, d);
  return n;
}

double WorkloadBytesApprox(const v1::Definition& def, const v1::Workload& w) {
  double total = 0;
  for (const auto* list : {&def.inputs(), &def.outputs()}) {
    for (const v1::TensorSpec& t : *list) {
      absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, t, w);
      if (!shape.ok()) continue;
      double n = 1;
      for (int64_t d : *shape) n *= static_cast<double>(d);
      total += n * DTypeBits(t.dtype()) / 8;
    }
  }
  return total;
}

namespace {

// Bytes of the tensors of `lists` for workload `w`, saturating at kMaxInt64.
absl::StatusOr<int64_t> TensorBytes(
    const v1::Definition& def, const v1::Workload& w,
    std::initializer_list<const google::protobuf::RepeatedPtrField<v1::TensorSpec>*> lists) {
  // DTypeStorageBytes multiplies by the bit width; beyond this many elements it would overflow.
  constexpr int64_t kMaxExactElements = kMaxInt64 / 64;
  int64_t total = 0;
  for (const auto* list : lists) {
    for (const v1::TensorSpec& t : *list) {
      absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, t, w);
      if (!shape.ok()) return shape.status();
      const int64_t n = NumElements(*shape);
      total =
          SaturatingAdd(total, n > kMaxExactElements ? kMaxInt64 : DTypeStorageBytes(t.dtype(), n));
    }
  }
  return total;
}

}  // namespace

absl::StatusOr<int64_t> WorkloadBytes(const v1::Definition& def, const v1::Workload& w) {
  return TensorBytes(def, w, {&def.inputs(), &def.outputs()});
}

absl::StatusOr<int64_t> OutputBytes(const v1::Definition& def, const v1::Workload& w) {
  return TensorBytes(def, w, {&def.outputs()});
}

}  // namespace kiln
