// The `openai` (POST /v1/chat/completions) and `anthropic` (POST /v1/messages) agents, over
// libcurl. The prompt is the workspace's TASK.md; the fenced code blocks of the reply become the
// candidate's sources (the info string "cpp kernel.cc" names the file; unnamed blocks take the
// incumbent's file names in order, the first one the entry point's file). Cost comes from the
// reply's token usage and the prices in the campaign file. The key is read from the environment
// variable the campaign names, never from the campaign file.
#ifndef KILN_CONTROLLER_AGENTS_HTTP_AGENT_H_
#define KILN_CONTROLLER_AGENTS_HTTP_AGENT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/agents/agent.h"

namespace kiln::controller {

struct HttpReply {
  long status = 0;
  std::string body;
};

// POSTs `body` to `url`; transport failures are UNAVAILABLE or DEADLINE_EXCEEDED.
absl::StatusOr<HttpReply> HttpPost(const std::string& url, const std::vector<std::string>& headers,
                                   const std::string& body, double timeout_s);

// Fenced code blocks of `text` as sources; `default_paths` name unnamed blocks in order.
std::vector<v1::SourceFile> CodeBlocks(const std::string& text,
                                       const std::vector<std::string>& default_paths);

class HttpAgent : public Agent {
 public:
  HttpAgent(std::string type, HttpAgentSpec spec, const CampaignSpec& campaign)
      : type_(std::move(type)), spec_(std::move(spec)), campaign_(campaign) {}
  AgentResponse Generate(const AgentRequest& request) override;

 private:
  std::string type_;  // openai | anthropic
  HttpAgentSpec spec_;
  const CampaignSpec& campaign_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_HTTP_AGENT_H_
