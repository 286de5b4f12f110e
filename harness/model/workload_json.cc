// Workload documents and the JSONL files that carry them. A scalar input's value is kept as the
// JSON text of the value (value_json), so 0.1352337747812271 and 1 vs 1.0 survive a round trip.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/model/json_interop.h"
#include "harness/model/json_objects.h"

namespace kiln {
namespace json_internal {
namespace {

absl::Status ReadInput(const Json& j, absl::string_view path, v1::WorkloadInput* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  std::string type;
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "type", path, &type));
  if (type == "random") {
    out->set_kind(v1::WorkloadInput::RANDOM);
  } else if (type == "scalar") {
    out->set_kind(v1::WorkloadInput::SCALAR);
    const Json* value = nullptr;
    KILN_JSON_RETURN_IF_ERROR(Require(j, "value", path, &value));
    if (!value->is_number() && !value->is_boolean()) {
      return FieldError(Child(path, "value"),
                        absl::StrCat("expected a number or bool, got ", TypeName(*value)));
    }
    out->set_value_json(Dump(*value, -1));
  } else if (type == "safetensors") {
    out->set_kind(v1::WorkloadInput::SAFETENSORS);
    KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "path", path, out->mutable_path()));
    KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "tensor_key", path, out->mutable_tensor_key()));
  } else {
    return FieldError(
        Child(path, "type"),
        absl::StrCat("expected 'random', 'scalar' or 'safetensors', got '", type, "'"));
  }
  return absl::OkStatus();
}

Json WriteInput(const v1::WorkloadInput& in) {
  Json j = Json::object();
  switch (in.kind()) {
    case v1::WorkloadInput::RANDOM:
      j["type"] = "random";
      break;
    case v1::WorkloadInput::SCALAR: {
      j["type"] = "scalar";
      // value_json is produced by ReadInput or by kiln itself; should it not parse, the text is
      // kept as a string rather than lost.
      Json value = Json::parse(in.value_json(), nullptr, /*allow_exceptions=*/false);
      j["value"] = value.is_discarded() ? Json(in.value_json()) : std::move(value);
      break;
    }
    case v1::WorkloadInput::SAFETENSORS:
      j["type"] = "safetensors";
      j["path"] = in.path();
      j["tensor_key"] = in.tensor_key();
      break;
    default:
      j["type"] = "unspecified";
      break;
  }
  return j;
}

}  // namespace

absl::Status ReadWorkload(const Json& j, absl::string_view path, v1::Workload* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "uuid", path, out->mutable_uuid()));
  const Json* axes = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "axes", path, &axes));
  const std::string axes_path = Child(path, "axes");
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(*axes, axes_path));
  for (const auto& [name, value] : axes->items()) {
    v1::AxisValue* axis = out->add_axes();
    axis->set_name(name);
    int64_t v = 0;
    KILN_JSON_RETURN_IF_ERROR(ReadInt(value, Child(axes_path, name), &v));
    axis->set_value(v);
  }
  const Json* inputs = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "inputs", path, &inputs));
  const std::string inputs_path = Child(path, "inputs");
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(*inputs, inputs_path));
  for (const auto& [name, value] : inputs->items()) {
    v1::WorkloadInput* input = out->add_inputs();
    input->set_name(name);
    KILN_JSON_RETURN_IF_ERROR(ReadInput(value, Child(inputs_path, name), input));
  }
  return absl::OkStatus();
}

Json WriteWorkload(const v1::Workload& w) {
  Json axes = Json::object();
  for (const v1::AxisValue& a : w.axes()) axes[a.name()] = a.value();
  Json inputs = Json::object();
  for (const v1::WorkloadInput& in : w.inputs()) inputs[in.name()] = WriteInput(in);
  Json j = Json::object();
  j["uuid"] = w.uuid();
  j["axes"] = std::move(axes);
  j["inputs"] = std::move(inputs);
  return j;
}

}  // namespace json_internal

namespace {

using json_internal::Json;

// A workload line of a JSONL file: a bare workload, or a trace wrapping one. When
// `definition_name` is non-empty a trace's "definition" must equal it.
absl::Status ReadWorkloadDocument(const Json& doc, absl::string_view definition_name,
                                  v1::Workload* out) {
  const Json* wrapped = json_internal::Find(doc, "workload");
  if (wrapped == nullptr) return json_internal::ReadWorkload(doc, "workload", out);
  if (!definition_name.empty()) {
    std::string definition;
    KILN_JSON_RETURN_IF_ERROR(
        json_internal::ReadOptionalStringMember(doc, "definition", "", &definition));
    if (definition != definition_name) {
      return json_internal::FieldError(
          "definition", absl::StrCat("'", definition, "' but expected '", definition_name, "'"));
    }
  }
  return json_internal::ReadWorkload(*wrapped, "workload", out);
}

}  // namespace

absl::StatusOr<v1::Workload> ParseWorkloadJson(std::string_view json) {
  absl::StatusOr<Json> doc = json_internal::ParseDocument(json_internal::AsAbsl(json));
  if (!doc.ok()) return doc.status();
  v1::Workload w;
  KILN_JSON_RETURN_IF_ERROR(ReadWorkloadDocument(*doc, "", &w));
  return w;
}

std::string WorkloadToJson(const v1::Workload& w, int indent) {
  return json_internal::Dump(json_internal::WriteWorkload(w), indent);
}

absl::StatusOr<std::vector<v1::Workload>> ParseWorkloadsJsonl(std::string_view content,
                                                              std::string_view definition_name) {
  std::vector<v1::Workload> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(json_internal::AsAbsl(content), '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    absl::StatusOr<Json> doc = json_internal::ParseDocument(line);
    absl::Status status = doc.status();
    v1::Workload w;
    if (status.ok())
      status = ReadWorkloadDocument(*doc, json_internal::AsAbsl(definition_name), &w);
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("line ", line_number, ": ", status.message()));
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace kiln
