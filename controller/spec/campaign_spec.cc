#include "controller/spec/campaign_spec.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/spec/agent_spec.h"
#include "controller/spec/yaml_fields.h"
#include "harness/definitions/builtins.h"
#include "harness/model/json_interop.h"
#include "harness/model/solution_baseline.h"
#include "harness/profile/profiling_support.h"

namespace kiln::controller {

namespace fs = std::filesystem;
using yaml::CheckKeys;
using yaml::FieldError;

namespace {

// A path the YAML names must stay inside the YAML's folder tree when shipped.
absl::Status CheckRelative(const std::string& path, const std::string& field) {
  if (path.empty()) return FieldError(field, "must not be empty");
  fs::path p(path);
  for (const auto& part : p) {
    if (part == "..") return FieldError(field, "must not contain '..'");
  }
  return absl::OkStatus();
}

absl::Status ReadDefinition(const YAML::Node& root, CampaignFiles& files, CampaignSpec* spec) {
  if (!root["definition"].IsDefined()) return FieldError("definition", "is required");
  std::string value;
  if (absl::Status s = yaml::ReadString(root["definition"], "definition", &value); !s.ok()) {
    return s;
  }
  if (!absl::EndsWith(value, ".json")) {
    spec->definition_name = value;
    spec->definition.set_name(value);
    absl::StatusOr<std::vector<BuiltinDefinition>> builtins = LoadBuiltinDefinitions();
    if (builtins.ok()) {
      for (const BuiltinDefinition& b : *builtins) {
        if (b.definition.name() == value) spec->definition = b.definition;
      }
    }
    if (spec->definition_name.empty()) return FieldError("definition", "must not be empty");
  } else {
    if (absl::Status s = CheckRelative(value, "definition"); !s.ok()) return s;
    absl::StatusOr<std::string> text = files.Read(value);
    if (!text.ok()) return FieldError("definition", std::string(text.status().message()));
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(*text);
    if (!def.ok()) return FieldError("definition", std::string(def.status().message()));
    spec->definition = *def;
    spec->definition_name = def->name();
    spec->definition_from_file = true;
  }
  std::string workloads;
  if (absl::Status s = yaml::ReadString(root["workloads"], "workloads", &workloads); !s.ok()) {
    return s;
  }
  if (workloads.empty()) {
    if (spec->definition_from_file) {
      return FieldError("workloads", "is required when definition is a file");
    }
    return absl::OkStatus();
  }
  if (absl::Status s = CheckRelative(workloads, "workloads"); !s.ok()) return s;
  absl::StatusOr<std::string> text = files.Read(workloads);
  if (!text.ok()) return FieldError("workloads", std::string(text.status().message()));
  absl::StatusOr<std::vector<v1::Workload>> parsed =
      ParseWorkloadsJsonl(*text, spec->definition_name);
  if (!parsed.ok()) return FieldError("workloads", std::string(parsed.status().message()));
  if (parsed->empty()) return FieldError("workloads", "holds no workload");
  spec->workloads = *parsed;
  return absl::OkStatus();
}

absl::Status ReadBaseline(const YAML::Node& node, CampaignFiles& files, CampaignSpec* spec) {
  if (!node.IsDefined() || (node.IsScalar() && node.Scalar() == "reference")) {
    spec->baseline_is_reference = true;
    return absl::OkStatus();
  }
  if (node.IsScalar() && (node.Scalar() == "torch_eager" || node.Scalar() == "torch_compile")) {
    spec->baseline_is_reference = true;  // no solution of its own to evaluate
    spec->harness_baseline = node.Scalar();
    return absl::OkStatus();
  }
  if (node.IsScalar()) {
    if (std::optional<std::string> name = SolutionBaselineName(node.Scalar()); name.has_value()) {
      // Registered on the harnesses (kiln solutions add): they time it, nothing to evaluate here.
      if (absl::Status s = ValidateSolutionName(*name, "baseline"); !s.ok()) return s;
      spec->baseline_is_reference = true;
      spec->harness_baseline = node.Scalar();
      return absl::OkStatus();
    }
  }
  if (!node.IsMap()) {
    return FieldError("baseline",
                      "expected 'reference', 'torch_eager', 'torch_compile', 'solution:NAME' (a "
                      "registered solution) or {solution: FILE.json}");
  }
  if (absl::Status s = CheckKeys(node, "baseline", {"solution"}); !s.ok()) return s;
  std::string path;
  if (absl::Status s = yaml::ReadString(node["solution"], "baseline.solution", &path); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRelative(path, "baseline.solution"); !s.ok()) return s;
  absl::StatusOr<std::string> text = files.Read(path);
  if (!text.ok()) return FieldError("baseline.solution", std::string(text.status().message()));
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(*text);
  if (!solution.ok()) {
    return FieldError("baseline.solution", std::string(solution.status().message()));
  }
  spec->baseline_is_reference = false;
  spec->baseline = *solution;
  spec->baseline.set_definition(spec->definition_name);
  return absl::OkStatus();
}

absl::Status ReadTarget(const YAML::Node& node, TargetSpec* t) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = yaml::ExpectMap(node, "target"); !s.ok()) return s;
  if (absl::Status s = CheckKeys(
          node, "target",
          {"backend", "mode", "language", "entry_point", "hardware", "peak_bandwidth_gbps"});
      !s.ok()) {
    return s;
  }
  absl::Status s = yaml::ReadString(node["backend"], "target.backend", &t->backend);
  if (s.ok()) s = yaml::ReadString(node["mode"], "target.mode", &t->mode);
  if (s.ok()) s = yaml::ReadString(node["language"], "target.language", &t->language);
  if (s.ok()) s = yaml::ReadString(node["entry_point"], "target.entry_point", &t->entry_point);
  if (s.ok()) s = yaml::ReadStringList(node["hardware"], "target.hardware", &t->hardware);
  if (s.ok()) {
    s = yaml::ReadDouble(node["peak_bandwidth_gbps"], "target.peak_bandwidth_gbps", 0,
                         &t->peak_bandwidth_gbps);
  }
  if (!s.ok()) return s;
  static const std::set<std::string> kBackends = {"host", "cuda", "level_zero"};
  if (!kBackends.count(t->backend)) {
    return FieldError("target.backend",
                      "expected host, cuda or level_zero, got '" + t->backend + "'");
  }
  static const std::set<std::string> kModes = {"", "official", "kernelbench", "robust"};
  if (!kModes.count(t->mode)) {
    return FieldError("target.mode",
                      "expected official, kernelbench or robust, got '" + t->mode + "'");
  }
  static const std::set<std::string> kLanguages = {"cpp", "cuda", "opencl", "python", "triton"};
  if (!kLanguages.count(t->language)) {
    return FieldError("target.language", "unknown language '" + t->language + "'");
  }
  if (!t->entry_point.empty() && t->entry_point.find("::") == std::string::npos) {
    return FieldError("target.entry_point", "expected FILE::FUNCTION");
  }
  return absl::OkStatus();
}

absl::Status ReadBudget(const YAML::Node& node, BudgetSpec* b) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = yaml::ExpectMap(node, "budget"); !s.ok()) return s;
  if (absl::Status s = CheckKeys(
          node, "budget",
          {"max_candidates", "max_rounds", "wall_clock_s", "max_cost_usd", "max_gpu_seconds"});
      !s.ok()) {
    return s;
  }
  absl::Status s =
      yaml::ReadInt(node["max_candidates"], "budget.max_candidates", 0, &b->max_candidates);
  if (s.ok()) s = yaml::ReadInt(node["max_rounds"], "budget.max_rounds", 0, &b->max_rounds);
  if (s.ok()) {
    s = yaml::ReadDouble(node["wall_clock_s"], "budget.wall_clock_s", 0, &b->wall_clock_s);
  }
  if (s.ok()) {
    s = yaml::ReadDouble(node["max_cost_usd"], "budget.max_cost_usd", 0, &b->max_cost_usd);
  }
  if (s.ok()) {
    s = yaml::ReadDouble(node["max_gpu_seconds"], "budget.max_gpu_seconds", 0, &b->max_gpu_seconds);
  }
  return s;
}

absl::Status ReadPromotion(const YAML::Node& node, PromotionSpec* p) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = yaml::ExpectMap(node, "promotion"); !s.ok()) return s;
  if (absl::Status s = CheckKeys(node, "promotion", {"min_improvement", "confirm"}); !s.ok()) {
    return s;
  }
  absl::Status s = yaml::ReadDouble(node["min_improvement"], "promotion.min_improvement", 0,
                                    &p->min_improvement);
  if (s.ok()) s = yaml::ReadBool(node["confirm"], "promotion.confirm", &p->confirm);
  if (s.ok() && p->min_improvement >= 1) {
    return FieldError("promotion.min_improvement", "must be a fraction below 1 (0.02 = 2%)");
  }
  return s;
}

absl::Status ReadSupervisor(const YAML::Node& node, SupervisorSpec* v) {
  if (!node.IsDefined()) return absl::OkStatus();
  if (absl::Status s = yaml::ExpectMap(node, "supervisor"); !s.ok()) return s;
  if (absl::Status s =
          CheckKeys(node, "supervisor",
                    {"plateau_rounds", "max_failures", "max_duplicates", "functional_attempts"});
      !s.ok()) {
    return s;
  }
  absl::Status s =
      yaml::ReadInt(node["plateau_rounds"], "supervisor.plateau_rounds", 1, &v->plateau_rounds);
  if (s.ok()) {
    s = yaml::ReadInt(node["max_failures"], "supervisor.max_failures", 1, &v->max_failures);
  }
  if (s.ok()) {
    s = yaml::ReadInt(node["max_duplicates"], "supervisor.max_duplicates", 1, &v->max_duplicates);
  }
  if (s.ok()) {
    s = yaml::ReadInt(node["functional_attempts"], "supervisor.functional_attempts", 1,
                      &v->functional_attempts);
  }
  return s;
}

absl::Status ReadSkills(const YAML::Node& node, CampaignFiles& files, CampaignSpec* spec) {
  std::string dir;
  if (absl::Status s = yaml::ReadString(node, "skills", &dir); !s.ok()) return s;
  if (dir.empty()) return absl::OkStatus();
  if (absl::Status s = CheckRelative(dir, "skills"); !s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> names = files.ListMarkdown(dir);
  if (!names.ok()) return FieldError("skills", std::string(names.status().message()));
  for (const std::string& name : *names) {
    absl::StatusOr<std::string> text = files.Read(name);
    if (!text.ok()) return FieldError("skills", std::string(text.status().message()));
    spec->skills.emplace_back(fs::path(name).filename().string(), *text);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(const YAML::Node& root, CampaignFiles& files, CampaignSpec* spec) {
  if (absl::Status s = yaml::ExpectMap(root, "campaign"); !s.ok()) return s;
  if (absl::Status s = CheckKeys(root, "",
                                 {"name", "definition", "workloads", "baseline", "target", "agents",
                                  "budget", "promotion", "supervisor", "parallel", "skills",
                                  "profile"});
      !s.ok()) {
    return s;
  }
  absl::Status s = yaml::ReadString(root["name"], "name", &spec->name);
  if (s.ok()) s = ReadDefinition(root, files, spec);
  if (s.ok()) s = ReadBaseline(root["baseline"], files, spec);
  if (s.ok()) s = ReadTarget(root["target"], &spec->target);
  if (s.ok()) s = ReadAgents(root["agents"], files, spec->definition_name, &spec->agents);
  if (s.ok()) s = ReadBudget(root["budget"], &spec->budget);
  if (s.ok()) s = ReadPromotion(root["promotion"], &spec->promotion);
  if (s.ok()) s = ReadSupervisor(root["supervisor"], &spec->supervisor);
  if (s.ok()) s = yaml::ReadInt(root["parallel"], "parallel", 1, &spec->parallel);
  if (s.ok()) s = ReadSkills(root["skills"], files, spec);
  if (s.ok() && root["profile"]) {
    std::string profile;
    s = yaml::ReadString(root["profile"], "profile", &profile);
    if (s.ok()) {
      if (profile == "true") {
        spec->profile = true;
      } else if (profile == "false") {
        spec->profile = false;
      } else if (ValidateProfileSection(profile, "profile").ok()) {
        spec->profile = true;
        spec->profile_section = profile;
      } else {
        return FieldError("profile", absl::StrCat("'", profile, "' is not one of true, false, ",
                                                  absl::StrJoin(ProfileSectionNames(), ", ")));
      }
    }
  }
  if (!s.ok()) return s;
  if (spec->name.empty()) spec->name = spec->definition_name;
  if (spec->parallel > 64) return FieldError("parallel", "at most 64");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> DiskCampaignFiles::Read(const std::string& path) {
  fs::path full = fs::path(base_dir_) / path;
  std::ifstream in(full, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", full.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  read_[path] = buffer.str();
  return buffer.str();
}

absl::StatusOr<std::vector<std::string>> DiskCampaignFiles::ListMarkdown(const std::string& dir) {
  std::error_code ec;
  fs::path full = fs::path(base_dir_) / dir;
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(full, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".md") {
      out.push_back((fs::path(dir) / entry.path().filename()).lexically_normal().string());
    }
  }
  if (ec) return absl::NotFoundError(absl::StrCat("cannot list ", full.string()));
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::string> MapCampaignFiles::Read(const std::string& path) {
  auto it = files_.find(path);
  if (it == files_.end()) return absl::NotFoundError(absl::StrCat("file '", path, "' not sent"));
  return it->second;
}

absl::StatusOr<std::vector<std::string>> MapCampaignFiles::ListMarkdown(const std::string& dir) {
  std::string prefix = (fs::path(dir) / "").lexically_normal().string();
  std::vector<std::string> out;
  for (const auto& [path, content] : files_) {
    if (absl::StartsWith(path, prefix) && absl::EndsWith(path, ".md") &&
        path.find('/', prefix.size()) == std::string::npos) {
      out.push_back(path);
    }
  }
  return out;
}

absl::StatusOr<CampaignSpec> ParseCampaignSpec(const std::string& yaml_text, CampaignFiles& files) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("campaign file: line ", e.mark.line + 1, ": ", e.msg));
  }
  CampaignSpec spec;
  try {
    if (absl::Status s = ReadAll(root, files, &spec); !s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("campaign file: ", e.what()));
  }
  return spec;
}

std::pair<std::string, std::string> SplitPath(const std::string& path) {
  fs::path p(path);
  std::string dir = p.parent_path().string();
  return {dir.empty() ? "." : dir, p.filename().string()};
}

}  // namespace kiln::controller
