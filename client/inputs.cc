#include "client/inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <nlohmann/json.hpp>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

// The same status with "<path>: " in front of its message.
absl::Status InFile(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<std::string> ReadUserFile(const std::string& path) {
  if (IsDirectory(path)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder"));
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) {
    // ReadFile's messages already name the path.
    return absl::InvalidArgumentError(content.status().message());
  }
  return content;
}

// The folder's files (but solution.json) as {"path","content"} objects, sorted by path.
absl::StatusOr<nlohmann::ordered_json> FolderSources(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), dir, ec).generic_string();
    if (ec) break;
    if (rel == "solution.json") continue;
    paths.push_back(rel);
  }
  if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
  std::sort(paths.begin(), paths.end());
  nlohmann::ordered_json sources = nlohmann::ordered_json::array();
  for (const std::string& rel : paths) {
    absl::StatusOr<std::string> content = ReadUserFile(absl::StrCat(dir, "/", rel));
    if (!content.ok()) return content.status();
    sources.push_back({{"path", rel}, {"content", *std::move(content)}});
  }
  if (sources.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": solution.sources: empty, and no source files beside solution.json"));
  }
  return sources;
}

// solution.json of a folder with its sources filled in from the folder when it has none. Text
// that is not a JSON object is returned unchanged, for the solution parser to report.
absl::StatusOr<std::string> WithFolderSources(const std::string& dir, const std::string& text) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return text;
  auto it = doc.find("sources");
  if (it != doc.end() && it->is_array() && !it->empty()) return text;
  absl::StatusOr<nlohmann::ordered_json> sources = FolderSources(dir);
  if (!sources.ok()) return sources.status();
  doc["sources"] = *std::move(sources);
  return doc.dump();
}

}  // namespace

bool IsFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

absl::StatusOr<v1::Definition> LoadDefinitionFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadUserFile(path);
  if (!content.ok()) return content.status();
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(*content);
  if (!def.ok()) return InFile(path, def.status());
  return def;
}

absl::StatusOr<std::vector<v1::Workload>> LoadWorkloadsFile(const std::string& path,
                                                            const std::string& definition_name) {
  absl::StatusOr<std::string> content = ReadUserFile(path);
  if (!content.ok()) return content.status();
  absl::StatusOr<std::vector<v1::Workload>> workloads =
      ParseWorkloadsJsonl(*content, definition_name);
  if (!workloads.ok()) return InFile(path, workloads.status());
  return workloads;
}

absl::StatusOr<v1::Solution> LoadKernelBenchFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadUserFile(path);
  if (!content.ok()) return content.status();
  // ModelNew at module level: a class, a name bound to one (`ModelNew = Model`, the reference
  // submitted as its own candidate), or an import under that name. The worker checks that it
  // is a class.
  static const std::regex kModelNew(
      R"((^|\n)(class[ \t]+ModelNew\b|ModelNew[ \t]*(:[^=\n]*)?=[^=]|)"
      R"((from[ \t]+[\w.]+[ \t]+)?import[ \t][^\n]*\bas[ \t]+ModelNew\b))");
  if (!std::regex_search(*content, kModelNew)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a .py solution is a KernelBench file defining class ModelNew, and this one "
              "defines none (other solutions are a solution.json, or a folder holding one)"));
  }
  static const std::regex kTriton(R"((^|\n)[ \t]*(import[ \t]+triton|from[ \t]+triton)\b)");
  const bool triton = std::regex_search(*content, kTriton);
  const std::string file = fs::path(path).filename().string();
  v1::Solution s;
  // A registry-style name from the file name: letters, digits and _.+- only.
  std::string name = fs::path(path).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '+' &&
        c != '-') {
      c = '_';
    }
  }
  s.set_name(name);
  s.set_description("a KernelBench ModelNew file");
  v1::BuildSpec* spec = s.mutable_spec();
  spec->set_language(triton ? "triton" : "python");
  spec->add_target_hardware("cuda");
  spec->set_entry_point(absl::StrCat(file, "::ModelNew"));
  spec->add_dependencies("torch");
  if (triton) spec->add_dependencies("triton");
  spec->set_destination_passing_style(false);
  v1::SourceFile* source = s.add_sources();
  source->set_path(file);
  source->set_content(*std::move(content));
  return s;
}

absl::StatusOr<v1::Solution> LoadSolution(const std::string& path) {
  if (IsFile(path) && absl::EndsWith(path, ".py")) return LoadKernelBenchFile(path);
  bool folder = IsDirectory(path);
  std::string file = folder ? absl::StrCat(path, "/solution.json") : path;
  if (folder && !IsFile(file)) {
    // A folder of Solution files (flashinfer-bench's layout, what `kiln runs export
    // --solutions` writes) is not one solution: name the files it holds, unless it holds one.
    std::vector<std::string> jsons;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file(ec) && entry.path().extension() == ".json") {
        jsons.push_back(entry.path().filename().string());
      }
    }
    std::sort(jsons.begin(), jsons.end());
    // One Solution file (a solution exported alone): it is the solution, sources inline.
    if (jsons.size() == 1) return LoadSolution((fs::path(path) / jsons.front()).string());
    if (!jsons.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": no solution.json (a solution folder holds one); this folder holds ",
          jsons.size(), " Solution files",
          " (flashinfer-bench's layout, as kiln runs export --solutions writes): pass one, as "
          "--solution ", (fs::path(path) / jsons.front()).string()));
    }
  }
  absl::StatusOr<std::string> content = ReadUserFile(file);
  if (!content.ok()) return content.status();
  if (folder) {
    content = WithFolderSources(path, *content);
    if (!content.ok()) return content.status();
  }
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(*content);
  if (!solution.ok()) return InFile(file, solution.status());
  return solution;
}

}  // namespace kiln::cli
