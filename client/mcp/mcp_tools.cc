// The tools and resources of `kiln mcp` (client/mcp/mcp_server.h): each one harness call (evaluate:
// a stream), answered as text an agent reads and the same as JSON.
#include <grpcpp/grpcpp.h>

#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/connection.h"
#include "client/definition_detail.h"
#include "client/evaluation.h"
#include "client/inputs.h"
#include "client/mcp/mcp_server.h"
#include "client/rejection_advice.h"
#include "client/views.h"
#include "harness/model/json_interop.h"
#include "harness/model/speedup_interval.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

constexpr char kDefinitionPrefix[] = "kiln://definitions/";
constexpr char kRunPrefix[] = "kiln://runs/";

// A tool's bad argument: the field and what it must be, as the tool's (error) result.
ToolResult ArgumentError(const std::string& field, const std::string& need) {
  return {absl::StrCat("arguments.", field, ": ", need), nullptr, true};
}

// A failed harness call as the CLI words it ("kiln: NOT_FOUND: definition: unknown ...").
// One unary call of the harness for a tool call, which notifications/cancelled can cancel.
template <typename Rpc>
grpc::Status Unary(Connection& connection, CallState& state, Rpc rpc) {
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  state.SetContext(&context);
  grpc::Status status = rpc(&context);
  state.SetContext(nullptr);
  return status;
}

ToolResult CallError(Connection& connection, const grpc::Status& status) {
  return {connection.Describe(status), Json{{"code", StatusCodeName(status.error_code())},
                                            {"message", status.error_message()}},
          true};
}

// The string argument `name`: "" when absent; false (and `error`) when present but not a string.
bool StringArg(const Json& args, const std::string& name, std::string* value, ToolResult* error) {
  if (!args.contains(name) || args[name].is_null()) return true;
  if (!args[name].is_string()) {
    *error = ArgumentError(name, "must be a string");
    return false;
  }
  *value = args[name].get<std::string>();
  return true;
}

Json Schema(Json properties, std::vector<std::string> required = {}) {
  Json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = required;
  return schema;
}

// The solution `evaluate` was given: inline JSON, files, or a path on this machine.
absl::StatusOr<v1::Solution> SolutionArgument(const Json& args, const std::string& definition) {
  const int given = (args.contains("solution") ? 1 : 0) + (args.contains("files") ? 1 : 0) +
                    (args.contains("path") ? 1 : 0);
  if (given == 0) {
    return absl::InvalidArgumentError(
        "arguments: give the solution as `files` (with `language` and `entry_point`), as "
        "`solution` (a flashinfer-bench Solution object) or as `path` (a solution.json or a "
        "folder holding one, on the machine running kiln mcp)");
  }
  if (given > 1) {
    return absl::InvalidArgumentError(
        "arguments: give only one of `files`, `solution` and `path`");
  }
  absl::StatusOr<v1::Solution> solution;
  if (args.contains("path")) {
    if (!args["path"].is_string()) {
      return absl::InvalidArgumentError("arguments.path: must be a string");
    }
    solution = LoadSolution(args["path"].get<std::string>());
  } else if (args.contains("solution")) {
    if (!args["solution"].is_object()) {
      return absl::InvalidArgumentError(
          "arguments.solution: must be a flashinfer-bench Solution object");
    }
    Json s = args["solution"];
    if (!s.contains("definition")) s["definition"] = definition;
    solution = ParseSolutionJson(s.dump());
    if (!solution.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments.solution: ", solution.status().message()));
    }
  } else {
    const Json& files = args["files"];
    if (!files.is_object() || files.empty()) {
      return absl::InvalidArgumentError(
          "arguments.files: must be an object of file path -> content, e.g. "
          "{\"kernel.cu\": \"...\"}");
    }
    for (const char* field : {"language", "entry_point"}) {
      if (!args.contains(field) || !args[field].is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "arguments.", field, ": required with `files` (",
            std::string(field) == "language" ? "cuda, cpp, python, triton or opencl"
                                             : "\"kernel.cu::run\" or \"kernel.py::run\"",
            ")"));
      }
    }
    Json sources = Json::array();
    for (const auto& [path, content] : files.items()) {
      if (!content.is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("arguments.files.", path, ": must be the file's text"));
      }
      sources.push_back({{"path", path}, {"content", content}});
    }
    Json spec = {{"language", args["language"]}, {"target_hardware", Json::array()},
                 {"entry_point", args["entry_point"]}};
    if (args.contains("destination_passing_style")) {
      spec["destination_passing_style"] = args["destination_passing_style"];
    }
    Json s = {{"name", args.value("name", std::string("mcp_solution"))},
              {"definition", definition},
              {"author", args.value("author", std::string("mcp"))},
              {"spec", std::move(spec)},
              {"sources", std::move(sources)}};
    solution = ParseSolutionJson(s.dump());
    if (!solution.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("arguments: ", solution.status().message()));
    }
  }
  if (solution.ok() && solution->definition().empty()) solution->set_definition(definition);
  return solution;
}

// The JSON of a definition and its workloads, as show_definition and the resource give it.
Json DefinitionJson(const v1::DefinitionDetail& detail) {
  Json definition = Json::parse(DefinitionToJson(detail.definition()), nullptr, false);
  Json workloads = Json::array();
  for (const v1::Workload& w : detail.workloads()) {
    workloads.push_back(Json::parse(WorkloadToJson(w), nullptr, false));
  }
  return {{"definition", std::move(definition)},
          {"detail", DefinitionDetailJson(detail)},
          {"workloads", std::move(workloads)}};
}

}  // namespace

Json McpServer::ToolsList() const {
  Json tools = Json::array();
  tools.push_back({{"name", "list_definitions"},
                   {"title", "List definitions"},
                   {"description",
                    "The definitions (kernel problems) registered on the harness: name, op type, "
                    "workload count, and whether this node can evaluate them."},
                   {"inputSchema", Schema(Json::object())}});
  tools.push_back(
      {{"name", "show_definition"},
       {"title", "Show a definition"},
       {"description",
        "One definition: axes, inputs and outputs with shapes and dtypes, the reference "
        "implementation's source (what a solution must match), its registered workloads, the "
        "tolerances and timed-call counts it is judged with."},
       {"inputSchema",
        Schema({{"name", {{"type", "string"}, {"description", "the definition's name"}}},
                {"include_workloads",
                 {{"type", "boolean"}, {"description", "list the workloads (default true)"}}}},
               {"name"})}});
  tools.push_back(
      {{"name", "evaluate"},
       {"title", "Evaluate a solution"},
       {"description",
        "Compiles a solution, checks it against the definition's reference on every workload "
        "(or those given) and times it as the MLSys 2026 FlashInfer contest does. Returns a "
        "verdict per workload (latency, reference latency, speedup, errors) and, when it fails, "
        "the compiler's first error with file:line or the integrity check's reason and advice. "
        "Give the solution as `files` + `language` + `entry_point`, as `solution` (a "
        "flashinfer-bench Solution object), or as `path`. Sends progress notifications when "
        "asked; cancelling the call cancels the run."},
       {"inputSchema",
        Schema({{"definition", {{"type", "string"}, {"description", "the definition's name"}}},
                {"files",
                 {{"type", "object"},
                  {"description", "source files: relative path -> text"},
                  {"additionalProperties", {{"type", "string"}}}}},
                {"language",
                 {{"type", "string"},
                  {"enum", {"cuda", "cpp", "python", "triton", "opencl"}},
                  {"description", "with files: the solution's language"}}},
                {"entry_point",
                 {{"type", "string"},
                  {"description", "with files: \"kernel.cu::run\", \"kernel.py::run\""}}},
                {"destination_passing_style",
                 {{"type", "boolean"},
                  {"description", "with files: outputs passed in (default true) or returned"}}},
                {"name", {{"type", "string"}, {"description", "with files: the solution's name"}}},
                {"solution",
                 {{"type", "object"}, {"description", "a flashinfer-bench Solution object"}}},
                {"path",
                 {{"type", "string"},
                  {"description", "a solution.json, or a folder holding one, on this machine"}}},
                {"workloads",
                 {{"type", "array"},
                  {"items", {{"type", "object"}}},
                  {"description", "flashinfer-bench workload objects (default: the registered "
                                  "ones; only runs on those are ranked)"}}},
                {"mode",
                 {{"type", "string"},
                  {"enum", {"official", "kernelbench", "robust"}},
                  {"description", "timing mode (default: the node's)"}}},
                {"backend", {{"type", "string"}, {"description", "host | cuda | level_zero"}}},
                {"baselines",
                 {{"type", "array"},
                  {"items", {{"type", "string"}}},
                  {"description", "also time torch_eager, torch_compile or solution:NAME"}}}},
               {"definition"})}});
  tools.push_back(
      {{"name", "get_run"},
       {"title", "Get a run"},
       {"description",
        "An archived evaluation: its verdict per workload, stage times, failure details and "
        "compiler log; with include_sources its sources. run_id: the whole id, its start or the "
        "8 characters progress lines show."},
       {"inputSchema",
        Schema({{"run_id", {{"type", "string"}}},
                {"include_sources", {{"type", "boolean"}, {"description", "default false"}}}},
               {"run_id"})}});
  tools.push_back(
      {{"name", "leaderboard"},
       {"title", "Leaderboard"},
       {"description",
        "One run per team on a definition, ranked by contest score (mean speedup over the "
        "reference, a workload not passed counting 0), each with its 95% interval."},
       {"inputSchema",
        Schema({{"definition", {{"type", "string"}}},
                {"mode", {{"type", "string"}, {"description", "default: the node's"}}},
                {"best",
                 {{"type", "boolean"},
                  {"description", "each team's best run instead of its designated or latest"}}}},
               {"definition"})}});
  // The harness cannot profile yet (no Nsight Compute RPC): no `profile` tool is offered.
  return {{"tools", std::move(tools)}};
}

ToolResult McpServer::ListDefinitions(ToolCall& call) {
  v1::ListDefinitionsResponse response;
  grpc::Status status = Unary(*connection_, call.state, [&](grpc::ClientContext* context) {
    return connection_->stub().ListDefinitions(context, v1::ListDefinitionsRequest(), &response);
  });
  if (!status.ok()) return CallError(*connection_, status);
  return {DefinitionsText(response), ProtoToJson(response), false};
}

ToolResult McpServer::ShowDefinition(ToolCall& call) {
  ToolResult error;
  std::string name;
  if (!StringArg(call.arguments, "name", &name, &error)) return error;
  if (name.empty()) return ArgumentError("name", "required (list_definitions names them)");
  v1::GetDefinitionRequest request;
  request.set_name(name);
  request.set_include_workloads(call.arguments.value("include_workloads", true));
  v1::DefinitionDetail detail;
  grpc::Status status = Unary(*connection_, call.state, [&](grpc::ClientContext* context) {
    return connection_->stub().GetDefinition(context, request, &detail);
  });
  if (!status.ok()) return CallError(*connection_, status);
  return {DefinitionDetailText(detail), DefinitionJson(detail), false};
}

ToolResult McpServer::Evaluate(ToolCall& call) {
  const Json& args = call.arguments;
  ToolResult error;
  std::string definition, mode, backend;
  if (!StringArg(args, "definition", &definition, &error) ||
      !StringArg(args, "mode", &mode, &error) || !StringArg(args, "backend", &backend, &error)) {
    return error;
  }
  if (definition.empty()) {
    return ArgumentError("definition", "required (list_definitions names them)");
  }
  absl::StatusOr<v1::Solution> solution = SolutionArgument(args, definition);
  if (!solution.ok()) return {std::string(solution.status().message()), nullptr, true};
  v1::EvaluateRequest request;
  request.set_definition(definition);
  *request.mutable_solution() = *std::move(solution);
  request.set_mode(mode);
  request.set_backend(backend);
  if (args.contains("workloads")) {
    if (!args["workloads"].is_array()) return ArgumentError("workloads", "must be an array");
    for (size_t i = 0; i < args["workloads"].size(); ++i) {
      absl::StatusOr<v1::Workload> w = ParseWorkloadJson(args["workloads"][i].dump());
      if (!w.ok()) return ArgumentError(absl::StrCat("workloads[", i, "]"), w.status().ToString());
      *request.add_workloads() = *std::move(w);
    }
  }
  if (args.contains("baselines")) {
    if (!args["baselines"].is_array()) return ArgumentError("baselines", "must be an array");
    for (const Json& b : args["baselines"]) {
      if (!b.is_string()) return ArgumentError("baselines", "must hold strings");
      request.add_baselines(b.get<std::string>());
    }
  }
  // The budget is taken before the run starts, under the ledger's lock: parallel calls (agents
  // make them), and other kiln mcp processes on the same ledger, cannot all pass a check made
  // before any of them was admitted. A call whose run is never admitted gives its slot back.
  absl::StatusOr<std::optional<std::string>> ticket = ledger_.Reserve();
  if (!ticket.ok()) return {std::string(ticket.status().message()), nullptr, true};
  if (!ticket->has_value()) {
    return {absl::StrCat("evaluation budget spent: ", options_.max_evaluations,
                         " evaluations in this session (the campaign's budget); submit your "
                         "solution as it is"),
            Json{{"budget_spent", true}}, true};
  }
  bool admitted = false;

  grpc::ClientContext context;
  connection_->Prepare(&context, options_.evaluate_timeout_s);
  call.state.SetContext(&context);
  std::unique_ptr<grpc::ClientReader<v1::EvaluateEvent>> reader =
      connection_->stub().Evaluate(&context, request);
  std::string last_stage;
  StreamedRuns streamed = ReadRunEvents(*reader, [&](const v1::Progress& p, bool first) {
    if (first) {
      admitted = true;
      if (absl::Status s = ledger_.Admit(**ticket, p.run_id()); !s.ok()) {
        log_ << "kiln mcp: " << s.message() << "\n";
      }
      call.progress(absl::StrCat("run ", p.run_id(), " admitted"));
    }
    if (p.has_trace()) {
      call.progress(WorkloadLine(p.trace(), p.workload_index() + 1, p.workload_count()));
    } else if (!p.message().empty() && p.message() != last_stage) {
      last_stage = p.message();
      call.progress(p.message());
    }
  });
  call.state.SetContext(nullptr);
  if (!admitted) {
    if (absl::Status s = ledger_.Release(**ticket); !s.ok()) {
      log_ << "kiln mcp: " << s.message() << "\n";
    }
  }
  if (call.state.cancelled()) return {"cancelled", nullptr, true};
  EvaluationOutcome outcome = OneRun(std::move(streamed));
  if (!outcome.status.ok() || !outcome.run) {
    ToolResult r = CallError(*connection_, outcome.status);
    if (!outcome.run_id.empty()) {
      absl::StrAppend(&r.text, "\nrun ", outcome.run_id,
                      " gave no verdict; get_run shows what it reached");
    }
    return r;
  }
  // The verdict is the tool's answer, whatever it is: isError only when nothing was judged.
  std::ostringstream text, json, ignored;
  Console text_console{text, ignored};
  Console json_console{json, ignored};
  ReportEvaluation(outcome, /*json=*/false, *connection_, text_console);
  ReportEvaluation(outcome, /*json=*/true, *connection_, json_console);
  // A REJECTED verdict names the integrity check; say what to do about it, as runs show does.
  if (const std::string advice = RejectionAdvice(outcome.run->reason()); !advice.empty()) {
    text << "what to do: " << advice << "\n";
  }
  Json structured = Json::parse(json.str(), nullptr, false);
  if (structured.is_discarded()) structured = nullptr;
  return {text.str(), std::move(structured), false};
}

ToolResult McpServer::GetRun(ToolCall& call) {
  ToolResult error;
  std::string run_id;
  if (!StringArg(call.arguments, "run_id", &run_id, &error)) return error;
  if (run_id.empty()) return ArgumentError("run_id", "required");
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  request.set_include_sources(call.arguments.value("include_sources", false));
  v1::Run run;
  grpc::Status status = Unary(*connection_, call.state, [&](grpc::ClientContext* context) {
    return connection_->stub().GetRun(context, request, &run);
  });
  if (!status.ok()) return CallError(*connection_, status);
  return {RunShowText(run), RunShowJson(run), false};
}

ToolResult McpServer::Leaderboard(ToolCall& call) {
  ToolResult error;
  std::string definition, mode;
  if (!StringArg(call.arguments, "definition", &definition, &error) ||
      !StringArg(call.arguments, "mode", &mode, &error)) {
    return error;
  }
  if (definition.empty()) return ArgumentError("definition", "required");
  v1::LeaderboardRequest request;
  request.set_definition(definition);
  request.set_mode(mode);
  request.set_rule(call.arguments.value("best", false) ? "best" : "latest");
  v1::Leaderboard board;
  grpc::Status status = Unary(*connection_, call.state, [&](grpc::ClientContext* context) {
    return connection_->stub().GetLeaderboard(context, request, &board);
  });
  if (!status.ok()) return CallError(*connection_, status);
  return {LeaderboardText(board, kDefaultNoiseFloor), ProtoToJson(board), false};
}

Json McpServer::ResourcesList() {
  grpc::ClientContext context;
  connection_->Prepare(&context, kDefaultCallTimeoutS);
  v1::ListDefinitionsResponse response;
  grpc::Status status =
      connection_->stub().ListDefinitions(&context, v1::ListDefinitionsRequest(), &response);
  if (!status.ok()) throw McpError(-32603, connection_->Describe(status));
  Json resources = Json::array();
  for (const v1::DefinitionSummary& d : response.definitions()) {
    resources.push_back(
        {{"uri", absl::StrCat(kDefinitionPrefix, d.name())},
         {"name", d.name()},
         {"description", absl::StrCat(d.op_type(), " definition, ", d.workload_count(),
                                      " workloads", d.cannot_evaluate().empty()
                                                        ? ""
                                                        : " (not evaluable on this node)")},
         {"mimeType", "application/json"}});
  }
  return {{"resources", std::move(resources)}};
}

Json McpServer::ResourceTemplatesList() const {
  return {{"resourceTemplates",
           Json::array({{{"uriTemplate", absl::StrCat(kDefinitionPrefix, "{name}")},
                         {"name", "definition"},
                         {"description", "a definition with its reference source and workloads"},
                         {"mimeType", "application/json"}},
                        {{"uriTemplate", absl::StrCat(kRunPrefix, "{run_id}")},
                         {"name", "run"},
                         {"description", "an archived evaluation with its traces"},
                         {"mimeType", "application/json"}}})}};
}

Json McpServer::ReadResource(const Json& params, ToolCall& call) {
  if (!params.contains("uri") || !params["uri"].is_string()) {
    throw McpError(-32602, "params.uri: required");
  }
  const std::string uri = params["uri"];
  absl::string_view rest = uri;
  Json content;
  grpc::ClientContext context;
  connection_->Prepare(&context, kDefaultCallTimeoutS);
  call.state.SetContext(&context);
  grpc::Status status;
  if (absl::ConsumePrefix(&rest, kDefinitionPrefix) && !rest.empty()) {
    v1::GetDefinitionRequest request;
    request.set_name(std::string(rest));
    request.set_include_workloads(true);
    v1::DefinitionDetail detail;
    status = connection_->stub().GetDefinition(&context, request, &detail);
    if (status.ok()) content = DefinitionJson(detail);
  } else if (absl::ConsumePrefix(&rest, kRunPrefix) && !rest.empty()) {
    v1::GetRunRequest request;
    request.set_run_id(std::string(rest));
    v1::Run run;
    status = connection_->stub().GetRun(&context, request, &run);
    if (status.ok()) content = RunShowJson(run);
  } else {
    call.state.SetContext(nullptr);
    throw McpError(-32002, absl::StrCat("resource not found: ", uri,
                                        " (kiln://definitions/{name}, kiln://runs/{run_id})"));
  }
  call.state.SetContext(nullptr);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
    throw McpError(-32002, absl::StrCat("resource not found: ", uri, ": ", status.error_message()));
  }
  if (!status.ok()) throw McpError(-32603, connection_->Describe(status));
  return {{"contents", Json::array({{{"uri", uri},
                                     {"mimeType", "application/json"},
                                     {"text", Dump(content)}}})}};
}

int RunMcp(const Invocation& inv, Console& console) {
  McpOptions options;
  options.invocation = &inv;
  absl::StatusOr<double> timeout = SecondsFlag(inv, "timeout-s", options.evaluate_timeout_s);
  absl::StatusOr<int> budget = IntFlag(inv, "max-evaluations", -1);
  if (!timeout.ok() || !budget.ok()) {
    console.err << (timeout.ok() ? budget.status() : timeout.status()).message() << "\n";
    return kExitUsage;
  }
  options.evaluate_timeout_s = *timeout;
  options.max_evaluations = *budget;
  options.ledger_path = inv.args.Get("ledger");
  McpServer server(std::move(options), std::cin, console.out, console.err);
  return server.Serve();
}

}  // namespace kiln::cli
