#include "controller/agents/workspace.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

namespace fs = std::filesystem;

namespace {

constexpr char kAbiSummary[] =
    "Solutions export `extern \"C\" int ENTRY(const kiln_tensor* args, int32_t nargs, const "
    "kiln_context* ctx)` from <kiln/abi.h>: inputs in definition order, then outputs "
    "(destination-passing style). kiln_tensor = {void* data; kiln_dtype dtype; int32_t ndim; "
    "const int64_t* shape; const int64_t* strides}. Return 0 on success; enqueue GPU work on "
    "ctx->stream. Outputs must be written completely on every call; inputs must not be "
    "modified.\n";

absl::Status WriteFile(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// A source path is kept inside the workspace.
bool SafeRelative(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == "..") return false;
  }
  return true;
}

std::string Fence(const std::string& lang, const std::string& body) {
  return absl::StrCat("```", lang, "\n", body, body.empty() || body.back() == '\n' ? "" : "\n",
                      "```\n");
}

}  // namespace

v1::BuildSpec DefaultBuildSpec(const CampaignSpec& spec, const std::optional<v1::Solution>& inc) {
  if (inc.has_value()) return inc->spec();
  for (const AgentSpec& a : spec.agents) {
    if (a.type == "sweep") return a.sweep.solution_template.spec();
  }
  if (!spec.baseline_is_reference) return spec.baseline.spec();
  v1::BuildSpec b;
  b.set_language(spec.target.language);
  b.set_entry_point(spec.target.entry_point.empty() ? "kernel.cc::run" : spec.target.entry_point);
  for (const std::string& h : spec.target.hardware) b.add_target_hardware(h);
  if (spec.target.hardware.empty())
    b.add_target_hardware(spec.target.backend == "host" ? "cpu" : "gpu");
  return b;
}

absl::StatusOr<std::string> PrepareWorkspace(const CampaignSpec& spec, const AgentRequest& request,
                                             const std::string& evidence_markdown) {
  fs::path dir(request.workspace);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir.string()));
  std::string task = absl::StrCat("# Task: a faster `", spec.definition_name, "`\n\n");
  absl::StrAppend(&task, "Campaign `", spec.name, "`, round ", request.round, ", ", request.pass,
                  " pass.\n\n## What to do now\n\n");
  if (request.pass == "functional") {
    absl::StrAppend(&task, "Make the candidate correct on every workload.\n\n",
                    request.feedback.empty() ? "" : Fence("text", request.feedback));
  } else {
    absl::StrAppend(&task, "Follow exactly one direction: **", request.direction, "**\n\n");
  }
  v1::BuildSpec build = DefaultBuildSpec(spec, request.incumbent);
  absl::StrAppend(&task, "## Target\n\nbackend ", spec.target.backend, ", language ",
                  build.language(), ", entry point `", build.entry_point(), "`.\n\n## ABI\n\n",
                  kAbiSummary, "\n## Definition\n\n");
  if (spec.definition.inputs_size() > 0) {
    std::string def_json = DefinitionToJson(spec.definition, false, 2);
    absl::StrAppend(&task, "definition.json:\n\n", Fence("json", def_json));
    if (absl::Status s = WriteFile(dir / "definition.json", def_json); !s.ok()) return s;
    for (const std::string& c : spec.definition.constraints()) {
      absl::StrAppend(&task, "- constraint: ", c, "\n");
    }
  } else {
    absl::StrAppend(&task, "`", spec.definition_name, "` (registered on the harness).\n");
  }
  if (request.incumbent.has_value()) {
    absl::StrAppend(&task, "\n## Incumbent (the solution to beat)\n\n");
    std::string sol = SolutionToJson(*request.incumbent, 2);
    if (absl::Status s = WriteFile(dir / "incumbent" / "solution.json", sol); !s.ok()) return s;
    for (const v1::SourceFile& f : request.incumbent->sources()) {
      absl::StrAppend(&task, "`", f.path(), "`:\n\n", Fence("", f.content()));
    }
  } else {
    absl::StrAppend(&task, "\nThe incumbent is the definition's reference.\n");
  }
  if (!evidence_markdown.empty()) absl::StrAppend(&task, "\n## Evidence\n\n", evidence_markdown);
  if (!spec.skills.empty()) absl::StrAppend(&task, "\n## Skills\n\n");
  for (const auto& [name, text] : spec.skills) {
    absl::StrAppend(&task, "### ", name, "\n\n", text, "\n");
    if (absl::Status s = WriteFile(dir / "skills" / name, text); !s.ok()) return s;
  }
  absl::StrAppend(&task,
                  "\n## Output\n\nWrite `solution.json` in this folder: a flashinfer-bench "
                  "Solution {name, definition: \"",
                  spec.definition_name,
                  "\", author, spec {language, target_hardware, entry_point}, sources [{path, "
                  "content}]}. A source whose content is empty is read from the file at its "
                  "path in this folder.\n");
  if (absl::Status s = WriteFile(dir / "TASK.md", task); !s.ok()) return s;
  return task;
}

absl::StatusOr<v1::Solution> ReadWorkspaceSolution(const std::string& dir,
                                                   const CampaignSpec& spec) {
  fs::path path = fs::path(dir) / "solution.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("the agent wrote no solution.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<v1::Solution> s = ParseSolutionJson(buffer.str());
  if (!s.ok())
    return absl::InvalidArgumentError(absl::StrCat("solution.json: ", s.status().message()));
  for (int i = 0; i < s->sources_size(); ++i) {
    v1::SourceFile* f = s->mutable_sources(i);
    if (!SafeRelative(f->path())) {
      return absl::InvalidArgumentError(
          absl::StrCat("solution.json: sources[", i, "].path '", f->path(), "' leaves the folder"));
    }
    if (!f->content().empty()) continue;
    std::ifstream src(fs::path(dir) / f->path(), std::ios::binary);
    if (!src) {
      return absl::NotFoundError(
          absl::StrCat("solution.json: sources[", i, "]: no file ", f->path()));
    }
    std::stringstream content;
    content << src.rdbuf();
    f->set_content(content.str());
  }
  if (s->sources_size() == 0) return absl::InvalidArgumentError("solution.json: no sources");
  s->set_definition(spec.definition_name);
  return *s;
}

}  // namespace kiln::controller
