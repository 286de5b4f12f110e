// Every definition and workload of the flashinfer-trace dataset (as published with
// flashinfer-bench) reads, validates and writes back unchanged.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/model/json_interop.h"
#include "harness/model/validate.h"
#include "tests/unit/model/flashinfer_trace_dataset.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using testing::FlashinferTraceDatasetDir;

// Files under `dir` with extension `ext`, sorted so that failures are reproducible.
std::vector<fs::path> FilesUnder(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ext) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, v1::Definition> LoadDefinitions(const fs::path& dataset) {
  std::map<std::string, v1::Definition> defs;
  for (const fs::path& file : FilesUnder(dataset / "definitions", ".json")) {
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(Slurp(file));
    INFO(file.string() << ": " << def.status().ToString());
    REQUIRE(def.ok());
    defs[def->name()] = *def;
  }
  return defs;
}

TEST_CASE("every flashinfer-trace definition parses, validates and round-trips key for key") {
  const fs::path dataset = FlashinferTraceDatasetDir();
  const std::vector<fs::path> files = FilesUnder(dataset / "definitions", ".json");
  REQUIRE(files.size() > 0);
  int checked = 0;
  for (const fs::path& file : files) {
    INFO(file.string());
    const std::string text = Slurp(file);
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(text);
    INFO(def.status().ToString());
    REQUIRE(def.ok());
    absl::Status valid = ValidateDefinition(*def);
    INFO(valid.ToString());
    CHECK(valid.ok());
    // ordered_json equality compares object keys in order.
    const Json original = Json::parse(text);
    CHECK(Json::parse(DefinitionToJson(*def)) == original);
    CHECK(Json::parse(DefinitionToJson(*def, /*export_kiln_extensions=*/false)) == original);
    ++checked;
  }
  CHECK(checked == static_cast<int>(files.size()));
  WARN("flashinfer-trace definitions checked: " << checked);
}

// The workload object written back holds the same keys with the same values, and every nested
// object (axes, inputs and each input) keeps its key order. The order of the three top-level
// keys is not kept: Workload has no field to record it (dataset lines use both "uuid, axes,
// inputs" and flashinfer-bench's current "axes, inputs, uuid").
void CheckWorkloadRoundTrip(const Json& original, const Json& written) {
  CHECK(written.size() == original.size());
  for (const auto& [key, value] : original.items()) {
    INFO(key);
    REQUIRE(written.contains(key));
    CHECK(written[key] == value);
  }
}

TEST_CASE(
    "every flashinfer-trace workload parses, validates against its definition and "
    "round-trips") {
  const fs::path dataset = FlashinferTraceDatasetDir();
  const std::map<std::string, v1::Definition> defs = LoadDefinitions(dataset);
  REQUIRE(defs.size() > 0);
  const std::vector<fs::path> files = FilesUnder(dataset / "workloads", ".jsonl");
  REQUIRE(files.size() > 0);
  int checked = 0;
  for (const fs::path& file : files) {
    INFO(file.string());
    const std::string content = Slurp(file);
    // Each file holds the workloads of the definition it is named after.
    absl::StatusOr<std::vector<v1::Workload>> workloads =
        ParseWorkloadsJsonl(content, file.stem().string());
    INFO(workloads.status().ToString());
    REQUIRE(workloads.ok());
    std::istringstream lines(content);
    std::string line;
    size_t index = 0;
    while (std::getline(lines, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      REQUIRE(index < workloads->size());
      const Json trace = Json::parse(line);
      auto def = defs.find(trace["definition"].get<std::string>());
      INFO("line for definition " << trace["definition"]);
      REQUIRE(def != defs.end());
      const v1::Workload& w = (*workloads)[index];
      absl::Status valid =
          ValidateWorkload(def->second, w, Limits{}, "workload[" + std::to_string(index) + "]");
      INFO(valid.ToString());
      CHECK(valid.ok());
      CheckWorkloadRoundTrip(trace["workload"], Json::parse(WorkloadToJson(w)));
      ++index;
      ++checked;
    }
    CHECK(index == workloads->size());
  }
  CHECK(checked > 0);
  WARN("flashinfer-trace workloads checked: " << checked);
}

}  // namespace
}  // namespace kiln
