#include "client/mcp/mcp_server.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "absl/strings/str_cat.h"
#include "client/connection.h"

#ifndef KILN_VERSION
#define KILN_VERSION "dev"
#endif

namespace kiln::cli {

namespace {

// JSON-RPC 2.0 error codes (and MCP's for a resource that is not there).
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

}  // namespace

const std::vector<std::string>& McpProtocolVersions() {
  static const std::vector<std::string>* versions =
      new std::vector<std::string>{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return *versions;
}

void CallState::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_.store(true);
  if (context_ != nullptr) static_cast<grpc::ClientContext*>(context_)->TryCancel();
}

void CallState::SetContext(void* grpc_client_context) {
  std::lock_guard<std::mutex> lock(mu_);
  context_ = grpc_client_context;
  if (context_ != nullptr && cancelled_.load()) {
    static_cast<grpc::ClientContext*>(context_)->TryCancel();
  }
}

McpServer::McpServer(McpOptions options, std::istream& in, std::ostream& out, std::ostream& log)
    : options_(std::move(options)),
      in_(in),
      out_(out),
      log_(log),
      ledger_(options_.ledger_path, options_.max_evaluations) {
  if (options_.invocation != nullptr) {
    connection_ = std::make_unique<Connection>(*options_.invocation);
  } else {
    connection_ = std::make_unique<Connection>(std::string(kDefaultServer));
  }
}

McpServer::~McpServer() { Drain(); }

int McpServer::Serve() {
  // A kiln-harness, or a kiln-controller in front of a fleet of them: both serve kiln.v1.Harness.
  log_ << "kiln mcp: serving kiln.v1.Harness at " << connection_->server()
       << " over stdio (MCP " << McpProtocolVersions().front() << ")\n"
       << std::flush;
  std::string line;
  while (std::getline(in_, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    HandleLine(line);
  }
  // The client is gone: nothing can receive the answers of calls still running.
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    for (auto& [id, state] : calls_) state->Cancel();
  }
  Drain();
  return kExitOk;
}

void McpServer::Drain() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(calls_mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

void McpServer::HandleLine(const std::string& line) {
  Json message = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    RespondError(nullptr, kParseError, "parse error: not a JSON value");
    return;
  }
  if (message.is_array()) {
    // JSON-RPC batches were removed from MCP in 2025-06-18.
    RespondError(nullptr, kInvalidRequest, "batches are not supported: send one message a line");
    return;
  }
  Handle(message);
}

void McpServer::Handle(const Json& message) {
  if (!message.is_object() || message.value("jsonrpc", "") != "2.0") {
    RespondError(message.is_object() && message.contains("id") ? message["id"] : Json(nullptr),
                 kInvalidRequest, "invalid request: expected a JSON-RPC 2.0 object");
    return;
  }
  const bool has_id = message.contains("id") && !message["id"].is_null();
  if (!message.contains("method")) {
    // A response to a request of ours: kiln mcp sends none, so there is nothing to match.
    return;
  }
  if (!message["method"].is_string()) {
    RespondError(has_id ? message["id"] : Json(nullptr), kInvalidRequest,
                 "invalid request: method must be a string");
    return;
  }
  const std::string method = message["method"];
  const Json params = message.contains("params") ? message["params"] : Json::object();
  if (!has_id) {
    // Notifications: never answered.
    if (method == "notifications/cancelled" && params.is_object() && params.contains("requestId")) {
      std::lock_guard<std::mutex> lock(calls_mu_);
      auto it = calls_.find(params["requestId"].dump());
      if (it != calls_.end()) it->second->Cancel();
    }
    return;  // notifications/initialized and any other are accepted silently
  }
  if (!params.is_object()) {
    RespondError(message["id"], kInvalidParams, "params must be an object");
    return;
  }
  HandleRequest(message["id"], method, params);
}

void McpServer::HandleRequest(const Json& id, const std::string& method, const Json& params) {
  try {
    if (method == "initialize") return Respond(id, Initialize(params));
    if (method == "ping") return Respond(id, Json::object());
    if (method == "tools/list") return Respond(id, ToolsList());
    if (method == "resources/templates/list") return Respond(id, ResourceTemplatesList());
    if (method == "tools/call") {
      return Spawn(id, params, [this](const Json& p, ToolCall& call) { return CallTool(p, call); });
    }
    if (method == "resources/list") {
      return Spawn(id, params, [this](const Json&, ToolCall&) { return ResourcesList(); });
    }
    if (method == "resources/read") {
      return Spawn(id, params,
                   [this](const Json& p, ToolCall& call) { return ReadResource(p, call); });
    }
  } catch (const McpError& e) {
    return RespondError(id, e.code, e.what());
  }
  RespondError(id, kMethodNotFound, absl::StrCat("method not found: ", method));
}

void McpServer::Spawn(const Json& id, const Json& params,
                      std::function<Json(const Json& params, ToolCall& call)> work) {
  auto state = std::make_shared<CallState>();
  const std::string key = id.dump();
  std::lock_guard<std::mutex> lock(calls_mu_);
  if (calls_.count(key) > 0) {
    RespondError(id, kInvalidRequest, absl::StrCat("request id ", key, " is already in flight"));
    return;
  }
  calls_[key] = state;
  threads_.emplace_back([this, id, params, state, key, work = std::move(work)] {
    // Progress goes to the client only when it asked for it (params._meta.progressToken).
    Json token = nullptr;
    if (params.contains("_meta") && params["_meta"].is_object() &&
        params["_meta"].contains("progressToken")) {
      token = params["_meta"]["progressToken"];
    }
    int step = 0;
    const Json arguments = params.contains("arguments") && params["arguments"].is_object()
                               ? params["arguments"]
                               : Json::object();
    ToolCall call{arguments, *state, [&](const std::string& message) {
                    if (token.is_null() || state->cancelled()) return;
                    Send({{"jsonrpc", "2.0"},
                          {"method", "notifications/progress"},
                          {"params", {{"progressToken", token}, {"progress", ++step},
                                      {"message", message}}}});
                  }};
    Json result;
    int error_code = 0;
    std::string error_message;
    try {
      result = work(params, call);
    } catch (const McpError& e) {
      error_code = e.code;
      error_message = e.what();
    } catch (const std::exception& e) {
      error_code = kInternalError;
      error_message = absl::StrCat("internal error: ", e.what());
    }
    {
      std::lock_guard<std::mutex> calls_lock(calls_mu_);
      calls_.erase(key);
    }
    if (state->cancelled()) return;  // a cancelled request is not answered
    if (error_code != 0) {
      RespondError(id, error_code, error_message);
    } else {
      Respond(id, std::move(result));
    }
  });
}

void McpServer::Send(const Json& message) {
  const std::string line = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::lock_guard<std::mutex> lock(out_mu_);
  out_ << line << '\n' << std::flush;
}

void McpServer::Respond(const Json& id, Json result) {
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void McpServer::RespondError(const Json& id, int code, const std::string& message) {
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

Json McpServer::Initialize(const Json& params) {
  const std::vector<std::string>& versions = McpProtocolVersions();
  std::string version = versions.front();
  if (params.contains("protocolVersion") && params["protocolVersion"].is_string()) {
    const std::string asked = params["protocolVersion"];
    if (std::find(versions.begin(), versions.end(), asked) != versions.end()) version = asked;
  }
  return {{"protocolVersion", version},
          {"capabilities",
           {{"tools", {{"listChanged", false}}},
            {"resources", {{"subscribe", false}, {"listChanged", false}}}}},
          {"serverInfo",
           {{"name", "kiln"}, {"title", "kiln kernel evaluator"}, {"version", KILN_VERSION}}},
          {"instructions",
           "kiln evaluates GPU kernels the way the MLSys 2026 FlashInfer contest does. "
           "list_definitions names the problems; show_definition gives one's inputs, outputs, "
           "reference source, workloads and tolerances; evaluate compiles a solution, checks it "
           "against the reference on every workload and times it (a verdict per workload, "
           "with the compiler's first error or the integrity check's advice when it fails); "
           "get_run reads an evaluation again; leaderboard ranks the teams."}};
}

Json McpServer::CallTool(const Json& params, ToolCall& call) {
  if (!params.contains("name") || !params["name"].is_string()) {
    throw McpError(kInvalidParams, "params.name: the tool's name is required");
  }
  const std::string name = params["name"];
  ToolResult r;
  if (name == "list_definitions") {
    r = ListDefinitions(call);
  } else if (name == "show_definition") {
    r = ShowDefinition(call);
  } else if (name == "evaluate") {
    r = Evaluate(call);
  } else if (name == "get_run") {
    r = GetRun(call);
  } else if (name == "leaderboard") {
    r = Leaderboard(call);
  } else {
    throw McpError(kInvalidParams,
                   absl::StrCat("unknown tool '", name,
                                "' (tools: list_definitions, show_definition, evaluate, get_run, "
                                "leaderboard)"));
  }
  Json content = Json::array();
  content.push_back({{"type", "text"}, {"text", r.text}});
  Json result = {{"content", std::move(content)}, {"isError", r.is_error}};
  if (!r.structured.is_null()) {
    result["content"].push_back({{"type", "text"}, {"text", Dump(r.structured)}});
    result["structuredContent"] = r.structured;
  }
  return result;
}

}  // namespace kiln::cli
