// `kiln mcp`: a Model Context Protocol server over stdio that gives agents kiln's harness as
// tools (list_definitions, show_definition, evaluate, get_run, leaderboard) and resources
// (kiln://definitions/{name}, kiln://runs/{run_id}).
//
//   McpServer server(options, std::cin, std::cout, std::cerr);
//   return server.Serve();   // until stdin closes
//
// The transport is MCP's stdio one: one JSON-RPC 2.0 message per line on stdin and stdout,
// diagnostics on stderr. Requests are answered in any order: tools/call and resources/read run
// on their own threads, so a ping or a notifications/cancelled is read while an evaluation
// streams; a cancelled call cancels its harness RPC (the harness marks the run CANCELLED) and is
// not answered, as the specification asks. Tool failures (a bad argument, an unknown definition,
// a harness that cannot be reached) are tool results with isError, naming the field; only
// malformed JSON-RPC is a protocol error.
#ifndef KILN_CLIENT_MCP_MCP_SERVER_H_
#define KILN_CLIENT_MCP_MCP_SERVER_H_

#include <atomic>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/cli.h"
#include "client/mcp/mcp_ledger.h"
#include "report/json_output.h"

namespace kiln::cli {

class Connection;

// The protocol versions kiln speaks, newest first; initialize answers the client's when it is
// one of them, else the newest.
const std::vector<std::string>& McpProtocolVersions();

struct McpOptions {
  const Invocation* invocation = nullptr;  // where the harness is (--server, --token, TLS)
  double evaluate_timeout_s = 1800;        // each evaluation's deadline
  // At most this many evaluations (-1: no limit; 0 admits none): a campaign's budget handed to
  // an agent. Each admitted evaluation counts, whatever its verdict; a call holds a slot from
  // before its run starts until it is admitted or refused. With a ledger, every line of the
  // ledger counts, whichever process wrote it (client/mcp/mcp_ledger.h).
  int max_evaluations = -1;
  // Where each evaluation's run id is written, one per line ("" for none): the controller
  // counts them against its campaign's budget.
  std::string ledger_path;
};

// A JSON-RPC error a handler raises: answered as {"error": {code, message}}.
struct McpError : std::runtime_error {
  McpError(int code, const std::string& message) : std::runtime_error(message), code(code) {}
  int code;
};

// What one tool call answers: text for the agent, the same as JSON, and whether it failed.
struct ToolResult {
  std::string text;
  Json structured;  // null: none
  bool is_error = false;
};

// A tool call in flight: cancelled by notifications/cancelled (or the end of the session).
class CallState {
 public:
  bool cancelled() const { return cancelled_.load(); }
  void Cancel();
  // Registers the RPC in flight (nullptr when it ends); a cancel already made cancels it at once.
  void SetContext(void* grpc_client_context);

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  void* context_ = nullptr;  // grpc::ClientContext*
};

// What a tool may do besides calling the harness: report progress (when the client asked for it).
struct ToolCall {
  const Json& arguments;
  CallState& state;
  std::function<void(const std::string& message)> progress;  // a no-op without a progressToken
};

class McpServer {
 public:
  McpServer(McpOptions options, std::istream& in, std::ostream& out, std::ostream& log);
  ~McpServer();

  // Reads messages until stdin ends, then cancels what is in flight and waits for it. 0.
  int Serve();

  // Handles one line (a JSON-RPC message or a batch is refused); public for tests.
  void HandleLine(const std::string& line);
  // Waits for every tool call started so far to finish.
  void Drain();

 private:
  void Handle(const Json& message);
  void HandleRequest(const Json& id, const std::string& method, const Json& params);
  void Send(const Json& message);
  void Respond(const Json& id, Json result);
  void RespondError(const Json& id, int code, const std::string& message);
  // Runs `work` on its own thread as request `id`; answers with its result unless cancelled.
  void Spawn(const Json& id, const Json& params,
             std::function<Json(const Json& params, ToolCall& call)> work);

  Json Initialize(const Json& params);
  Json ToolsList() const;
  Json CallTool(const Json& params, ToolCall& call);
  Json ResourcesList();
  Json ResourceTemplatesList() const;
  // Throws McpError for an unknown or unreadable resource.
  Json ReadResource(const Json& params, ToolCall& call);

  ToolResult ListDefinitions(ToolCall& call);
  ToolResult ShowDefinition(ToolCall& call);
  ToolResult Evaluate(ToolCall& call);
  ToolResult GetRun(ToolCall& call);
  ToolResult Leaderboard(ToolCall& call);

  McpOptions options_;
  std::istream& in_;
  std::ostream& out_;
  std::ostream& log_;
  std::unique_ptr<Connection> connection_;
  std::mutex out_mu_;
  std::mutex calls_mu_;
  std::map<std::string, std::shared_ptr<CallState>> calls_;  // by the request id's JSON text
  std::vector<std::thread> threads_;
  EvaluationLedger ledger_;
};

}  // namespace kiln::cli

#endif  // KILN_CLIENT_MCP_MCP_SERVER_H_
