#include "harness/model/samples_artifact.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace kiln {

std::string SamplesArtifact(const google::protobuf::RepeatedField<double>& samples_ms) {
  std::string content = "{\"unit\": \"ms\", \"samples_ms\": [";
  for (int s = 0; s < samples_ms.size(); ++s) {
    absl::StrAppend(&content, s == 0 ? "" : ", ", absl::StrFormat("%.9g", samples_ms.Get(s)));
  }
  return content + "]}\n";
}

std::vector<double> ParseSamplesArtifact(const std::string& content) {
  std::vector<double> out;
  nlohmann::json doc = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("samples_ms") || !doc["samples_ms"].is_array()) return out;
  for (const nlohmann::json& v : doc["samples_ms"]) {
    if (v.is_number() && v.get<double>() > 0) out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace kiln
