// kiln mcp's JSON-RPC handling without a harness: lifecycle, tools/list, errors, and tool
// arguments refused before any call. tests/mcp drives it with the official SDK client and a
// real harness.
#include "client/mcp/mcp_server.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace kiln::cli {
namespace {

// The messages the server wrote for `lines`, one JSON value each.
std::vector<Json> Exchange(const std::vector<std::string>& lines) {
  std::istringstream in;
  std::ostringstream out, log;
  {
    McpServer server(McpOptions{}, in, out, log);
    for (const std::string& line : lines) server.HandleLine(line);
    server.Drain();
  }
  std::vector<Json> messages;
  std::istringstream written(out.str());
  for (std::string line; std::getline(written, line);) {
    Json parsed = Json::parse(line, nullptr, false);
    REQUIRE_FALSE(parsed.is_discarded());
    messages.push_back(parsed);
  }
  return messages;
}

Json One(const std::string& line) {
  std::vector<Json> m = Exchange({line});
  REQUIRE(m.size() == 1);
  return m[0];
}

TEST_CASE("initialize answers the client's protocol version when kiln speaks it, else its newest") {
  Json r = One(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
      "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  CHECK(r["id"] == 1);
  CHECK(r["result"]["protocolVersion"] == "2025-06-18");
  CHECK(r["result"]["serverInfo"]["name"] == "kiln");
  CHECK(r["result"]["capabilities"].contains("tools"));
  CHECK(r["result"]["capabilities"].contains("resources"));
  r = One(R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  CHECK(r["id"] == "a");
  CHECK(r["result"]["protocolVersion"] == McpProtocolVersions().front());
}

TEST_CASE("tools/list gives the five tools, each with an object input schema") {
  Json r = One(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})");
  std::vector<std::string> names;
  for (const Json& tool : r["result"]["tools"]) {
    names.push_back(tool["name"]);
    CHECK(tool["inputSchema"]["type"] == "object");
    CHECK_FALSE(tool["description"].get<std::string>().empty());
  }
  CHECK(names == std::vector<std::string>{"list_definitions", "show_definition", "evaluate",
                                          "get_run", "leaderboard"});
}

TEST_CASE("malformed JSON-RPC is a protocol error; notifications are never answered") {
  CHECK(One("{not json")["error"]["code"] == -32700);
  CHECK(One(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")["error"]["code"] == -32600);
  CHECK(One(R"({"jsonrpc":"1.0","id":1,"method":"ping"})")["error"]["code"] == -32600);
  Json unknown = One(R"({"jsonrpc":"2.0","id":3,"method":"prompts/list"})");
  CHECK(unknown["error"]["code"] == -32601);
  CHECK_THAT(unknown["error"]["message"].get<std::string>(), Catch::Contains("prompts/list"));
  CHECK(One(R"({"jsonrpc":"2.0","id":4,"method":"ping"})")["result"] == Json::object());
  CHECK(Exchange({R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                  R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}})"})
            .empty());
  Json tool = One(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fly"}})");
  CHECK(tool["error"]["code"] == -32602);
  CHECK_THAT(tool["error"]["message"].get<std::string>(), Catch::Contains("unknown tool 'fly'"));
}

TEST_CASE("a tool's bad arguments are a tool result with isError naming the field") {
  Json r = One(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"evaluate",
      "arguments":{}}})");
  CHECK(r["result"]["isError"] == true);
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("arguments.definition: required"));
  r = One(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"evaluate",
      "arguments":{"definition":"d","files":{"k.cu":"x"}}}})");
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("arguments.language: required with `files`"));
  r = One(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"evaluate",
      "arguments":{"definition":"d","path":"/a","files":{}}}})");
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("only one of"));
  r = One(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_run",
      "arguments":{"run_id":7}}})");
  CHECK_THAT(r["result"]["content"][0]["text"].get<std::string>(),
             Catch::Contains("arguments.run_id: must be a string"));
}

TEST_CASE("an unknown resource URI is MCP's resource-not-found error") {
  Json r = One(R"({"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///etc/passwd"}})");
  CHECK(r["error"]["code"] == -32002);
  Json t = One(R"({"jsonrpc":"2.0","id":11,"method":"resources/templates/list","params":{}})");
  CHECK(t["result"]["resourceTemplates"].size() == 2);
}

}  // namespace
}  // namespace kiln::cli
