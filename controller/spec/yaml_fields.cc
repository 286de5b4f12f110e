#include "controller/spec/yaml_fields.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln::controller::yaml {

namespace {

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "a scalar";
  }
}

absl::Status ExpectScalar(const YAML::Node& node, const std::string& path, const char* what) {
  if (node.IsScalar()) return absl::OkStatus();
  return FieldError(path, absl::StrCat("expected ", what, ", got ", KindName(node)));
}

}  // namespace

absl::Status FieldError(const std::string& path, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

absl::Status ExpectMap(const YAML::Node& node, const std::string& path) {
  if (node.IsMap()) return absl::OkStatus();
  return FieldError(path, absl::StrCat("expected a mapping, got ", KindName(node)));
}

absl::Status CheckKeys(const YAML::Node& map, const std::string& path,
                       const std::vector<std::string>& allowed) {
  for (const auto& entry : map) {
    std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string where = path.empty() ? key : absl::StrCat(path, ".", key);
      return FieldError(where, "unknown field");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadString(const YAML::Node& node, const std::string& path, std::string* out) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = ExpectScalar(node, path, "a string"); !s.ok()) return s;
  *out = node.Scalar();
  return absl::OkStatus();
}

absl::Status ReadInt(const YAML::Node& node, const std::string& path, int min, int* out) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = ExpectScalar(node, path, "an integer"); !s.ok()) return s;
  int value = 0;
  if (!absl::SimpleAtoi(node.Scalar(), &value) || value < min) {
    return FieldError(path,
                      absl::StrCat("expected an integer >= ", min, ", got '", node.Scalar(), "'"));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadDouble(const YAML::Node& node, const std::string& path, double min, double* out) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = ExpectScalar(node, path, "a number"); !s.ok()) return s;
  double value = 0;
  if (!absl::SimpleAtod(node.Scalar(), &value) || !(value >= min)) {
    return FieldError(path,
                      absl::StrCat("expected a number >= ", min, ", got '", node.Scalar(), "'"));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status ReadBool(const YAML::Node& node, const std::string& path, bool* out) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = ExpectScalar(node, path, "true or false"); !s.ok()) return s;
  const std::string& v = node.Scalar();
  if (v == "true" || v == "yes" || v == "on") {
    *out = true;
  } else if (v == "false" || v == "no" || v == "off") {
    *out = false;
  } else {
    return FieldError(path, absl::StrCat("expected true or false, got '", v, "'"));
  }
  return absl::OkStatus();
}

absl::Status ReadStringList(const YAML::Node& node, const std::string& path,
                            std::vector<std::string>* out) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (!node.IsSequence()) {
    return FieldError(path, absl::StrCat("expected a list, got ", KindName(node)));
  }
  out->clear();
  for (size_t i = 0; i < node.size(); ++i) {
    std::string item;
    std::string item_path = absl::StrCat(path, "[", i, "]");
    if (absl::Status s = ExpectScalar(node[i], item_path, "a string"); !s.ok()) return s;
    out->push_back(node[i].Scalar());
  }
  return absl::OkStatus();
}

}  // namespace kiln::controller::yaml
