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
#include "nlohmann/json.hpp"

namespace kiln::json_internal {

// Key order of objects is kept: it is the positional calling order of inputs and outputs.
using Json = nlohmann::ordered_json;

// Documents nested deeper than this are refused before parsing (hostile input).
inline constexpr int kMaxJsonDepth = 64;

// Parses a whole document. Errors: "malformed JSON at byte N: <what>".
absl::StatusOr<Json> ParseDocument(std::string_view text);

// Serializes without throwing: invalid UTF-8 in strings is replaced, not an error.
std::string Dump(const Json& j, int indent);

// INVALID_ARGUMENT "<path>: <message>".
absl::Status FieldError(std::string_view path, std::string_view message);

// "a.b" + "c" -> "a.b.c"; "a.b" + index 2 -> "a.b[2]".
std::string Child(std::string_view path, std::string_view key);
std::string Element(std::string_view path, size_t index);

// The JSON type as a user would name it ("a string", "null", ...).
std::string_view TypeName(const Json& j);

// `j` must be an object.
absl::Status ExpectObject(const Json& j, std::string_view path);

// Member `key` of object `obj`, or nullptr when absent. A present null is returned as is.
const Json* Find(const Json& obj, std::string_view key);
// Like Find, but absence is an error "<path>.<key>: missing".
absl::StatusOr<const Json*> Require(const Json& obj, std::string_view key, std::string_view path);

// Typed readers. `path` names `j` itself.
absl::StatusOr<std::string> ReadString(const Json& j, std::string_view path);
absl::StatusOr<int64_t> ReadInt(const Json& j, std::string_view path);
absl::StatusOr<bool> ReadBool(const Json& j, std::string_view path);
// A number, or one of the strings "NaN", "Infinity", "-Infinity" (flashinfer-bench writes
// non-finite metrics that way); null reads as NaN.
absl::StatusOr<double> ReadMetric(const Json& j, std::string_view path);
absl::StatusOr<std::vector<std::string>> ReadStringList(const Json& j, std::string_view path);

// Optional string member: absent or null -> "" (and no error).
absl::StatusOr<std::string> ReadOptionalString(const Json& obj, std::string_view key,
                                               std::string_view path);

// A metric as flashinfer-bench serializes it: non-finite values as strings.
Json WriteMetric(double v);

}  // namespace kiln::json_internal

#endif  // KILN_HARNESS_MODEL_JSON_FIELDS_H_
