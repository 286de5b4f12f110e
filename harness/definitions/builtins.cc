#include "harness/definitions/builtins.h"

#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/common/embedded_file.h"
#include "harness/model/json_interop.h"
#include "harness/model/validate.h"

namespace kiln {

extern const EmbeddedFile kBuiltinDefinitionFiles[];
extern const int kBuiltinDefinitionFiles_count;
extern const EmbeddedFile kNativeReferenceFiles[];
extern const int kNativeReferenceFiles_count;

namespace {

const EmbeddedFile* FindFile(absl::string_view name) {
  for (int i = 0; i < kBuiltinDefinitionFiles_count; ++i) {
    if (name == kBuiltinDefinitionFiles[i].name) return &kBuiltinDefinitionFiles[i];
  }
  return nullptr;
}

std::string_view Content(const EmbeddedFile& f) { return std::string_view(f.data, f.size); }

}  // namespace

absl::StatusOr<std::vector<BuiltinDefinition>> LoadBuiltinDefinitions() {
  std::vector<BuiltinDefinition> out;
  for (int i = 0; i < kBuiltinDefinitionFiles_count; ++i) {
    const EmbeddedFile& f = kBuiltinDefinitionFiles[i];
    absl::string_view name = f.name;
    if (!absl::EndsWith(name, ".json") || absl::EndsWith(name, ".solution.json")) continue;
    auto def = ParseDefinitionJson(Content(f));
    if (!def.ok()) {
      return absl::InternalError(absl::StrCat("built-in ", name, ": ", def.status().message()));
    }
    BuiltinDefinition b;
    b.definition = *std::move(def);
    std::string stem(name.substr(0, name.size() - 5));
    if (const EmbeddedFile* wl = FindFile(stem + ".jsonl")) {
      auto workloads = ParseWorkloadsJsonl(Content(*wl), b.definition.name());
      if (!workloads.ok()) {
        return absl::InternalError(
            absl::StrCat("built-in ", stem, ".jsonl: ", workloads.status().message()));
      }
      b.workloads = *std::move(workloads);
    }
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<v1::Solution> BuiltinDemoSolution() {
  const EmbeddedFile* f = FindFile(absl::StrCat(kDemoDefinitionName, ".solution.json"));
  if (f == nullptr) return absl::InternalError("the demo solution is not built in");
  return ParseSolutionJson(Content(*f));
}

absl::StatusOr<std::optional<v1::Solution>> ShippedNativeReference(const std::string& definition) {
  const std::string file = absl::StrCat(definition, ".json");
  for (int i = 0; i < kNativeReferenceFiles_count; ++i) {
    const EmbeddedFile& f = kNativeReferenceFiles[i];
    if (file != f.name) continue;
    auto solution = ParseSolutionJson(Content(f));
    if (!solution.ok()) {
      return absl::InternalError(
          absl::StrCat("shipped native reference ", file, ": ", solution.status().message()));
    }
    return std::optional<v1::Solution>(*std::move(solution));
  }
  return std::optional<v1::Solution>();
}

}  // namespace kiln
