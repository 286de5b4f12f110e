// Solution documents. Keys are written in the order name, definition, author, description, spec,
// sources, as kiln's own files have them (flashinfer-bench's model puts description last; order
// carries no meaning for either reader). Every field of flashinfer-bench's BuildSpec is kept
// (spec.binding and destination_passing_style only when present); keys neither schema has are
// ignored on input.
#include "absl/strings/str_cat.h"
#include "harness/model/json_interop.h"
#include "harness/model/json_objects.h"

namespace kiln {
namespace json_internal {
namespace {

absl::Status ReadBuildSpec(const Json& j, absl::string_view path, v1::BuildSpec* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "language", path, out->mutable_language()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringListMember(j, "target_hardware", path, out->mutable_target_hardware()));
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "entry_point", path, out->mutable_entry_point()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringListMember(j, "dependencies", path, out->mutable_dependencies()));
  if (const Json* dps = Find(j, "destination_passing_style"); dps != nullptr && !dps->is_null()) {
    bool value = true;
    KILN_JSON_RETURN_IF_ERROR(ReadBool(*dps, Child(path, "destination_passing_style"), &value));
    out->set_destination_passing_style(value);
  }
  if (const Json* binding = Find(j, "binding"); binding != nullptr && !binding->is_null()) {
    if (!binding->is_string()) {
      return FieldError(Child(path, "binding"),
                        absl::StrCat("expected a string, got ", TypeName(*binding)));
    }
    out->set_binding(binding->get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status ReadSources(const Json& j, absl::string_view path, v1::Solution* out) {
  if (!j.is_array()) return FieldError(path, absl::StrCat("expected an array, got ", TypeName(j)));
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string where = Element(path, i);
    v1::SourceFile* file = out->add_sources();
    KILN_JSON_RETURN_IF_ERROR(ExpectObject(j[i], where));
    KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j[i], "path", where, file->mutable_path()));
    KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j[i], "content", where, file->mutable_content()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadSolution(const Json& j, absl::string_view path, v1::Solution* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "name", path, out->mutable_name()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "definition", path, out->mutable_definition()));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "author", path, out->mutable_author()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "description", path, out->mutable_description()));
  const Json* spec = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "spec", path, &spec));
  KILN_JSON_RETURN_IF_ERROR(ReadBuildSpec(*spec, Child(path, "spec"), out->mutable_spec()));
  const Json* sources = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "sources", path, &sources));
  return ReadSources(*sources, Child(path, "sources"), out);
}

Json WriteSolution(const v1::Solution& s) {
  Json spec = Json::object();
  spec["language"] = s.spec().language();
  spec["target_hardware"] = Json::array();
  for (const std::string& h : s.spec().target_hardware()) spec["target_hardware"].push_back(h);
  spec["entry_point"] = s.spec().entry_point();
  spec["dependencies"] = Json::array();
  for (const std::string& d : s.spec().dependencies()) spec["dependencies"].push_back(d);
  if (s.spec().has_destination_passing_style()) {
    spec["destination_passing_style"] = s.spec().destination_passing_style();
  }
  if (s.spec().has_binding()) spec["binding"] = s.spec().binding();
  Json sources = Json::array();
  for (const v1::SourceFile& f : s.sources()) {
    Json file = Json::object();
    file["path"] = f.path();
    file["content"] = f.content();
    sources.push_back(std::move(file));
  }
  Json j = Json::object();
  j["name"] = s.name();
  j["definition"] = s.definition();
  j["author"] = s.author();
  if (!s.description().empty()) j["description"] = s.description();
  j["spec"] = std::move(spec);
  j["sources"] = std::move(sources);
  return j;
}

}  // namespace json_internal

absl::StatusOr<v1::Solution> ParseSolutionJson(std::string_view json) {
  absl::StatusOr<json_internal::Json> doc =
      json_internal::ParseDocument(json_internal::AsAbsl(json));
  if (!doc.ok()) return doc.status();
  v1::Solution s;
  KILN_JSON_RETURN_IF_ERROR(json_internal::ReadSolution(*doc, "solution", &s));
  return s;
}

std::string SolutionToJson(const v1::Solution& s, int indent) {
  return json_internal::Dump(json_internal::WriteSolution(s), indent);
}

}  // namespace kiln
