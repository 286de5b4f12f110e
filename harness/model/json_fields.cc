#include "harness/model/json_fields.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kiln::json_internal {
namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] "; the prefix means nothing
// to a user.
absl::string_view StripExceptionPrefix(absl::string_view what) {
  if (!what.empty() && what.front() == '[') {
    size_t close = what.find("] ");
    if (close != absl::string_view::npos) what.remove_prefix(close + 2);
  }
  return what;
}

// The (1-based) byte where nesting first exceeds kMaxJsonDepth, or npos. Brackets inside strings do
// not count.
size_t FindExcessiveNesting(absl::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i + 1;  // 1-based, as nlohmann counts bytes
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return absl::string_view::npos;
}

}  // namespace

absl::StatusOr<Json> ParseDocument(absl::string_view text) {
  size_t deep = FindExcessiveNesting(text);
  if (deep != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON at byte ", deep, ": nested deeper than ", kMaxJsonDepth));
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // what(): "[json.exception.parse_error.101] parse error at line 1, column 14: <reason>".
    absl::string_view what = StripExceptionPrefix(e.what());
    constexpr absl::string_view kLead = "parse error at ";
    std::string where;
    if (absl::ConsumePrefix(&what, kLead)) {
      const size_t colon = what.find(": ");
      if (colon != absl::string_view::npos) {
        where = absl::StrCat(" (", what.substr(0, colon), ")");
        what.remove_prefix(colon + 2);
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON at byte ", e.byte, where, ": ", what));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", StripExceptionPrefix(e.what())));
  }
}

std::string Dump(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

absl::Status FieldError(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

std::string Child(absl::string_view path, absl::string_view key) {
  if (path.empty()) return std::string(key);
  return absl::StrCat(path, ".", key);
}

std::string Element(absl::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

absl::string_view TypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "binary data";
  }
}

absl::Status ExpectObject(const Json& j, absl::string_view path) {
  if (j.is_object()) return absl::OkStatus();
  return FieldError(path, absl::StrCat("expected an object, got ", TypeName(j)));
}

const Json* Find(const Json& obj, absl::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

absl::Status Require(const Json& obj, absl::string_view key, absl::string_view path,
                     const Json** out) {
  *out = Find(obj, key);
  if (*out == nullptr) return FieldError(Child(path, key), "missing");
  return absl::OkStatus();
}

absl::Status ReadString(const Json& j, absl::string_view path, std::string* out) {
  if (!j.is_string()) return FieldError(path, absl::StrCat("expected a string, got ", TypeName(j)));
  *out = j.get_ref<const std::string&>();
  return absl::OkStatus();
}

absl::Status ReadInt(const Json& j, absl::string_view path, int64_t* out) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return FieldError(path, absl::StrCat(v, " is out of range"));
    }
    *out = static_cast<int64_t>(v);
    return absl::OkStatus();
  }
  if (j.is_number_integer()) {
    *out = j.get<int64_t>();
    return absl::OkStatus();
  }
  if (j.is_number_float()) {
    // Accepted when integral (4096.0), as flashinfer-bench's lax integer fields do.
    double v = j.get<double>();
    if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 9.0e18) {
      *out = static_cast<int64_t>(v);
      return absl::OkStatus();
    }
    return FieldError(path, absl::StrCat("expected an integer, got ", Dump(j, -1)));
  }
  return FieldError(path, absl::StrCat("expected an integer, got ", TypeName(j)));
}

absl::Status ReadBool(const Json& j, absl::string_view path, bool* out) {
  if (!j.is_boolean()) return FieldError(path, absl::StrCat("expected a bool, got ", TypeName(j)));
  *out = j.get<bool>();
  return absl::OkStatus();
}

absl::Status ReadMetric(const Json& j, absl::string_view path, double* out) {
  if (j.is_number()) {
    *out = j.get<double>();
    return absl::OkStatus();
  }
  if (j.is_null()) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return absl::OkStatus();
  }
  if (!j.is_string()) return FieldError(path, absl::StrCat("expected a number, got ", TypeName(j)));
  const std::string& s = j.get_ref<const std::string&>();
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (s == "Infinity") {
    *out = std::numeric_limits<double>::infinity();
  } else if (s == "-Infinity") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return FieldError(path, absl::StrCat("expected a number, \"NaN\", \"Infinity\" or "
                                         "\"-Infinity\", got '",
                                         s, "'"));
  }
  return absl::OkStatus();
}

absl::Status ReadStringList(const Json& j, absl::string_view path,
                            google::protobuf::RepeatedPtrField<std::string>* out) {
  if (!j.is_array()) return FieldError(path, absl::StrCat("expected an array, got ", TypeName(j)));
  for (size_t i = 0; i < j.size(); ++i) {
    KILN_JSON_RETURN_IF_ERROR(ReadString(j[i], Element(path, i), out->Add()));
  }
  return absl::OkStatus();
}

absl::Status ReadStringMember(const Json& obj, absl::string_view key, absl::string_view path,
                              std::string* out) {
  const Json* j = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(obj, key, path, &j));
  return ReadString(*j, Child(path, key), out);
}

absl::Status ReadOptionalStringMember(const Json& obj, absl::string_view key,
                                      absl::string_view path, std::string* out) {
  const Json* j = Find(obj, key);
  if (j == nullptr || j->is_null()) return absl::OkStatus();
  return ReadString(*j, Child(path, key), out);
}

absl::Status ReadOptionalStringListMember(const Json& obj, absl::string_view key,
                                          absl::string_view path,
                                          google::protobuf::RepeatedPtrField<std::string>* out) {
  const Json* j = Find(obj, key);
  if (j == nullptr || j->is_null()) return absl::OkStatus();
  return ReadStringList(*j, Child(path, key), out);
}

Json WriteMetric(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

}  // namespace kiln::json_internal
