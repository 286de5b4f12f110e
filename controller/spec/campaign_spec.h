// A campaign file (YAML): what to optimise, against what, with which agents, within which budget
// and under which promotion rule. Every field is validated; errors name the field
// ("budget.max_candidates: expected a non-negative integer, got 'many'").
//
//   DiskCampaignFiles files("examples");
//   absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(yaml_text, files);
//
// Paths in the YAML are relative to the YAML's folder. The files a spec reads are collected so
// that the CLI can ship them to a remote controller, which parses the same YAML again over
// MapCampaignFiles.
#ifndef KILN_CONTROLLER_SPEC_CAMPAIGN_SPEC_H_
#define KILN_CONTROLLER_SPEC_CAMPAIGN_SPEC_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln::controller {

// Where a spec's files come from.
class CampaignFiles {
 public:
  virtual ~CampaignFiles() = default;
  // The content of `path` (relative to the YAML's folder).
  virtual absl::StatusOr<std::string> Read(const std::string& path) = 0;
  // Paths (relative to the YAML's folder, "skills/x.md") of the *.md files directly in `dir`.
  virtual absl::StatusOr<std::vector<std::string>> ListMarkdown(const std::string& dir) = 0;
};

// Files on disk under `base_dir`; remembers every file read, for shipping.
class DiskCampaignFiles : public CampaignFiles {
 public:
  explicit DiskCampaignFiles(std::string base_dir) : base_dir_(std::move(base_dir)) {}
  absl::StatusOr<std::string> Read(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListMarkdown(const std::string& dir) override;
  const std::map<std::string, std::string>& read() const { return read_; }

 private:
  std::string base_dir_;
  std::map<std::string, std::string> read_;
};

// Files shipped with a StartCampaign request.
class MapCampaignFiles : public CampaignFiles {
 public:
  explicit MapCampaignFiles(std::map<std::string, std::string> files) : files_(std::move(files)) {}
  absl::StatusOr<std::string> Read(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListMarkdown(const std::string& dir) override;

 private:
  std::map<std::string, std::string> files_;
};

struct SweepAgentSpec {
  v1::Solution solution_template;  // sources (and name) hold {{PARAM}} placeholders
  // Parameter name -> values, in the YAML's order.
  std::vector<std::pair<std::string, std::vector<std::string>>> parameters;
};

struct CommandAgentSpec {
  std::string preset;             // "" | claude | codex
  std::vector<std::string> argv;  // {prompt}, {workspace}, {max_turns}, {model} are substituted
  double timeout_s = 1800;
  int max_turns = 30;
  std::string model;
  double cost_per_request_usd = 0;  // charged when the program reports no cost itself
};

struct HttpAgentSpec {
  std::string base_url;  // openai: https://api.openai.com  anthropic: https://api.anthropic.com
  std::string model;
  std::string api_key_env;  // name of the environment variable holding the key
  int max_tokens = 8192;
  double timeout_s = 600;
  double usd_per_million_input_tokens = 0;
  double usd_per_million_output_tokens = 0;
};

struct AgentSpec {
  std::string name;
  std::string type;  // sweep | command | openai | anthropic
  SweepAgentSpec sweep;
  CommandAgentSpec command;
  HttpAgentSpec http;
};

struct BudgetSpec {  // 0 = no limit, except max_rounds and max_candidates which default
  int max_candidates = 20;
  int max_rounds = 20;
  double wall_clock_s = 3600;
  double max_cost_usd = 0;
  double max_gpu_seconds = 0;
};

struct PromotionSpec {
  double min_improvement = 0.01;  // relative gain always required, on top of measured noise
  bool confirm = true;            // re-evaluate a winner in the same round before promoting
};

struct SupervisorSpec {
  int plateau_rounds = 5;       // optimisation rounds without promotion before switching
  int max_failures = 4;         // consecutive failed candidates before switching
  int max_duplicates = 3;       // consecutive all-duplicate answers before switching
  int functional_attempts = 3;  // repair attempts on one failing candidate
};

struct TargetSpec {
  std::string backend = "host";  // host | cuda | level_zero
  std::string mode;              // timing mode; empty: the harness's default
  std::string language = "cpp";
  std::string entry_point;  // for agents that write from scratch
  std::vector<std::string> hardware;
  double peak_bandwidth_gbps = 0;  // for the roofline floor in the evidence; 0: not known
};

struct CampaignSpec {
  std::string name;
  std::string definition_name;
  bool definition_from_file = false;    // register it (with `workloads`) on every harness
  v1::Definition definition;            // complete when from a file or built in; else name only
  std::vector<v1::Workload> workloads;  // empty: every workload registered on the harness
  bool baseline_is_reference = true;
  // baseline: torch_eager | torch_compile (the definition's Python reference under torch) or
  // solution:NAME (a solution registered on the harnesses for the definition): a baseline the
  // harness times beside every candidate (EvaluateRequest.baselines); "" for none.
  std::string harness_baseline;
  v1::Solution baseline;
  TargetSpec target;
  std::vector<AgentSpec> agents;
  BudgetSpec budget;
  PromotionSpec promotion;
  SupervisorSpec supervisor;
  int parallel = 1;  // candidates of this campaign evaluated at once
  // `profile: true | false | basic | memory | compute | full` (default true, the full set):
  // each optimisation round's evidence carries an Nsight Compute profile of the incumbent on
  // its slowest workload (relative to the reference) where a harness can take one.
  bool profile = true;
  std::string profile_section = "full";
  std::vector<std::pair<std::string, std::string>> skills;  // file name, markdown
};

absl::StatusOr<CampaignSpec> ParseCampaignSpec(const std::string& yaml, CampaignFiles& files);

// The file name part and the folder part of a path ("a/b.yaml" -> "a", "b.yaml").
std::pair<std::string, std::string> SplitPath(const std::string& path);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_SPEC_CAMPAIGN_SPEC_H_
