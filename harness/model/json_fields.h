// Typed access to the fields of a parsed JSON document, with errors that name the field by its
// path ("definition.inputs.weight.dtype: expected a string"). Internal to harness/model: the
// public entry points are in json_interop.h.
#ifndef KILN_HARNESS_MODEL_JSON_FIELDS_H_
#define KILN_HARNESS_MODEL_JSON_FIELDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "nlohmann/json.hpp"

namespace kiln::json_internal {

// Key order of objects is kept: it is the positional calling order of inputs and outputs.
using Json = nlohmann::ordered_json;

// Documents nested deeper than this are refused before parsing (hostile input).
inline constexpr int kMaxJsonDepth = 64;

// The public API speaks std::string_view; this abseil build has its own string_view.
inline absl::string_view AsAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Parses a whole document. Errors: "malformed JSON at byte N: <what>".
absl::StatusOr<Json> ParseDocument(absl::string_view text);

// Serializes without throwing: invalid UTF-8 in strings is replaced, not an error.
std::string Dump(const Json& j, int indent);

// INVALID_ARGUMENT "<path>: <message>".
absl::Status FieldError(absl::string_view path, absl::string_view message);

// "a.b" + "c" -> "a.b.c"; "a.b" + index 2 -> "a.b[2]".
std::string Child(absl::string_view path, absl::string_view key);
std::string Element(absl::string_view path, size_t index);

// The JSON type as a user would name it ("a string", "null", ...).
absl::string_view TypeName(const Json& j);

// `j` must be an object.
absl::Status ExpectObject(const Json& j, absl::string_view path);

// Member `key` of object `obj`, or nullptr when absent. A present null is returned as is.
const Json* Find(const Json& obj, absl::string_view key);
// Like Find, but absence is an error "<path>.<key>: missing".
absl::Status Require(const Json& obj, absl::string_view key, absl::string_view path,
                     const Json** out);

// Typed readers. `path` names `j` itself.
absl::Status ReadString(const Json& j, absl::string_view path, std::string* out);
absl::Status ReadInt(const Json& j, absl::string_view path, int64_t* out);
absl::Status ReadBool(const Json& j, absl::string_view path, bool* out);
// A number, or one of the strings "NaN", "Infinity", "-Infinity" (flashinfer-bench writes
// non-finite metrics that way); null reads as NaN.
absl::Status ReadMetric(const Json& j, absl::string_view path, double* out);
// Appends the strings of array `j`.
absl::Status ReadStringList(const Json& j, absl::string_view path,
                            google::protobuf::RepeatedPtrField<std::string>* out);

// Member readers. `path` names `obj`. "Optional" members may be absent or null (flashinfer-bench
// writes unset optional fields as null); `*out` is then left unchanged.
absl::Status ReadStringMember(const Json& obj, absl::string_view key, absl::string_view path,
                              std::string* out);
absl::Status ReadOptionalStringMember(const Json& obj, absl::string_view key,
                                      absl::string_view path, std::string* out);
absl::Status ReadOptionalStringListMember(const Json& obj, absl::string_view key,
                                          absl::string_view path,
                                          google::protobuf::RepeatedPtrField<std::string>* out);

// A metric as flashinfer-bench serializes it: non-finite values as strings.
Json WriteMetric(double v);

}  // namespace kiln::json_internal

// Returns early from the enclosing Status-returning function when `expr` is not OK.
#define KILN_JSON_RETURN_IF_ERROR(expr)                   \
  do {                                                    \
    if (absl::Status _kiln_st = (expr); !_kiln_st.ok()) { \
      return _kiln_st;                                    \
    }                                                     \
  } while (0)

#endif  // KILN_HARNESS_MODEL_JSON_FIELDS_H_
