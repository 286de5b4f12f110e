#include "harness/archive/solution_json.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"

namespace kiln::archive {

absl::StatusOr<std::string> SolutionToStoredJson(const v1::Solution& solution) {
  v1::Solution stripped = solution;
  for (v1::SourceFile& source : *stripped.mutable_sources()) source.clear_content();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(stripped, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("encoding the solution: ", status.ToString()));
  }
  return json;
}

absl::StatusOr<v1::Solution> SolutionFromStoredJson(const std::string& json) {
  v1::Solution solution;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // written by a newer kiln-harness
  auto status = google::protobuf::util::JsonStringToMessage(json, &solution, options);
  if (!status.ok()) {
    return absl::DataLossError(absl::StrCat("stored solution is corrupt: ", status.ToString()));
  }
  return solution;
}

}  // namespace kiln::archive
