#include "client/import/dataset_import.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "client/inputs.h"
#include "harness/blobs/blob_upload.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"
#include "harness/model/solution_baseline.h"
#include "harness/model/validate.h"
#include "harness/verify/safetensors.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

// Regular files under `dir` ending in `ext`, relative to `root`, sorted.
std::vector<std::string> FilesUnder(const fs::path& root, const std::string& sub,
                                    const std::string& ext, std::vector<std::string>* errors) {
  std::vector<std::string> files;
  const fs::path dir = root / sub;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink,
                                           ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ext) {
      files.push_back(fs::relative(it->path(), root, ec).generic_string());
    }
  }
  if (ec) errors->push_back(absl::StrCat(sub, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// "workloads/x.jsonl: message" without the absolute folder in front (LoadDefinitionFile and
// friends name the path they were given).
std::string Relative(const std::string& message, const std::string& dir) {
  const std::string prefix = absl::StrCat(dir, "/");
  if (absl::StartsWith(message, prefix)) return message.substr(prefix.size());
  return message;
}

const v1::TensorSpec* FindInput(const v1::Definition& def, const std::string& name) {
  for (const v1::TensorSpec& t : def.inputs()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

// The safetensors inputs of `w`: blob present and holding the right tensors (the blob is added
// to `d.blobs`), or left out (one entry per workload, naming every missing path), or an error of
// the definition. Returns false when `w` must not be registered.
bool CheckBlobs(const std::string& dir, const std::string& where, const v1::Workload& w,
                DefinitionImport& d) {
  bool importable = true;
  std::set<std::string>& blob_paths = d.blob_local_paths;
  std::vector<std::string> missing, absolute;
  std::vector<DatasetBlob> blobs;
  for (const v1::WorkloadInput& in : w.inputs()) {
    if (in.kind() != v1::WorkloadInput::SAFETENSORS) continue;
    const std::string field = absl::StrCat(where, ": workload.inputs.", in.name(), ".path");
    if (!in.path().empty() && in.path().front() == '/') {
      // flashinfer-bench reads an absolute path as it is; the harness could only read it from
      // its own file system, which import cannot fill.
      if (std::find(absolute.begin(), absolute.end(), in.path()) == absolute.end()) {
        absolute.push_back(in.path());
      }
      continue;
    }
    absl::StatusOr<std::string> normalized = NormalizeBlobPath(in.path());
    if (!normalized.ok()) {
      d.errors.push_back(absl::StrCat(field, ": ", normalized.status().message()));
      importable = false;
      continue;
    }
    const std::string local = absl::StrCat(dir, "/", *normalized);
    if (!IsFile(local)) {
      if (std::find(missing.begin(), missing.end(), in.path()) == missing.end()) {
        missing.push_back(in.path());
      }
      continue;
    }
    const v1::TensorSpec* spec = FindInput(d.definition, in.name());
    if (spec == nullptr) continue;  // ValidateWorkload reported it
    absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(d.definition, *spec, w);
    if (!shape.ok()) {
      d.errors.push_back(absl::StrCat(where, ": ", shape.status().message()));
      importable = false;
      continue;
    }
    const std::string key = in.tensor_key().empty() ? in.name() : in.tensor_key();
    if (absl::Status s = CheckSafetensorsTensor(local, key, spec->dtype(), *shape); !s.ok()) {
      // The message names the file by its local path; the report names files relative to DIR.
      d.errors.push_back(absl::StrCat(
          where, ": input '", in.name(), "': ",
          absl::StrReplaceAll(s.message(), {{absl::StrCat(dir, "/"), ""}})));
      importable = false;
      continue;
    }
    blobs.push_back({in.path(), local});
  }
  if (!importable) return false;
  if (!missing.empty() || !absolute.empty()) {
    d.left_out.push_back({w.uuid(), where, absl::StrJoin(missing.empty() ? absolute : missing, ", "),
                          missing.empty() ? "absolute blob path" : "missing blob"});
    return false;
  }
  for (DatasetBlob& b : blobs) {
    if (blob_paths.insert(b.local_path).second) d.blobs.push_back(std::move(b));
  }
  return true;
}

void ScanDefinitions(const std::string& dir, const std::set<std::string>& only, DatasetScan& scan,
                     std::map<std::string, size_t>& by_name) {
  for (const std::string& file : FilesUnder(dir, "definitions", ".json", &scan.errors)) {
    absl::StatusOr<v1::Definition> def = LoadDefinitionFile(absl::StrCat(dir, "/", file));
    DefinitionImport d;
    d.file = file;
    if (!def.ok()) {
      // Without a name it cannot be selected or matched; it still counts as a failure.
      if (!only.empty()) continue;
      d.name = fs::path(file).stem().string();
      d.errors.push_back(Relative(std::string(def.status().message()), dir));
      scan.definitions.push_back(std::move(d));
      continue;
    }
    d.name = def->name();
    if (!only.empty() && only.count(d.name) == 0) continue;
    d.definition = *std::move(def);
    if (absl::Status s = ValidateDefinition(d.definition); !s.ok()) {
      d.errors.push_back(absl::StrCat(file, ": ", s.message()));
    }
    if (auto it = by_name.find(d.name); it != by_name.end()) {
      d.errors.push_back(absl::StrCat(file, ": definition '", d.name, "' is also defined by ",
                                      scan.definitions[it->second].file));
      scan.definitions.push_back(std::move(d));
      continue;
    }
    by_name[d.name] = scan.definitions.size();
    scan.definitions.push_back(std::move(d));
  }
}

void ScanWorkloads(const std::string& dir, const std::set<std::string>& only, DatasetScan& scan,
                   const std::map<std::string, size_t>& by_name) {
  const Limits limits;
  std::map<std::string, std::set<std::string>> uuids;  // definition -> uuids seen
  for (const std::string& file : FilesUnder(dir, "workloads", ".jsonl", &scan.errors)) {
    absl::StatusOr<std::string> content = ReadFile(absl::StrCat(dir, "/", file));
    if (!content.ok()) {
      scan.errors.push_back(Relative(std::string(content.status().message()), dir));
      continue;
    }
    int line_number = 0;
    for (absl::string_view raw : absl::StrSplit(*content, '\n')) {
      ++line_number;
      const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
      if (stripped.empty()) continue;
      const std::string line(stripped);
      const std::string where = absl::StrCat(file, ":", line_number);
      const nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded() || !doc.is_object()) {
        scan.errors.push_back(absl::StrCat(where, ": not a JSON object"));
        continue;
      }
      const auto name_it = doc.find("definition");
      if (name_it == doc.end() || !name_it->is_string()) {
        scan.errors.push_back(absl::StrCat(
            where, ": definition: required (a workload line names its definition)"));
        continue;
      }
      const std::string name = name_it->get<std::string>();
      if (!only.empty() && only.count(name) == 0) continue;
      const auto def_it = by_name.find(name);
      if (def_it == by_name.end()) {
        scan.errors.push_back(
            absl::StrCat(where, ": definition '", name, "' is not among the definitions"));
        continue;
      }
      DefinitionImport& d = scan.definitions[def_it->second];
      ++d.workloads_in_files;
      absl::StatusOr<v1::Workload> w = ParseWorkloadJson(line);
      if (!w.ok()) {
        d.errors.push_back(absl::StrCat(where, ": ", w.status().message()));
        continue;
      }
      if (absl::Status s = ValidateWorkload(d.definition, *w, limits); !s.ok()) {
        d.errors.push_back(absl::StrCat(where, ": ", s.message()));
        continue;
      }
      if (w->uuid().empty()) {
        d.errors.push_back(absl::StrCat(where, ": workload.uuid: required"));
        continue;
      }
      if (!uuids[name].insert(w->uuid()).second) {
        d.errors.push_back(
            absl::StrCat(where, ": workload.uuid: '", w->uuid(), "' given twice"));
        continue;
      }
      if (CheckBlobs(dir, where, *w, d)) d.workloads.push_back(*std::move(w));
    }
  }
}

void ScanSolutions(const std::string& dir, const std::set<std::string>& only, DatasetScan& scan,
                   const std::map<std::string, size_t>& by_name) {
  const Limits limits;
  std::map<std::string, std::string> names;  // solution name -> file
  for (const std::string& file : FilesUnder(dir, "solutions", ".json", &scan.errors)) {
    SolutionImport s;
    s.file = file;
    absl::StatusOr<v1::Solution> solution = LoadSolution(absl::StrCat(dir, "/", file));
    if (!solution.ok()) {
      if (!only.empty()) continue;  // cannot tell which definition it is for
      s.status = "invalid";
      s.error = Relative(std::string(solution.status().message()), dir);
      scan.solutions.push_back(std::move(s));
      continue;
    }
    s.name = solution->name();
    s.definition = solution->definition();
    s.language = solution->spec().language();
    s.author = solution->author();
    s.solution = *solution;
    if (!only.empty() && only.count(s.definition) == 0) continue;
    s.status = "valid";
    const auto def_it = by_name.find(s.definition);
    if (auto [it, inserted] = names.emplace(s.name, file); !inserted) {
      s.status = "invalid";
      s.error = absl::StrCat(file, ": solution.name: '", s.name, "' is also used by ", it->second);
    } else if (def_it == by_name.end()) {
      s.status = "invalid";
      s.error = absl::StrCat(file, ": solution.definition: '", s.definition,
                             "' is not among the definitions");
    } else if (!IsSupportedSolutionLanguage(s.language)) {
      s.status = "unsupported";
      s.error = absl::StrCat(file, ": solution.spec.language: '", s.language,
                             "' is not a language kiln evaluates");
    } else if (absl::Status v = ValidateSolution(scan.definitions[def_it->second].definition,
                                                 *solution, limits);
               !v.ok()) {
      s.status = "invalid";
      s.error = absl::StrCat(file, ": ", v.message());
    } else if (absl::Status n = ValidateSolutionName(s.name, "solution.name"); !n.ok()) {
      s.status = "invalid";  // it could not be registered under its name
      s.error = absl::StrCat(file, ": ", n.message());
    }
    scan.solutions.push_back(std::move(s));
  }
}

}  // namespace

absl::StatusOr<DatasetScan> ScanDataset(const std::string& dir_arg,
                                        const std::set<std::string>& only) {
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!IsDirectory(dir)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": not a folder"));
  }
  if (!IsDirectory(absl::StrCat(dir, "/definitions"))) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": no definitions/ folder (expected a flashinfer-bench dataset: definitions/, "
             "workloads/, solutions/, blob/)"));
  }
  DatasetScan scan;
  scan.dir = dir;
  std::map<std::string, size_t> by_name;
  ScanDefinitions(dir, only, scan, by_name);
  std::vector<std::string> unknown;
  for (const std::string& name : only) {
    if (by_name.count(name) == 0) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no definition named ",
                                                   absl::StrJoin(unknown, ", "), " in ", dir,
                                                   "/definitions"));
  }
  ScanWorkloads(dir, only, scan, by_name);
  ScanSolutions(dir, only, scan, by_name);
  return scan;
}

}  // namespace kiln::cli
