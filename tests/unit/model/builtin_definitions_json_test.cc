// kiln's own definition files (harness/definitions/) carry the kiln extensions; they read,
// validate and write back unchanged, and their flashinfer-bench export drops the extensions.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/model/json_interop.h"
#include "harness/model/validate.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Definition files: *.json, but not the *.solution.json files beside them.
std::vector<fs::path> DefinitionFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name.find(".solution.") == std::string::npos) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("kiln's built-in definitions and their workloads read, validate and round-trip") {
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "harness" / "definitions";
  const std::vector<fs::path> files = DefinitionFiles(dir);
  REQUIRE(files.size() > 0);
  for (const fs::path& file : files) {
    INFO(file.string());
    const std::string text = Slurp(file);
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(text);
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    CHECK(ValidateDefinition(*def).ok());
    CHECK(Json::parse(DefinitionToJson(*def)) == Json::parse(text));
    Json exported = Json::parse(DefinitionToJson(*def, /*export_kiln_extensions=*/false));
    CHECK_FALSE(exported.contains("native_reference"));
    CHECK_FALSE(exported.contains("tolerance"));

    fs::path jsonl = file;
    jsonl.replace_extension(".jsonl");
    if (!fs::exists(jsonl)) continue;
    absl::StatusOr<std::vector<v1::Workload>> workloads =
        ParseWorkloadsJsonl(Slurp(jsonl), def->name());
    INFO(workloads.status().ToString());
    REQUIRE(workloads.ok());
    CHECK(workloads->size() > 0);
    for (size_t i = 0; i < workloads->size(); ++i) {
      absl::Status valid =
          ValidateWorkload(*def, (*workloads)[i], Limits{}, "workload[" + std::to_string(i) + "]");
      INFO(valid.ToString());
      CHECK(valid.ok());
    }
  }
}

TEST_CASE("kiln's built-in solutions read and validate against their definitions") {
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "harness" / "definitions";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".solution.json";
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
      continue;
    }
    INFO(name);
    absl::StatusOr<v1::Solution> solution = ParseSolutionJson(Slurp(entry.path()));
    INFO(solution.status().ToString());
    REQUIRE(solution.ok());
    const fs::path def_file = dir / (solution->definition() + ".json");
    REQUIRE(fs::exists(def_file));
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(Slurp(def_file));
    REQUIRE(def.ok());
    absl::Status valid = ValidateSolution(*def, *solution, Limits{});
    INFO(valid.ToString());
    CHECK(valid.ok());
    ++checked;
  }
  CHECK(checked > 0);  // the demo solution at least
}

}  // namespace
}  // namespace kiln
