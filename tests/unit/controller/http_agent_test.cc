// The openai and anthropic agents against a local HTTP server that speaks each protocol as its
// public API documents it (no LLM endpoint is reachable from the test machines).
#include "controller/agents/http_agent.h"

#include "controller/agents/curl_api.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace kiln::controller {
namespace {

// Answers one POST with `reply` and keeps what it received.
class FakeHttpServer {
 public:
  explicit FakeHttpServer(std::string reply, int status = 200)
      : reply_(std::move(reply)), status_(status) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(listen(fd_, 1) == 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeHttpServer() {
    thread_.join();
    close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string request_line, headers, body;

 private:
  void Serve() {
    int c = accept(fd_, nullptr, nullptr);
    std::string data;
    char buf[4096];
    size_t header_end = std::string::npos;
    size_t want = 0;
    while (true) {
      ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) break;
      data.append(buf, n);
      if (header_end == std::string::npos) {
        header_end = data.find("\r\n\r\n");
        if (header_end != std::string::npos) {
          std::string lower = data.substr(0, header_end);
          for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
          size_t cl = lower.find("content-length:");
          want = cl == std::string::npos ? 0 : std::stoul(lower.substr(cl + 15));
        }
      }
      if (header_end != std::string::npos && data.size() >= header_end + 4 + want) break;
    }
    request_line = data.substr(0, data.find("\r\n"));
    headers = data.substr(0, header_end);
    body = data.substr(header_end + 4);
    std::string response = "HTTP/1.1 " + std::to_string(status_) +
                           " OK\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(reply_.size()) + "\r\nConnection: close\r\n\r\n" + reply_;
    (void)!write(c, response.data(), response.size());
    close(c);
  }
  std::string reply_;
  int status_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

CampaignSpec Campaign() {
  CampaignSpec spec;
  spec.name = "t";
  spec.definition_name = "scale_add_f32";
  spec.target.entry_point = "kernel.cc::run";
  return spec;
}

std::string Workspace() {
  std::string dir =
      std::filesystem::temp_directory_path() /
      ("kiln-http-agent-" + std::to_string(getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/TASK.md") << "# Task: make it fast\n";
  return dir;
}

constexpr char kReplyText[] =
    "Here it is.\n```cpp kernel.cc\nextern \"C\" int run() { return 0; }\n```\nDone.";

TEST_CASE("the openai agent posts a chat completion and takes the code blocks as sources") {
  nlohmann::json reply = {
      {"id", "chatcmpl-1"},
      {"object", "chat.completion"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", kReplyText}}},
         {"finish_reason", "stop"}}}},
      {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 500}, {"total_tokens", 1500}}}};
  FakeHttpServer server(reply.dump());
  setenv("KILN_TEST_OPENAI_KEY", "sk-test", 1);
  HttpAgentSpec spec;
  spec.base_url = server.url();
  spec.model = "gpt-test";
  spec.api_key_env = "KILN_TEST_OPENAI_KEY";
  spec.usd_per_million_input_tokens = 2;
  spec.usd_per_million_output_tokens = 8;
  CampaignSpec campaign = Campaign();
  HttpAgent agent("openai", spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  AgentResponse response = agent.Generate(request);
  REQUIRE(response.error.empty());
  CHECK(server.request_line == "POST /v1/chat/completions HTTP/1.1");
  CHECK_THAT(server.headers, Catch::Contains("Authorization: Bearer sk-test"));
  nlohmann::json sent = nlohmann::json::parse(server.body);
  CHECK(sent["model"] == "gpt-test");
  CHECK(sent["messages"][1]["role"] == "user");
  CHECK_THAT(sent["messages"][1]["content"].get<std::string>(), Catch::Contains("make it fast"));
  REQUIRE(response.candidates.size() == 1);
  const v1::Solution& s = response.candidates[0].solution;
  REQUIRE(s.sources_size() == 1);
  CHECK(s.sources(0).path() == "kernel.cc");
  CHECK(s.sources(0).content() == "extern \"C\" int run() { return 0; }\n");
  CHECK(s.spec().entry_point() == "kernel.cc::run");
  CHECK(response.cost_usd == Approx(1000 * 2e-6 + 500 * 8e-6));
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("the anthropic agent posts a message with its version header and joins text blocks") {
  nlohmann::json reply = {{"id", "msg_1"},
                          {"type", "message"},
                          {"role", "assistant"},
                          {"content",
                           {{{"type", "text"}, {"text", "```cpp kernel.cc\nint x;\n"}},
                            {{"type", "text"}, {"text", "```\n"}}}},
                          {"stop_reason", "end_turn"},
                          {"usage", {{"input_tokens", 10}, {"output_tokens", 20}}}};
  FakeHttpServer server(reply.dump());
  setenv("KILN_TEST_ANTHROPIC_KEY", "ak-test", 1);
  HttpAgentSpec spec;
  spec.base_url = server.url();
  spec.model = "claude-test";
  spec.api_key_env = "KILN_TEST_ANTHROPIC_KEY";
  CampaignSpec campaign = Campaign();
  HttpAgent agent("anthropic", spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  AgentResponse response = agent.Generate(request);
  REQUIRE(response.error.empty());
  CHECK(server.request_line == "POST /v1/messages HTTP/1.1");
  CHECK_THAT(server.headers, Catch::Contains("x-api-key: ak-test"));
  CHECK_THAT(server.headers, Catch::Contains("anthropic-version: 2023-06-01"));
  nlohmann::json sent = nlohmann::json::parse(server.body);
  CHECK(sent["max_tokens"].is_number());
  CHECK(sent["messages"][0]["role"] == "user");
  REQUIRE(response.candidates.size() == 1);
  CHECK(response.candidates[0].solution.sources(0).content() == "int x;\n");
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("a truncated or refused reply is an error, not a candidate") {
  nlohmann::json reply = {
      {"choices", {{{"message", {{"content", kReplyText}}}, {"finish_reason", "length"}}}}};
  FakeHttpServer server(reply.dump());
  setenv("KILN_TEST_OPENAI_KEY", "sk-test", 1);
  HttpAgentSpec spec;
  spec.base_url = server.url() + "/v1";
  spec.model = "m";
  spec.api_key_env = "KILN_TEST_OPENAI_KEY";
  CampaignSpec campaign = Campaign();
  HttpAgent agent("openai", spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  AgentResponse response = agent.Generate(request);
  CHECK_THAT(response.error, Catch::Contains("truncated"));
  CHECK(response.candidates.empty());
  CHECK(server.request_line == "POST /v1/chat/completions HTTP/1.1");

  FakeHttpServer refusing(R"({"error":{"message":"bad key"}})", 401);
  spec.base_url = refusing.url();
  HttpAgent agent2("openai", spec, campaign);
  CHECK_THAT(agent2.Generate(request).error, Catch::Contains("HTTP 401"));
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("a reply with fields of unexpected types is an error, not a crash") {
  FakeHttpServer server(R"({"choices":[{"message":{"content":null},"finish_reason":7}]})");
  setenv("KILN_TEST_OPENAI_KEY", "sk-test", 1);
  HttpAgentSpec spec;
  spec.base_url = server.url();
  spec.model = "m";
  spec.api_key_env = "KILN_TEST_OPENAI_KEY";
  CampaignSpec campaign = Campaign();
  HttpAgent agent("openai", spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  AgentResponse response = agent.Generate(request);
  CHECK_FALSE(response.error.empty());
  CHECK(response.candidates.empty());
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("a missing key is reported by the variable's name") {
  unsetenv("KILN_TEST_NO_SUCH_KEY");
  HttpAgentSpec spec;
  spec.base_url = "http://127.0.0.1:1";
  spec.model = "m";
  spec.api_key_env = "KILN_TEST_NO_SUCH_KEY";
  CampaignSpec campaign = Campaign();
  HttpAgent agent("anthropic", spec, campaign);
  AgentRequest request;
  request.workspace = "/nonexistent";
  CHECK_THAT(agent.Generate(request).error, Catch::Contains("KILN_TEST_NO_SUCH_KEY"));
}

TEST_CASE("unnamed code blocks take the known file names in order") {
  std::vector<v1::SourceFile> files =
      CodeBlocks("```cpp\na\n```\ntext\n```\nb\n```\n```\nc\n```", {"x.cc", "y.h"});
  REQUIRE(files.size() == 2);
  CHECK(files[0].path() == "x.cc");
  CHECK(files[0].content() == "a\n");
  CHECK(files[1].path() == "y.h");
}

}  // namespace
}  // namespace kiln::controller

namespace kiln::controller {
namespace {

TEST_CASE("without libcurl the http agent's error names the library and what to install") {
  absl::StatusOr<CurlApi> api = LoadCurl("/nonexistent/libcurl.so.4");
  REQUIRE_FALSE(api.ok());
  CHECK(api.status().code() == absl::StatusCode::kFailedPrecondition);
  const std::string message(api.status().message());
  CHECK_THAT(message, Catch::Contains("/nonexistent/libcurl.so.4"));
  CHECK_THAT(message, Catch::Contains("install libcurl4"));
  // A library that is not libcurl is refused too, not called.
  absl::StatusOr<CurlApi> other = LoadCurl("libm.so.6");
  REQUIRE_FALSE(other.ok());
  CHECK_THAT(std::string(other.status().message()), Catch::Contains("lacks curl_easy_"));
  // The real one loads and works (the tests above post through it).
  absl::StatusOr<const CurlApi*> curl = Curl();
  REQUIRE(curl.ok());
  CHECK(std::string((*curl)->easy_strerror(CURLE_OK)) == "No error");
}

}  // namespace
}  // namespace kiln::controller
