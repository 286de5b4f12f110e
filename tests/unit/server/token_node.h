// A kiln-harness for access tests: its own data folder, kept across restarts, and a tokens file
// naming a team ("red", kTeamToken) and an operator ("ops", kOpsToken); As(token) makes the
// client context of a call made with a token.
#ifndef KILN_TESTS_UNIT_SERVER_TOKEN_NODE_H_
#define KILN_TESTS_UNIT_SERVER_TOKEN_NODE_H_

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "tests/unit/server/test_node.h"

namespace kiln::testing {

inline constexpr char kTeamToken[] = "team-token";
inline constexpr char kOpsToken[] = "ops-token";

class TokenNode {
 public:
  TokenNode() : dir_(*MakeTempDir("", "kiln-token-node-test")) {
    std::ofstream(dir_ + "/tokens") << "red team " << Sha256Hex(kTeamToken) << "\n"
                                    << "ops operator " << Sha256Hex(kOpsToken) << "\n";
    Start();
  }
  ~TokenNode() {
    node_.reset();
    (void)RemoveTree(dir_);
  }
  void Restart() {
    node_.reset();
    Start();
  }
  v1::Harness::Stub& stub() { return node_->stub(); }

 private:
  void Start() {
    HarnessOptions options = TestOptions(dir_ + "/data");
    options.tokens_file = dir_ + "/tokens";
    node_.emplace(options);
  }
  std::string dir_;
  std::optional<TestNode> node_;
};

inline std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  ctx->AddMetadata("authorization", std::string("Bearer ") + token);
  return ctx;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_SERVER_TOKEN_NODE_H_
