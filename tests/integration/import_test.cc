// kiln defs import DIR against a real kiln-harness: the flashinfer-trace dataset (definitions and
// workloads, no blobs), and a small dataset written here with a real safetensors blob, a
// solution, a workload whose blob is missing and a blob whose tensor has the wrong shape.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/controller_instance.h"
#include "tests/integration/harness_instance.h"
#include "tests/unit/model/flashinfer_trace_dataset.h"

using namespace kiln::testing;
using nlohmann::json;
using ordered_json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Spit(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// What the dataset holds, counted here independently of kiln.
struct Expected {
  std::set<std::string> definitions;
  std::map<std::string, int> lines;    // definition -> JSONL lines naming it
  std::map<std::string, int> missing;  // definition -> lines with a blob not in the folder
  int missing_workloads = 0;
  std::vector<std::pair<std::string, std::string>> missing_paths;  // (uuid, path)
};

Expected Count(const fs::path& dataset) {
  Expected e;
  for (const auto& f : fs::recursive_directory_iterator(dataset / "definitions")) {
    if (f.path().extension() == ".json") {
      e.definitions.insert(json::parse(Slurp(f.path()))["name"].get<std::string>());
    }
  }
  for (const auto& f : fs::recursive_directory_iterator(dataset / "workloads")) {
    if (f.path().extension() != ".jsonl") continue;
    std::istringstream lines(Slurp(f.path()));
    for (std::string line; std::getline(lines, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const json trace = json::parse(line);
      const std::string def = trace["definition"];
      ++e.lines[def];
      std::set<std::string> missing;
      for (const auto& [name, input] : trace["workload"]["inputs"].items()) {
        if (input["type"] != "safetensors") continue;
        if (!fs::exists(dataset / input["path"].get<std::string>())) missing.insert(input["path"]);
      }
      if (missing.empty()) continue;
      ++e.missing[def];
      ++e.missing_workloads;
      for (const std::string& path : missing) {
        e.missing_paths.emplace_back(trace["workload"]["uuid"], path);
      }
    }
  }
  return e;
}

std::map<std::string, json> ListDefinitions(const HarnessInstance& harness) {
  Completed listed = harness.Kiln({"defs", "list", "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  std::map<std::string, json> out;
  const json parsed = json::parse(listed.out);
  for (const json& d : parsed["definitions"]) {
    out[d["name"].get<std::string>()] = d;
  }
  return out;
}

// A safetensors file with one float32 tensor `key` of `values.size()` elements.
std::string Safetensors(const std::string& key, const std::vector<float>& values) {
  const size_t bytes = values.size() * sizeof(float);
  const std::string header = "{\"" + key + "\":{\"dtype\":\"F32\",\"shape\":[" +
                             std::to_string(values.size()) + "],\"data_offsets\":[0," +
                             std::to_string(bytes) + "]}}";
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  std::string data(bytes, '\0');
  std::memcpy(data.data(), values.data(), bytes);
  return out + data;
}

std::string WorkloadLine(const std::string& def, const std::string& uuid, int n,
                         const json& a_input) {
  json line = {{"definition", def},
               {"solution", nullptr},
               {"workload",
                {{"uuid", uuid},
                 {"axes", {{"n", n}}},
                 {"inputs", {{"a", a_input}, {"b", {{"type", "random"}}}}}}},
               {"evaluation", nullptr}};
  return line.dump() + "\n";
}

json Blob(const std::string& path) {
  return {{"type", "safetensors"}, {"path", path}, {"tensor_key", "a"}};
}

}  // namespace

TEST_CASE("defs import registers the flashinfer-trace dataset, listing workloads without blobs") {
  const fs::path dataset = FlashinferTraceDatasetDir();
  const Expected expected = Count(dataset);
  REQUIRE(expected.definitions.size() > 100);
  REQUIRE_FALSE(expected.missing_paths.empty());  // the dataset ships without blob/

  ScratchDir dir;
  // Reference checks of the gemm/rmsnorm definitions would queue runs the test does not need.
  HarnessInstance harness(dir / "data", {"--check-references=false"});
  std::set<std::string> builtin;
  for (const auto& [name, d] : ListDefinitions(harness)) {
    if (d["builtin"] == true && expected.definitions.count(name) > 0) builtin.insert(name);
  }

  // Dry run first: everything validates, nothing is registered, no harness needed.
  Completed dry = Kiln({"--server", "127.0.0.1:1", "defs", "import", dataset.string(),
                        "--dry-run", "--json"});
  INFO(dry.Describe());
  REQUIRE(dry.exit_code == 0);
  const json plan = json::parse(dry.out);
  CHECK(plan["dry_run"] == true);
  CHECK(plan["summary"]["definitions"] == expected.definitions.size());
  CHECK(plan["summary"]["validated"] == expected.definitions.size());
  CHECK(plan["summary"]["failed"] == 0);
  CHECK(plan["summary"]["workloads_left_out"] == expected.missing_workloads);
  for (const json& d : plan["definitions"]) {
    const std::string name = d["name"];
    INFO(name);
    const int lines = expected.lines.count(name) ? expected.lines.at(name) : 0;
    const int missing = expected.missing.count(name) ? expected.missing.at(name) : 0;
    CHECK(d["workloads_in_files"] == lines);
    CHECK(d["workloads_importable"] == lines - missing);
    CHECK(d["left_out"].size() == static_cast<size_t>(missing));
  }
  CHECK(Kiln({"defs", "import", dataset.string(), "--dry-run", "--strict"}).exit_code == 1);

  const std::map<std::string, json> before = ListDefinitions(harness);
  Completed imported = harness.Kiln({"defs", "import", dataset.string()});
  INFO(imported.Describe());
  REQUIRE(imported.exit_code == 0);
  // One progress line per definition on stderr.
  size_t progress = 0;
  for (size_t at = imported.err.find("kiln: ["); at != std::string::npos;
       at = imported.err.find("kiln: [", at + 1)) {
    ++progress;
  }
  CHECK(progress == expected.definitions.size());
  // Every workload left out is listed with its path, under a visible warning.
  CHECK(imported.out.find("WARNING: workloads left out") != std::string::npos);
  for (const auto& [uuid, path] : expected.missing_paths) {
    INFO(uuid << " " << path);
    CHECK(imported.out.find(uuid + "  missing blob: " + path + "  (") != std::string::npos);
  }
  for (const std::string& name : builtin) {
    CHECK(imported.out.find("built in, not registered") != std::string::npos);
    CHECK(imported.out.find("  " + name + " (") != std::string::npos);
  }

  const std::map<std::string, json> after = ListDefinitions(harness);
  int registered = 0;
  for (const std::string& name : expected.definitions) {
    INFO(name);
    if (builtin.count(name) > 0) {
      // The harness keeps its own: same workload count as before the import.
      CHECK(after.at(name)["workload_count"] == before.at(name)["workload_count"]);
      continue;
    }
    REQUIRE(after.count(name) == 1);
    ++registered;
    const int lines = expected.lines.count(name) ? expected.lines.at(name) : 0;
    const int missing = expected.missing.count(name) ? expected.missing.at(name) : 0;
    CHECK(after.at(name)["workload_count"] == lines - missing);
  }
  CHECK(registered + static_cast<int>(builtin.size()) ==
        static_cast<int>(expected.definitions.size()));
  CHECK(imported.out.find(std::to_string(registered) + " registered") != std::string::npos);
}

TEST_CASE("defs import uploads real blobs, checks their tensors and registers solutions") {
  ScratchDir dir;
  const fs::path ds = dir / "dataset";
  // Two definitions made from the test data's scale_add_f32 (its native reference included, so
  // the imported one evaluates on the host).
  ordered_json def = ordered_json::parse(Slurp(DataPath("scale_add_f32.json")));
  def["name"] = "blob_scale_add_f32";
  Spit(ds / "definitions" / "elementwise" / "blob_scale_add_f32.json", def.dump(2));
  def["name"] = "bad_blob_scale_add_f32";
  Spit(ds / "definitions" / "elementwise" / "bad_blob_scale_add_f32.json", def.dump(2));

  const std::string ok_blob = "./blob/workloads/elementwise/ok.safetensors";
  Spit(ds / ok_blob, Safetensors("a", {1.5f, -2.0f, 0.25f, 8.0f}));
  Spit(ds / "blob/workloads/elementwise/short.safetensors", Safetensors("a", {1.0f, 2.0f}));
  // One file holds lines of both definitions: they are matched by "definition", not by file.
  Spit(ds / "workloads" / "elementwise" / "mixed.jsonl",
       WorkloadLine("blob_scale_add_f32", "wl-blob", 4, Blob(ok_blob)) +
           WorkloadLine("blob_scale_add_f32", "wl-missing", 4,
                        Blob("./blob/workloads/elementwise/gone.safetensors")) +
           WorkloadLine("blob_scale_add_f32", "wl-random", 64, {{"type", "random"}}) +
           WorkloadLine("bad_blob_scale_add_f32", "wl-short", 3,
                        Blob("./blob/workloads/elementwise/short.safetensors")));
  // A flashinfer-bench solution.json, every BuildSpec field included.
  ordered_json solution = ordered_json::parse(Slurp(DataPath("solutions/correct.json")));
  solution["name"] = "blob_scale_add_cpp";
  solution["definition"] = "blob_scale_add_f32";
  solution["spec"]["binding"] = nullptr;
  const fs::path solution_file = ds / "solutions" / "kiln-tests" / "blob_scale_add_cpp.json";
  Spit(solution_file, solution.dump(2));
  ordered_json tilelang = solution;
  tilelang["name"] = "blob_scale_add_tilelang";
  tilelang["spec"]["language"] = "tilelang";
  tilelang["spec"]["entry_point"] = "main.py::run";
  tilelang["sources"] = {{{"path", "main.py"}, {"content", "def run(a, b): pass\n"}}};
  Spit(ds / "solutions" / "kiln-tests" / "blob_scale_add_tilelang.json", tilelang.dump(2));

  // The submission below times the reference and the solution; a loaded machine must not turn
  // that into a worker timeout.
  HarnessInstance harness(dir / "data", {"--check-references=false", "--worker-timeout-s", "60"});
  Completed dry = harness.Kiln({"defs", "import", ds.string(), "--dry-run"});
  INFO(dry.Describe());
  CHECK(dry.exit_code == 1);
  CHECK(ListDefinitions(harness).count("blob_scale_add_f32") == 0);
  CHECK_FALSE(fs::exists(dir / "data/blobs/blob"));

  Completed r = harness.Kiln({"defs", "import", ds.string()});
  INFO(r.Describe());
  // One definition failed validation: exit 1, the other one is registered all the same.
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("wl-missing  missing blob: ./blob/workloads/elementwise/gone.safetensors  "
                   "(workloads/elementwise/mixed.jsonl:2)") != std::string::npos);
  CHECK(r.out.find("workloads/elementwise/mixed.jsonl:4: input 'a': safetensors "
                   "blob/workloads/elementwise/short.safetensors tensor 'a': shape [2] but the "
                   "workload needs [3]") != std::string::npos);
  CHECK(r.out.find("kiln submit --definition blob_scale_add_f32 --solution " +
                   solution_file.string()) != std::string::npos);
  CHECK(r.out.find("'tilelang' is not a language kiln evaluates") != std::string::npos);
  // The valid solution is in the registry, as the baseline solution:blob_scale_add_cpp.
  Completed solutions = harness.Kiln({"solutions", "list", "--json"});
  INFO(solutions.Describe());
  const json registry = json::parse(solutions.out)["solutions"];
  REQUIRE(registry.size() == 1);
  CHECK(registry[0]["name"] == "blob_scale_add_cpp");
  CHECK(registry[0]["definition"] == "blob_scale_add_f32");

  const std::map<std::string, json> defs = ListDefinitions(harness);
  REQUIRE(defs.count("blob_scale_add_f32") == 1);
  CHECK(defs.at("blob_scale_add_f32")["workload_count"] == 2);
  CHECK(defs.count("bad_blob_scale_add_f32") == 0);
  // The blob reached the harness where the workload's path resolves.
  CHECK(Slurp(dir / "data/blobs/blob/workloads/elementwise/ok.safetensors") ==
        Slurp(ds / ok_blob));
  CHECK_FALSE(fs::exists(dir / "data/blobs/blob/workloads/elementwise/short.safetensors"));

  // A second import finds the blob there, identical, and registers the same again.
  Completed again = harness.Kiln({"defs", "import", ds.string(), "--definition",
                                  "blob_scale_add_f32", "--json"});
  INFO(again.Describe());
  CHECK(again.exit_code == 0);
  const json report = json::parse(again.out);
  REQUIRE(report["definitions"].size() == 1);
  CHECK(report["definitions"][0]["blobs_already_present"] == 1);
  CHECK(report["definitions"][0]["workloads_registered"] == 2);
  CHECK(report["definitions"][0]["left_out"][0]["uuid"] == "wl-missing");
  CHECK(report["solutions"].size() == 2);
  CHECK(report["summary"]["solutions_already_registered"] == 1);

  // The solution.json, unchanged, evaluates on the workload whose input comes from the uploaded
  // blob (that workload alone, to keep the timing short).
  const std::string blob_workload = dir / "blob_workload.jsonl";
  Spit(blob_workload, WorkloadLine("blob_scale_add_f32", "wl-blob", 4, Blob(ok_blob)));
  Completed submitted = harness.Kiln({"submit", "--definition", "blob_scale_add_f32",
                                      "--solution", solution_file.string(), "--workloads",
                                      blob_workload, "--mode", "kernelbench", "--json"});
  INFO(submitted.Describe());
  CHECK(submitted.exit_code == 0);
  const json run = json::parse(submitted.out);
  CHECK(run["status"] == "PASSED");
  REQUIRE(run["traces"].size() == 1);
  CHECK(run["traces"][0]["workload"]["inputs"]["a"]["path"] == ok_blob);

  CHECK(harness.Kiln({"defs", "import", ds.string(), "--definition", "no_such"}).exit_code == 2);
}

TEST_CASE("defs import through the controller puts the blob and the definition on every "
          "harness, and a submission through it evaluates on the blob's input") {
  ScratchDir dir, dir_a, dir_b, controller_dir;
  const fs::path ds = dir / "dataset";
  ordered_json def = ordered_json::parse(Slurp(DataPath("scale_add_f32.json")));
  def["name"] = "fleet_blob_scale_add_f32";
  Spit(ds / "definitions" / "elementwise" / "fleet_blob_scale_add_f32.json", def.dump(2));
  const std::string blob = "./blob/workloads/elementwise/fleet.safetensors";
  Spit(ds / blob, Safetensors("a", {1.5f, -2.0f, 0.25f, 8.0f}));
  Spit(ds / "workloads" / "elementwise" / "fleet.jsonl",
       WorkloadLine("fleet_blob_scale_add_f32", "wl-fleet", 4, Blob(blob)));
  HarnessInstance a(dir_a.path(), {"--check-references=false", "--worker-timeout-s", "60"});
  HarnessInstance b(dir_b.path(), {"--check-references=false", "--worker-timeout-s", "60"});
  for (HarnessInstance* h : {&a, &b}) REQUIRE(h->Kiln({"node"}).exit_code == 0);
  ControllerInstance controller(controller_dir.path(), a.address() + "," + b.address());

  Completed r = Kiln({"--server", controller.address(), "defs", "import", ds.string()}, 180);
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  for (HarnessInstance* h : {&a, &b}) {
    const std::map<std::string, json> defs = ListDefinitions(*h);
    REQUIRE(defs.count("fleet_blob_scale_add_f32") == 1);
    CHECK(defs.at("fleet_blob_scale_add_f32")["workload_count"] == 1);
    CHECK(Slurp(h->data_dir() + "/blobs/blob/workloads/elementwise/fleet.safetensors") ==
          Slurp(ds / blob));
  }
  ordered_json solution = ordered_json::parse(Slurp(DataPath("solutions/correct.json")));
  solution["definition"] = "fleet_blob_scale_add_f32";
  const std::string solution_file = dir / "fleet_solution.json";
  Spit(solution_file, solution.dump(2));
  Completed submitted =
      Kiln({"--server", controller.address(), "submit", "--definition", "fleet_blob_scale_add_f32",
            "--solution", solution_file, "--json"},
           180);
  INFO(submitted.Describe());
  REQUIRE(submitted.exit_code == 0);
  const json run = json::parse(submitted.out);
  CHECK(run["status"] == "PASSED");
  REQUIRE(run["traces"].size() == 1);
  CHECK(run["traces"][0]["workload"]["inputs"]["a"]["path"] == blob);
}
