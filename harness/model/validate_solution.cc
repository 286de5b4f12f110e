// Semantic checks of solutions. Source paths become file names inside the compile sandbox, so
// they are held to relative paths without "..", and compared after dropping "." and empty
// components ("./a.cu" and "a.cu" are the same file).
#include <array>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/model/validate.h"
#include "harness/model/validate_internal.h"

namespace kiln {
namespace {

using validate_internal::Invalid;

constexpr std::array<absl::string_view, 5> kLanguages = {"cpp", "cuda", "opencl", "python",
                                                         "triton"};

bool IsIdentifier(absl::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// `raw` with "." and empty components dropped. `path` names the field in errors.
absl::Status NormalizeSourcePath(const std::string& raw, const std::string& path,
                                 std::string* out) {
  if (raw.empty()) return Invalid(path, "empty");
  if (raw.find('\0') != std::string::npos) return Invalid(path, "contains a NUL byte");
  if (raw.front() == '/')
    return Invalid(path, absl::StrCat("absolute path '", raw, "' not allowed"));
  if (raw.back() == '/') return Invalid(path, absl::StrCat("'", raw, "' names a folder"));
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(raw, '/')) {
    if (part == "..") return Invalid(path, absl::StrCat("'..' not allowed in '", raw, "'"));
    if (!part.empty() && part != ".") parts.push_back(part);
  }
  if (parts.empty()) return Invalid(path, absl::StrCat("'", raw, "' names no file"));
  *out = absl::StrJoin(parts, "/");
  return absl::OkStatus();
}

// Normalized path -> index into s.sources().
absl::Status IndexSources(const v1::Solution& s, const std::string& sources_path,
                          const Limits* limits, std::map<std::string, int>* index) {
  if (s.sources_size() == 0) return Invalid(sources_path, "no source files");
  if (limits != nullptr && s.sources_size() > limits->max_source_files) {
    return Invalid(sources_path,
                   absl::StrCat(s.sources_size(), " files, limit ", limits->max_source_files));
  }
  int64_t total_bytes = 0;
  for (int i = 0; i < s.sources_size(); ++i) {
    const std::string path = absl::StrCat(sources_path, "[", i, "].path");
    std::string normalized;
    if (absl::Status st = NormalizeSourcePath(s.sources(i).path(), path, &normalized); !st.ok()) {
      return st;
    }
    auto [it, inserted] = index->emplace(normalized, i);
    if (!inserted) {
      return Invalid(path, absl::StrCat("duplicate '", s.sources(i).path(), "' (same file as ",
                                        sources_path, "[", it->second, "])"));
    }
    total_bytes += static_cast<int64_t>(s.sources(i).content().size());
  }
  if (limits != nullptr && total_bytes > limits->max_source_bytes) {
    return Invalid(sources_path,
                   absl::StrCat(total_bytes, " bytes (", FormatBytes(total_bytes), "), limit ",
                                limits->max_source_bytes, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace validate_internal {

absl::Status ValidateSourcesAndEntryPoint(const v1::Solution& s, absl::string_view path,
                                          const Limits* limits) {
  std::map<std::string, int> index;
  if (absl::Status st = IndexSources(s, absl::StrCat(path, ".sources"), limits, &index); !st.ok()) {
    return st;
  }
  const std::string ep_path = absl::StrCat(path, ".spec.entry_point");
  absl::StatusOr<std::pair<std::string, std::string>> ep = SplitEntryPoint(s.spec().entry_point());
  if (!ep.ok()) return Invalid(ep_path, ep.status().message());
  const auto& [file, function] = *ep;
  if (!IsIdentifier(function)) {
    return Invalid(ep_path, absl::StrCat("'", function, "' is not a function name"));
  }
  std::string normalized;
  if (absl::Status st = NormalizeSourcePath(file, ep_path, &normalized); !st.ok()) return st;
  if (!index.contains(normalized)) {
    return Invalid(ep_path, absl::StrCat("'", file, "' is not among the sources"));
  }
  return absl::OkStatus();
}

}  // namespace validate_internal

bool IsSupportedSolutionLanguage(std::string_view language) {
  const absl::string_view l(language.data(), language.size());
  return std::find(kLanguages.begin(), kLanguages.end(), l) != kLanguages.end();
}

absl::StatusOr<std::pair<std::string, std::string>> SplitEntryPoint(const std::string& ep) {
  const size_t sep = ep.find("::");
  if (sep == std::string::npos || sep == 0 || sep + 2 == ep.size() ||
      ep.find("::", sep + 2) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("expected 'file::function', got '", ep, "'"));
  }
  return std::make_pair(ep.substr(0, sep), ep.substr(sep + 2));
}

absl::Status ValidateSolution(const v1::Definition& def, const v1::Solution& s,
                              const Limits& limits) {
  if (s.name().empty()) return Invalid("solution.name", "empty");
  if (!s.definition().empty() && s.definition() != def.name()) {
    return Invalid("solution.definition",
                   absl::StrCat("'", s.definition(), "' but evaluating '", def.name(), "'"));
  }
  const std::string& language = s.spec().language();
  if (std::find(kLanguages.begin(), kLanguages.end(), language) == kLanguages.end()) {
    return Invalid("solution.spec.language", absl::StrCat("'", language, "' is not one of ",
                                                          absl::StrJoin(kLanguages, ", ")));
  }
  if (language == "python" || language == "triton") {
    absl::StatusOr<std::pair<std::string, std::string>> ep =
        SplitEntryPoint(s.spec().entry_point());
    if (ep.ok() && !absl::EndsWith(ep->first, ".py")) {
      return Invalid("solution.spec.entry_point",
                     absl::StrCat("'", ep->first, "' is not a .py file (a ", language,
                                  " solution's entry point is 'file.py::function')"));
    }
  }
  if (def.has_kernelbench()) {
    // A KernelBench problem is solved by a ModelNew class called as Model is: in torch, with
    // the inputs, returning the outputs.
    if (language != "python" && language != "triton") {
      return Invalid("solution.spec.language",
                     absl::StrCat("'", language, "': definition '", def.name(),
                                  "' is a KernelBench problem, solved by a Python file defining "
                                  "class ModelNew (language python or triton)"));
    }
    if (!s.spec().has_destination_passing_style() || s.spec().destination_passing_style()) {
      return Invalid("solution.spec.destination_passing_style",
                     absl::StrCat("definition '", def.name(),
                                  "' is a KernelBench problem: ModelNew returns its outputs, so "
                                  "destination_passing_style must be false"));
    }
  } else if (language == "python" || language == "triton") {
    // A KernelBench ModelNew file (`kiln submit --solution model_new.py`) for a definition that
    // is not a KernelBench problem would only fail later, calling the class with the inputs.
    absl::StatusOr<std::pair<std::string, std::string>> ep =
        SplitEntryPoint(s.spec().entry_point());
    if (ep.ok() && ep->second == "ModelNew") {
      return Invalid("solution.spec.entry_point",
                     absl::StrCat("'", s.spec().entry_point(), "' is a KernelBench ModelNew "
                                  "class, and definition '", def.name(), "' is not a KernelBench "
                                  "problem: its Python solutions are functions taking the "
                                  "definition's inputs (docs/python-solutions.md); a ModelNew "
                                  "file is submitted against a definition imported with `kiln "
                                  "defs import --format kernelbench`"));
    }
  }
  return validate_internal::ValidateSourcesAndEntryPoint(s, "solution", &limits);
}

}  // namespace kiln
