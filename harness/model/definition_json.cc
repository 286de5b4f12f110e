// Definition documents. The order of `inputs` and `outputs` keys is the calling order, and the
// order of top-level keys is recorded in Definition.json_keys so that export writes back the
// document it read (dataset files differ in where "description" and "constraints" sit).
#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "harness/model/dtype.h"
#include "harness/model/json_interop.h"
#include "harness/model/json_objects.h"

namespace kiln {
namespace json_internal {
namespace {

constexpr std::array<absl::string_view, 12> kKnownKeys = {
    "name",      "op_type",          "description", "tags",       "axes",
    "constraints", "inputs",         "outputs",     "reference",  "native_reference",
    "tolerance", "kernelbench"};

// flashinfer-bench's canonical order, used when a Definition was not read from JSON.
constexpr std::array<absl::string_view, 9> kCanonicalKeys = {"name",   "op_type", "description",
                                                             "tags",   "axes",    "constraints",
                                                             "inputs", "outputs", "reference"};

constexpr std::array<absl::string_view, 4> kRequiredKeys = {"name", "axes", "inputs", "outputs"};

bool IsRequired(absl::string_view key) {
  return std::find(kRequiredKeys.begin(), kRequiredKeys.end(), key) != kRequiredKeys.end();
}

absl::Status ReadAxis(const Json& j, absl::string_view path, v1::Axis* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  std::string type;
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "type", path, &type));
  if (type == "const") {
    out->set_is_const(true);
    const Json* value = nullptr;
    KILN_JSON_RETURN_IF_ERROR(Require(j, "value", path, &value));
    int64_t v = 0;
    KILN_JSON_RETURN_IF_ERROR(ReadInt(*value, Child(path, "value"), &v));
    out->set_value(v);
  } else if (type != "var") {
    return FieldError(Child(path, "type"),
                      absl::StrCat("expected 'const' or 'var', got '", type, "'"));
  }
  return ReadOptionalStringMember(j, "description", path, out->mutable_description());
}

absl::Status ReadTensor(const Json& j, absl::string_view path, v1::TensorSpec* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  const Json* shape = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "shape", path, &shape));
  if (shape->is_null()) {
    out->set_scalar(true);
  } else {
    KILN_JSON_RETURN_IF_ERROR(ReadStringList(*shape, Child(path, "shape"), out->mutable_shape()));
  }
  std::string dtype_name;
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "dtype", path, &dtype_name));
  absl::StatusOr<v1::DType> dtype = ParseDType(dtype_name);
  if (!dtype.ok()) {
    return FieldError(Child(path, "dtype"), absl::StrCat("unknown dtype '", dtype_name, "'"));
  }
  out->set_dtype(*dtype);
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "description", path, out->mutable_description()));
  if (const Json* optional = Find(j, "optional"); optional != nullptr && !optional->is_null()) {
    bool value = false;
    KILN_JSON_RETURN_IF_ERROR(ReadBool(*optional, Child(path, "optional"), &value));
    out->set_optional(value);
  }
  return absl::OkStatus();
}

// An object of named entries ({"batch_size": {...}, ...}) into `out`, in key order.
template <typename Element>
absl::Status ReadNamedObjects(const Json& j, absl::string_view path,
                              google::protobuf::RepeatedPtrField<Element>* out,
                              absl::Status (*read_one)(const Json&, absl::string_view, Element*)) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  for (const auto& [name, value] : j.items()) {
    Element* element = out->Add();
    element->set_name(name);
    KILN_JSON_RETURN_IF_ERROR(read_one(value, Child(path, name), element));
  }
  return absl::OkStatus();
}

// A number member of `obj`, left unchanged when absent.
absl::Status ReadOptionalNumber(const Json& obj, absl::string_view key, absl::string_view path,
                                double* out) {
  const Json* value = Find(obj, key);
  if (value == nullptr) return absl::OkStatus();
  return ReadMetric(*value, Child(path, key), out);
}

// Keys left out take kiln's defaults: atol = rtol = 1e-2, required_matched_ratio = 1.
absl::Status ReadTolerance(const Json& j, absl::string_view path, v1::Tolerance* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  double atol = 1e-2, rtol = 1e-2, ratio = 1.0;
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalNumber(j, "atol", path, &atol));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalNumber(j, "rtol", path, &rtol));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalNumber(j, "required_matched_ratio", path, &ratio));
  out->set_atol(atol);
  out->set_rtol(rtol);
  out->set_required_matched_ratio(ratio);
  return absl::OkStatus();
}

// {"level", "problem_id", "problem_name", "file", "inputs_source"}: level, id and
// inputs_source are required.
absl::Status ReadKernelBench(const Json& j, absl::string_view path, v1::KernelBenchProblem* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  const Json* value = nullptr;
  int64_t number = 0;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "level", path, &value));
  KILN_JSON_RETURN_IF_ERROR(ReadInt(*value, Child(path, "level"), &number));
  if (number < 1 || number > 4) return FieldError(Child(path, "level"), "expected 1 to 4");
  out->set_level(static_cast<int32_t>(number));
  KILN_JSON_RETURN_IF_ERROR(Require(j, "problem_id", path, &value));
  KILN_JSON_RETURN_IF_ERROR(ReadInt(*value, Child(path, "problem_id"), &number));
  if (number < 0) return FieldError(Child(path, "problem_id"), "must not be negative");
  out->set_problem_id(static_cast<int32_t>(number));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "problem_name", path, out->mutable_problem_name()));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "file", path, out->mutable_file()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadStringMember(j, "inputs_source", path, out->mutable_inputs_source()));
  return absl::OkStatus();
}

Json WriteKernelBench(const v1::KernelBenchProblem& k) {
  Json j = Json::object();
  j["level"] = k.level();
  j["problem_id"] = k.problem_id();
  j["problem_name"] = k.problem_name();
  j["file"] = k.file();
  j["inputs_source"] = k.inputs_source();
  return j;
}

absl::Status ReadMember(const Json& value, absl::string_view key, v1::Definition* out) {
  const std::string path = Child("definition", key);
  if (key == "name") return ReadString(value, path, out->mutable_name());
  if (key == "op_type") return ReadString(value, path, out->mutable_op_type());
  if (key == "description") return ReadString(value, path, out->mutable_description());
  if (key == "reference") return ReadString(value, path, out->mutable_reference());
  if (key == "tags") return ReadStringList(value, path, out->mutable_tags());
  if (key == "constraints") return ReadStringList(value, path, out->mutable_constraints());
  if (key == "axes") return ReadNamedObjects(value, path, out->mutable_axes(), ReadAxis);
  if (key == "inputs") return ReadNamedObjects(value, path, out->mutable_inputs(), ReadTensor);
  if (key == "outputs") return ReadNamedObjects(value, path, out->mutable_outputs(), ReadTensor);
  if (key == "native_reference") return ReadSolution(value, path, out->mutable_native_reference());
  if (key == "tolerance") return ReadTolerance(value, path, out->mutable_tolerance());
  if (key == "kernelbench") return ReadKernelBench(value, path, out->mutable_kernelbench());
  return absl::OkStatus();
}

Json WriteAxis(const v1::Axis& a) {
  Json j = Json::object();
  j["type"] = a.is_const() ? "const" : "var";
  if (a.is_const()) j["value"] = a.value();
  if (!a.description().empty()) j["description"] = a.description();
  return j;
}

Json WriteTensor(const v1::TensorSpec& t) {
  Json j = Json::object();
  if (t.scalar()) {
    j["shape"] = nullptr;
  } else {
    j["shape"] = Json::array();
    for (const std::string& axis : t.shape()) j["shape"].push_back(axis);
  }
  j["dtype"] = std::string(DTypeName(t.dtype()));
  if (!t.description().empty()) j["description"] = t.description();
  if (t.has_optional()) j["optional"] = t.optional();
  return j;
}

Json WriteStrings(const google::protobuf::RepeatedPtrField<std::string>& list) {
  Json j = Json::array();
  for (const std::string& s : list) j.push_back(s);
  return j;
}

Json WriteMember(const v1::Definition& def, absl::string_view key) {
  if (key == "name") return def.name();
  if (key == "op_type") return def.op_type();
  if (key == "description") return def.description();
  if (key == "reference") return def.reference();
  if (key == "tags") return WriteStrings(def.tags());
  if (key == "constraints") return WriteStrings(def.constraints());
  Json j = Json::object();
  if (key == "axes") {
    for (const v1::Axis& a : def.axes()) j[a.name()] = WriteAxis(a);
  } else if (key == "inputs" || key == "outputs") {
    for (const v1::TensorSpec& t : key == "inputs" ? def.inputs() : def.outputs()) {
      j[t.name()] = WriteTensor(t);
    }
  } else if (key == "native_reference") {
    j = WriteSolution(def.native_reference());
  } else if (key == "kernelbench") {
    j = WriteKernelBench(def.kernelbench());
  } else if (key == "tolerance") {
    j["atol"] = WriteMetric(def.tolerance().atol());
    j["rtol"] = WriteMetric(def.tolerance().rtol());
    j["required_matched_ratio"] = WriteMetric(def.tolerance().required_matched_ratio());
  }
  return j;
}

// Whether `key` is written when the source document did not name it.
bool WrittenUnlisted(const v1::Definition& def, absl::string_view key, bool from_json) {
  if (key == "name" || key == "axes" || key == "inputs" || key == "outputs") return true;
  if (key == "op_type") return !from_json || !def.op_type().empty();
  if (key == "reference") return !from_json || !def.reference().empty();
  if (key == "description") return !from_json || !def.description().empty();
  if (key == "tags") return !from_json || !def.tags().empty();
  if (key == "constraints") return !def.constraints().empty();
  return false;
}

Json WriteDefinition(const v1::Definition& def, bool export_kiln_extensions) {
  // "kernelbench" is written whenever it is set, like the reference: it says how the
  // definition's inputs are made, so no copy of the definition may lose it.
  auto is_extension = [](absl::string_view key) {
    return key == "native_reference" || key == "tolerance";
  };
  auto extension_present = [&](absl::string_view key) {
    return export_kiln_extensions &&
           (key == "native_reference" ? def.has_native_reference() : def.has_tolerance());
  };
  Json j = Json::object();
  for (const std::string& key : def.json_keys()) {
    if (j.contains(key) ||
        std::find(kKnownKeys.begin(), kKnownKeys.end(), key) == kKnownKeys.end()) {
      continue;
    }
    if (is_extension(key) && !extension_present(key)) continue;
    j[key] = WriteMember(def, key);
  }
  const bool from_json = !def.json_keys().empty();
  for (absl::string_view key : kCanonicalKeys) {
    if (!j.contains(key) && WrittenUnlisted(def, key, from_json)) {
      j[std::string(key)] = WriteMember(def, key);
    }
  }
  for (absl::string_view key : {"native_reference", "tolerance"}) {
    if (!j.contains(key) && extension_present(key)) j[std::string(key)] = WriteMember(def, key);
  }
  if (!j.contains("kernelbench") && def.has_kernelbench()) {
    j["kernelbench"] = WriteMember(def, "kernelbench");
  }
  return j;
}

absl::Status ReadDefinition(const Json& j, v1::Definition* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, "definition"));
  for (const auto& [key, value] : j.items()) {
    if (std::find(kKnownKeys.begin(), kKnownKeys.end(), key) == kKnownKeys.end()) continue;
    // flashinfer-bench writes unset optional fields as null: treated as absent.
    if (value.is_null() && !IsRequired(key)) continue;
    out->add_json_keys(key);
    KILN_JSON_RETURN_IF_ERROR(ReadMember(value, key, out));
  }
  for (absl::string_view key : kRequiredKeys) {
    if (Find(j, key) == nullptr) return FieldError(Child("definition", key), "missing");
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace json_internal

absl::StatusOr<v1::Definition> ParseDefinitionJson(std::string_view json) {
  absl::StatusOr<json_internal::Json> doc =
      json_internal::ParseDocument(json_internal::AsAbsl(json));
  if (!doc.ok()) return doc.status();
  v1::Definition def;
  KILN_JSON_RETURN_IF_ERROR(json_internal::ReadDefinition(*doc, &def));
  return def;
}

std::string DefinitionToJson(const v1::Definition& def, bool export_kiln_extensions, int indent) {
  return json_internal::Dump(json_internal::WriteDefinition(def, export_kiln_extensions), indent);
}

}  // namespace kiln
