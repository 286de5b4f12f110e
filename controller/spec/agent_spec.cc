#include "controller/spec/agent_spec.h"

#include "absl/strings/str_cat.h"
#include "controller/spec/yaml_fields.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

using yaml::CheckKeys;
using yaml::FieldError;

namespace {

absl::Status ReadSweep(const YAML::Node& node, const std::string& path, CampaignFiles& files,
                       const std::string& definition_name, SweepAgentSpec* sweep) {
  std::string template_path;
  absl::Status s = yaml::ReadString(node["template"], path + ".template", &template_path);
  if (!s.ok()) return s;
  if (template_path.empty()) return FieldError(path + ".template", "is required for a sweep");
  absl::StatusOr<std::string> text = files.Read(template_path);
  if (!text.ok()) return FieldError(path + ".template", std::string(text.status().message()));
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(*text);
  if (!solution.ok()) {
    return FieldError(path + ".template", std::string(solution.status().message()));
  }
  sweep->solution_template = *solution;
  sweep->solution_template.set_definition(definition_name);
  const YAML::Node params = node["parameters"];
  std::string params_path = path + ".parameters";
  if (!params.IsDefined() || !params.IsMap() || params.size() == 0) {
    return FieldError(params_path, "expected a mapping of NAME: [values]");
  }
  std::set<std::string> declared;
  for (const auto& entry : params) {
    std::string name = entry.first.Scalar();
    std::vector<std::string> values;
    std::string value_path = absl::StrCat(params_path, ".", name);
    if (absl::Status v = yaml::ReadStringList(entry.second, value_path, &values); !v.ok()) {
      return v;
    }
    if (!entry.second.IsDefined() || values.empty()) {
      return FieldError(value_path, "expected a non-empty list of values");
    }
    sweep->parameters.emplace_back(name, values);
    declared.insert(name);
  }
  std::set<std::string> used;
  for (const v1::SourceFile& f : sweep->solution_template.sources()) {
    for (const std::string& p : Placeholders(f.content())) used.insert(p);
  }
  for (const std::string& p : used) {
    if (!declared.count(p)) {
      return FieldError(params_path, absl::StrCat("template uses {{", p, "}} but no values given"));
    }
  }
  for (const std::string& p : declared) {
    if (!used.count(p)) {
      return FieldError(absl::StrCat(params_path, ".", p), "not used by the template's sources");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadCommand(const YAML::Node& node, const std::string& path, CommandAgentSpec* c) {
  absl::Status s = yaml::ReadString(node["preset"], path + ".preset", &c->preset);
  if (s.ok()) s = yaml::ReadStringList(node["argv"], path + ".argv", &c->argv);
  if (s.ok()) s = yaml::ReadDouble(node["timeout_s"], path + ".timeout_s", 1, &c->timeout_s);
  if (s.ok()) s = yaml::ReadInt(node["max_turns"], path + ".max_turns", 1, &c->max_turns);
  if (s.ok()) s = yaml::ReadString(node["model"], path + ".model", &c->model);
  if (s.ok()) {
    s = yaml::ReadDouble(node["cost_per_request_usd"], path + ".cost_per_request_usd", 0,
                         &c->cost_per_request_usd);
  }
  if (!s.ok()) return s;
  if (!c->preset.empty() && PresetArgv(c->preset).empty()) {
    return FieldError(path + ".preset", "expected claude or codex, got '" + c->preset + "'");
  }
  if (c->preset.empty() && c->argv.empty()) {
    return FieldError(path + ".argv", "is required when no preset is named");
  }
  if (!c->preset.empty() && !c->argv.empty()) {
    return FieldError(path + ".argv", "give either a preset or argv, not both");
  }
  if (c->argv.empty()) c->argv = PresetArgv(c->preset);
  return absl::OkStatus();
}

absl::Status ReadHttp(const YAML::Node& node, const std::string& path, const std::string& type,
                      HttpAgentSpec* h) {
  h->base_url = type == "openai" ? "https://api.openai.com" : "https://api.anthropic.com";
  h->api_key_env = type == "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
  absl::Status s = yaml::ReadString(node["base_url"], path + ".base_url", &h->base_url);
  if (s.ok()) s = yaml::ReadString(node["model"], path + ".model", &h->model);
  if (s.ok()) s = yaml::ReadString(node["api_key_env"], path + ".api_key_env", &h->api_key_env);
  if (s.ok()) s = yaml::ReadInt(node["max_tokens"], path + ".max_tokens", 1, &h->max_tokens);
  if (s.ok()) s = yaml::ReadDouble(node["timeout_s"], path + ".timeout_s", 1, &h->timeout_s);
  if (s.ok()) {
    s = yaml::ReadDouble(node["usd_per_million_input_tokens"],
                         path + ".usd_per_million_input_tokens", 0,
                         &h->usd_per_million_input_tokens);
  }
  if (s.ok()) {
    s = yaml::ReadDouble(node["usd_per_million_output_tokens"],
                         path + ".usd_per_million_output_tokens", 0,
                         &h->usd_per_million_output_tokens);
  }
  if (!s.ok()) return s;
  if (h->model.empty()) return FieldError(path + ".model", "is required");
  if (h->base_url.rfind("http://", 0) != 0 && h->base_url.rfind("https://", 0) != 0) {
    return FieldError(path + ".base_url", "expected an http:// or https:// URL");
  }
  return absl::OkStatus();
}

absl::Status ReadAgent(const YAML::Node& node, const std::string& path, CampaignFiles& files,
                       const std::string& definition_name, AgentSpec* agent) {
  if (absl::Status s = yaml::ExpectMap(node, path); !s.ok()) return s;
  absl::Status s = yaml::ReadString(node["type"], path + ".type", &agent->type);
  if (s.ok()) s = yaml::ReadString(node["name"], path + ".name", &agent->name);
  if (!s.ok()) return s;
  if (agent->name.empty()) agent->name = agent->type;
  std::vector<std::string> keys = {"name", "type"};
  if (agent->type == "sweep") {
    keys.insert(keys.end(), {"template", "parameters"});
    if (s = CheckKeys(node, path, keys); !s.ok()) return s;
    return ReadSweep(node, path, files, definition_name, &agent->sweep);
  }
  if (agent->type == "command") {
    keys.insert(keys.end(),
                {"preset", "argv", "timeout_s", "max_turns", "model", "cost_per_request_usd"});
    if (s = CheckKeys(node, path, keys); !s.ok()) return s;
    return ReadCommand(node, path, &agent->command);
  }
  if (agent->type == "openai" || agent->type == "anthropic") {
    keys.insert(keys.end(), {"base_url", "model", "api_key_env", "max_tokens", "timeout_s",
                             "usd_per_million_input_tokens", "usd_per_million_output_tokens"});
    if (s = CheckKeys(node, path, keys); !s.ok()) return s;
    return ReadHttp(node, path, agent->type, &agent->http);
  }
  return FieldError(path + ".type",
                    "expected sweep, command, openai or anthropic, got '" + agent->type + "'");
}

}  // namespace

absl::Status ReadAgents(const YAML::Node& node, CampaignFiles& files,
                        const std::string& definition_name, std::vector<AgentSpec>* out) {
  if (!node.IsDefined()) return FieldError("agents", "is required");
  if (!node.IsSequence() || node.size() == 0) {
    return FieldError("agents", "expected a non-empty list of agents");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < node.size(); ++i) {
    AgentSpec agent;
    std::string path = absl::StrCat("agents[", i, "]");
    if (absl::Status s = ReadAgent(node[i], path, files, definition_name, &agent); !s.ok()) {
      return s;
    }
    if (!names.insert(agent.name).second) {
      return FieldError(path + ".name", "duplicate agent name '" + agent.name + "'");
    }
    out->push_back(std::move(agent));
  }
  return absl::OkStatus();
}

std::set<std::string> Placeholders(const std::string& text) {
  std::set<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string::npos) {
    size_t end = text.find("}}", pos + 2);
    if (end == std::string::npos) break;
    std::string name = text.substr(pos + 2, end - pos - 2);
    bool ident = !name.empty();
    for (char c : name) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (ident) out.insert(name);
    pos = end + 2;
  }
  return out;
}

std::vector<std::string> PresetArgv(const std::string& preset) {
  // Both get kiln mcp (the controller writes {mcp_config} into the workspace), so the agent can
  // evaluate inside its own loop; each evaluation counts against the campaign's budget.
  if (preset == "claude") {
    return {"claude",
            "-p",
            "{prompt}",
            "--output-format",
            "json",
            "--max-turns",
            "{max_turns}",
            "--mcp-config",
            "{mcp_config}",
            "--allowedTools",
            "Read,Write,Edit,Bash,mcp__kiln__list_definitions,mcp__kiln__show_definition,"
            "mcp__kiln__evaluate,mcp__kiln__get_run",
            "--permission-mode",
            "acceptEdits"};
  }
  if (preset == "codex") {
    return {"codex",
            "-a",
            "never",
            "-c",
            "mcp_servers.kiln.command=\"{kiln}\"",
            "-c",
            "mcp_servers.kiln.args={kiln_mcp_args_toml}",
            "exec",
            "--sandbox",
            "workspace-write",
            "-C",
            "{workspace}",
            "--skip-git-repo-check",
            "--json",
            "{prompt}"};
  }
  return {};
}

}  // namespace kiln::controller
