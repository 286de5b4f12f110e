#include "harness/model/json_fields.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace kiln::json_internal {
namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] "; the prefix means nothing
// to a user.
std::string_view StripExceptionPrefix(std::string_view what) {
  if (!what.empty() && what.front() == '[') {
    size_t close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return what;
}

// The byte offset where nesting first exceeds kMaxJsonDepth, or npos. Brackets inside strings do
// not count.
size_t FindExcessiveNesting(std::string_view text) {
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
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

absl::StatusOr<Json> ParseDocument(std::string_view text) {
  size_t deep = FindExcessiveNesting(text);
  if (deep != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON at byte ", deep,
                                                   ": nested deeper than ", kMaxJsonDepth));
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON at byte ", e.byte, ": ", StripExceptionPrefix(e.what())));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", StripExceptionPrefix(e.what())));
  }
}

std::string Dump(const Json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

absl::Status FieldError(std::string_view path, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

std::string Child(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return absl::StrCat(path, ".", key);
}

std::string Element(std::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string_view TypeName(const Json& j) {
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

absl::Status ExpectObject(const Json& j, std::string_view path) {
  if (j.is_object()) return absl::OkStatus();
  return FieldError(path, absl::StrCat("expected an object, got ", TypeName(j)));
}

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

absl::StatusOr<const Json*> Require(const Json& obj, std::string_view key,
                                    std::string_view path) {
  const Json* j = Find(obj, key);
  if (j == nullptr) return FieldError(Child(path, key), "missing");
  return j;
}

absl::StatusOr<std::string> ReadString(const Json& j, std::string_view path) {
  if (!j.is_string()) return FieldError(path, absl::StrCat("expected a string, got ", TypeName(j)));
  return j.get<std::string>();
}

absl::StatusOr<int64_t> ReadInt(const Json& j, std::string_view path) {
  if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return FieldError(path, absl::StrCat(v, " is out of range"));
    }
    return static_cast<int64_t>(v);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_float()) {
    // Accepted when integral (4096.0), as flashinfer-bench's lax integer fields do.
    double v = j.get<double>();
    if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 9.0e18) {
      return static_cast<int64_t>(v);
    }
    return FieldError(path, absl::StrCat("expected an integer, got ", Dump(j, -1)));
  }
  return FieldError(path, absl::StrCat("expected an integer, got ", TypeName(j)));
}

absl::StatusOr<bool> ReadBool(const Json& j, std::string_view path) {
  if (!j.is_boolean()) return FieldError(path, absl::StrCat("expected a bool, got ", TypeName(j)));
  return j.get<bool>();
}

absl::StatusOr<double> ReadMetric(const Json& j, std::string_view path) {
  if (j.is_number()) return j.get<double>();
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    return FieldError(path, absl::StrCat("expected a number, \"NaN\", \"Infinity\" or "
                                         "\"-Infinity\", got '", s, "'"));
  }
  return FieldError(path, absl::StrCat("expected a number, got ", TypeName(j)));
}

absl::StatusOr<std::vector<std::string>> ReadStringList(const Json& j, std::string_view path) {
  if (!j.is_array()) return FieldError(path, absl::StrCat("expected an array, got ", TypeName(j)));
  std::vector<std::string> out;
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    absl::StatusOr<std::string> s = ReadString(j[i], Element(path, i));
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<std::string> ReadOptionalString(const Json& obj, std::string_view key,
                                               std::string_view path) {
  const Json* j = Find(obj, key);
  if (j == nullptr || j->is_null()) return std::string();
  return ReadString(*j, Child(path, key));
}

Json WriteMetric(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

}  // namespace kiln::json_internal
