#include "controller/agents/http_agent.h"

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/agents/curl_api.h"
#include "controller/agents/workspace.h"

namespace kiln::controller {

namespace {

using WireJson = nlohmann::json;

constexpr char kInstructions[] =
    "You write high-performance kernels. Answer with the complete source files of the candidate "
    "as fenced code blocks whose info string is the language and the file name, e.g. "
    "```cpp kernel.cc. Only the code blocks are used.";

size_t Collect(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

std::string Endpoint(const std::string& base, const std::string& path) {
  std::string b(absl::StripSuffix(base, "/"));
  if (absl::EndsWith(b, "/v1")) return b + path;
  return b + "/v1" + path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

// The reply's text and token usage, or an error for a truncated or malformed reply. The reply
// is untrusted: a field of an unexpected type is an error, not a crash.
std::string ParseReply(const std::string& type, const WireJson& parsed, std::string* text,
                       double* in_tokens, double* out_tokens) {
  try {
    if (type == "openai") {
      const WireJson choices = parsed.value("choices", WireJson::array());
      std::string stop;
      if (!choices.empty() && choices[0].contains("message")) {
        const WireJson& content = choices[0]["message"]["content"];
        if (content.is_string()) *text = content.get<std::string>();
        stop = choices[0].value("finish_reason", "");
      }
      WireJson usage = parsed.value("usage", WireJson::object());
      *in_tokens = usage.value("prompt_tokens", 0.0);
      *out_tokens = usage.value("completion_tokens", 0.0);
      if (stop == "length") return "the reply was truncated (finish_reason length)";
      return "";
    }
    for (const auto& block : parsed.value("content", WireJson::array())) {
      if (block.value("type", "") == "text") *text += block.value("text", "");
    }
    WireJson usage = parsed.value("usage", WireJson::object());
    *in_tokens = usage.value("input_tokens", 0.0);
    *out_tokens = usage.value("output_tokens", 0.0);
    if (parsed.value("stop_reason", "") == "max_tokens") {
      return "the reply was truncated (stop_reason max_tokens)";
    }
    return "";
  } catch (const WireJson::exception& e) {
    return absl::StrCat("malformed ", type, " reply: ", e.what());
  }
}

}  // namespace

absl::StatusOr<HttpReply> HttpPost(const std::string& url, const std::vector<std::string>& headers,
                                   const std::string& body, double timeout_s) {
  absl::StatusOr<const CurlApi*> api = Curl();
  if (!api.ok()) return api.status();
  const CurlApi& c = **api;
  CURL* curl = c.easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = c.slist_append(list, h.c_str());
  HttpReply reply;
  c.easy_setopt(curl, CURLOPT_URL, url.c_str());
  c.easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  c.easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  c.easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  c.easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  c.easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  c.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  c.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode code = c.easy_perform(curl);
  c.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  c.slist_free_all(list);
  c.easy_cleanup(curl);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return absl::DeadlineExceededError(absl::StrCat(url, ": timed out after ", timeout_s, " s"));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(url, ": ", c.easy_strerror(code)));
  }
  return reply;
}

std::vector<v1::SourceFile> CodeBlocks(const std::string& text,
                                       const std::vector<std::string>& default_paths) {
  std::vector<v1::SourceFile> out;
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  size_t unnamed = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = absl::StripLeadingAsciiWhitespace(lines[i]);
    if (!absl::ConsumePrefix(&line, "```")) continue;
    std::vector<std::string> info = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    std::string body;
    size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[j]), "```")) break;
      absl::StrAppend(&body, lines[j], "\n");
    }
    i = j;
    std::string path;
    if (info.size() >= 2) {
      path = info[1];
    } else if (unnamed < default_paths.size()) {
      path = default_paths[unnamed++];
    } else {
      continue;  // an unnamed block beyond the known files is commentary
    }
    out.push_back(v1::SourceFile());
    out.back().set_path(path);
    out.back().set_content(body);
  }
  return out;
}

AgentResponse HttpAgent::Generate(const AgentRequest& request) {
  AgentResponse response;
  const char* key = std::getenv(spec_.api_key_env.c_str());
  if (key == nullptr || *key == '\0') {
    response.error = absl::StrCat("environment variable ", spec_.api_key_env, " is not set");
    return response;
  }
  std::string task = ReadFile(request.workspace + "/TASK.md");
  WireJson body;
  std::vector<std::string> headers = {"Content-Type: application/json"};
  std::string url;
  if (type_ == "openai") {
    url = Endpoint(spec_.base_url, "/chat/completions");
    headers.push_back(absl::StrCat("Authorization: Bearer ", key));
    body = {{"model", spec_.model},
            {"max_tokens", spec_.max_tokens},
            {"messages", WireJson::array({{{"role", "system"}, {"content", kInstructions}},
                                      {{"role", "user"}, {"content", task}}})}};
  } else {
    url = Endpoint(spec_.base_url, "/messages");
    headers.push_back(absl::StrCat("x-api-key: ", key));
    headers.push_back("anthropic-version: 2023-06-01");
    body = {{"model", spec_.model},
            {"max_tokens", spec_.max_tokens},
            {"system", kInstructions},
            {"messages", WireJson::array({{{"role", "user"}, {"content", task}}})}};
  }
  absl::StatusOr<HttpReply> reply = HttpPost(url, headers, body.dump(), spec_.timeout_s);
  if (!reply.ok()) {
    response.error = std::string(reply.status().message());
    return response;
  }
  std::ofstream(request.workspace + "/response.json") << reply->body;
  WireJson parsed = WireJson::parse(reply->body, nullptr, false);
  if (reply->status != 200 || !parsed.is_object()) {
    response.error =
        absl::StrCat(type_, " answered HTTP ", reply->status, ": ", reply->body.substr(0, 500));
    return response;
  }
  std::string text;
  double in_tokens = 0, out_tokens = 0;
  response.error = ParseReply(type_, parsed, &text, &in_tokens, &out_tokens);
  response.turns = 1;
  response.cost_usd = in_tokens * spec_.usd_per_million_input_tokens / 1e6 +
                      out_tokens * spec_.usd_per_million_output_tokens / 1e6;
  response.transcript = text.substr(0, 8000);
  if (!response.error.empty()) return response;
  v1::Solution solution;
  solution.set_name(absl::StrCat(campaign_.definition_name, "_", type_, "_r", request.round));
  solution.set_definition(campaign_.definition_name);
  solution.set_author(absl::StrCat(type_, ":", spec_.model));
  *solution.mutable_spec() = DefaultBuildSpec(campaign_, request.incumbent);
  std::vector<std::string> paths;
  if (request.incumbent.has_value()) {
    for (const v1::SourceFile& f : request.incumbent->sources()) paths.push_back(f.path());
  }
  if (paths.empty()) {
    std::string ep = solution.spec().entry_point();
    paths.push_back(ep.substr(0, ep.find("::")));
  }
  for (v1::SourceFile& f : CodeBlocks(text, paths)) *solution.add_sources() = std::move(f);
  if (solution.sources_size() == 0) {
    response.error = "the reply held no code block";
    return response;
  }
  response.candidates.push_back({solution, "{}"});
  return response;
}

}  // namespace kiln::controller
