// Every RPC of kiln.v1.Harness against a harness serving a tokens file: who may call what, and
// what each role sees of other principals' runs.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::TestNode;

constexpr char kRed[] = "red-token";
constexpr char kBlue[] = "blue-token";
constexpr char kBot[] = "bot-token";
constexpr char kOps[] = "ops-token";

// A harness whose tokens file names team-red, team-blue (teams), bot (agent) and ops (operator).
class AuthNode {
 public:
  explicit AuthNode(int max_runs_per_hour = 0) {
    dir_ = *MakeTempDir("", "kiln-auth-test");
    const std::string tokens = dir_ + "/tokens";
    std::ofstream(tokens) << "# test principals\n"
                          << "team-red team " << Sha256Hex(kRed) << "\n"
                          << "team-blue team " << Sha256Hex(kBlue) << "\n"
                          << "bot agent " << Sha256Hex(kBot) << "\n"
                          << "ops operator " << Sha256Hex(kOps) << "\n";
    HarnessOptions options = testing::TestOptions(dir_ + "/data");
    options.tokens_file = tokens;
    options.max_runs_per_hour = max_runs_per_hour;
    node_.emplace(options);
  }
  ~AuthNode() {
    node_.reset();
    (void)RemoveTree(dir_);
  }
  v1::Harness::Stub& stub() { return node_->stub(); }

 private:
  std::string dir_;
  std::optional<TestNode> node_;
};

// A context carrying `token` (none when empty).
std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

testing::EvaluateOutcome EvaluateAs(v1::Harness::Stub& stub, const std::string& token,
                                    const v1::EvaluateRequest& request) {
  auto ctx = As(token);
  testing::EvaluateOutcome out;
  auto reader = stub.Evaluate(ctx.get(), request);
  v1::EvaluateEvent event;
  while (reader->Read(&event)) out.events.push_back(event);
  out.status = reader->Finish();
  return out;
}

v1::EvaluateRequest AddRequest(const std::string& name) {
  return testing::VectorAddRequest(testing::VectorAddSolution(name, "c[i] = a[i] + b[i];"), 1024);
}

// The status of each of the twelve unary and server-streaming RPCs called with `token`.
std::map<std::string, grpc::StatusCode> EveryRpc(v1::Harness::Stub& stub,
                                                 const std::string& token) {
  std::map<std::string, grpc::StatusCode> codes;
  codes["Evaluate"] = EvaluateAs(stub, token, AddRequest("x")).status.error_code();
  v1::GetRunRequest get_run;
  get_run.set_run_id("no-such-run");
  v1::Run run;
  codes["GetRun"] = stub.GetRun(As(token).get(), get_run, &run).error_code();
  v1::ListRunsResponse runs;
  codes["ListRuns"] = stub.ListRuns(As(token).get(), v1::ListRunsRequest(), &runs).error_code();
  v1::GetArtifactRequest artifact_request;
  artifact_request.set_sha256(std::string(64, 'a'));
  v1::Artifact artifact;
  codes["GetArtifact"] =
      stub.GetArtifact(As(token).get(), artifact_request, &artifact).error_code();
  v1::ListDefinitionsResponse defs;
  codes["ListDefinitions"] =
      stub.ListDefinitions(As(token).get(), v1::ListDefinitionsRequest(), &defs).error_code();
  v1::PutDefinitionResponse put;
  codes["PutDefinition"] =
      stub.PutDefinition(As(token).get(), v1::PutDefinitionRequest(), &put).error_code();
  v1::NodeInfo info;
  codes["GetNodeInfo"] =
      stub.GetNodeInfo(As(token).get(), v1::GetNodeInfoRequest(), &info).error_code();
  v1::LeaderboardRequest board_request;
  board_request.set_definition("vector_add_f32");
  v1::Leaderboard board;
  codes["GetLeaderboard"] =
      stub.GetLeaderboard(As(token).get(), board_request, &board).error_code();
  v1::GetDefinitionRequest get_definition;
  get_definition.set_name("vector_add_f32");
  v1::DefinitionDetail detail;
  codes["GetDefinition"] =
      stub.GetDefinition(As(token).get(), get_definition, &detail).error_code();
  v1::SetDefinitionSettingsRequest set_settings;
  set_settings.set_definition("vector_add_f32");  // no field set: changes nothing
  codes["SetDefinitionSettings"] =
      stub.SetDefinitionSettings(As(token).get(), set_settings, &detail).error_code();
  v1::PutSolutionResponse put_solution;
  codes["PutSolution"] =
      stub.PutSolution(As(token).get(), v1::PutSolutionRequest(), &put_solution).error_code();
  v1::ListSolutionsResponse solutions;
  codes["ListSolutions"] =
      stub.ListSolutions(As(token).get(), v1::ListSolutionsRequest(), &solutions).error_code();
  v1::DesignateRunResponse designated;
  codes["DesignateRun"] =
      stub.DesignateRun(As(token).get(), v1::DesignateRunRequest(), &designated).error_code();
  return codes;
}

TEST_CASE("every RPC refuses a call without a token or with an unknown one") {
  AuthNode node;
  for (const std::string& token : {std::string(), std::string("not-a-token")}) {
    INFO("token '" << token << "'");
    auto codes = EveryRpc(node.stub(), token);
    REQUIRE(codes.size() == 13);
    for (const auto& [rpc, code] : codes) {
      INFO(rpc);
      CHECK(code == grpc::StatusCode::UNAUTHENTICATED);
    }
  }
  v1::ListRunsResponse runs;
  REQUIRE(node.stub().ListRuns(As(kOps).get(), v1::ListRunsRequest(), &runs).ok());
  CHECK(runs.runs().empty());  // the refused Evaluate calls archived nothing
}

TEST_CASE("each role reaches the RPCs its role allows") {
  AuthNode node;
  using C = grpc::StatusCode;
  // GetRun and GetArtifact ask for things that do not exist: NOT_FOUND means "allowed to ask".
  const std::map<std::string, C> team = {{"Evaluate", C::OK},
                                         {"GetRun", C::NOT_FOUND},
                                         {"ListRuns", C::OK},
                                         {"GetArtifact", C::NOT_FOUND},
                                         {"ListDefinitions", C::OK},
                                         {"PutDefinition", C::PERMISSION_DENIED},
                                         {"GetNodeInfo", C::OK},
                                         {"GetLeaderboard", C::OK},
                                         {"GetDefinition", C::OK},
                                         {"SetDefinitionSettings", C::PERMISSION_DENIED},
                                         {"PutSolution", C::PERMISSION_DENIED},
                                         {"ListSolutions", C::OK},
                                         // allowed (a principal's own runs); no run_id given
                                         {"DesignateRun", C::INVALID_ARGUMENT}};
  std::map<std::string, C> agent = team;
  agent["GetLeaderboard"] = C::PERMISSION_DENIED;
  std::map<std::string, C> ops = team;
  ops["PutDefinition"] = C::INVALID_ARGUMENT;  // allowed; the empty definition is refused
  ops["SetDefinitionSettings"] = C::OK;
  ops["PutSolution"] = C::INVALID_ARGUMENT;  // allowed; the empty solution is refused
  CHECK(EveryRpc(node.stub(), kRed) == team);
  CHECK(EveryRpc(node.stub(), kBot) == agent);
  CHECK(EveryRpc(node.stub(), kOps) == ops);
}

TEST_CASE("a team sees its own run in full and never another team's sources or logs") {
  AuthNode node;
  testing::EvaluateOutcome out = EvaluateAs(node.stub(), kRed, AddRequest("red-add"));
  REQUIRE(out.status.ok());
  const v1::Run finished = out.run();
  REQUIRE(finished.status() == v1::PASSED);
  CHECK(finished.principal() == "team-red");

  v1::GetRunRequest request;
  request.set_run_id(finished.run_id());
  request.set_include_sources(true);
  v1::Run own;
  REQUIRE(node.stub().GetRun(As(kRed).get(), request, &own).ok());
  REQUIRE(own.solution().sources_size() == 1);
  CHECK_THAT(own.solution().sources(0).content(), Catch::Contains("a[i] + b[i]"));

  for (const char* other : {kBlue, kBot}) {
    v1::Run theirs;
    grpc::Status denied = node.stub().GetRun(As(other).get(), request, &theirs);
    CHECK(denied.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(theirs.solution().sources().empty());
    request.set_include_sources(false);
    CHECK(node.stub().GetRun(As(other).get(), request, &theirs).error_code() ==
          grpc::StatusCode::PERMISSION_DENIED);
    request.set_include_sources(true);
  }
  v1::Run as_operator;
  REQUIRE(node.stub().GetRun(As(kOps).get(), request, &as_operator).ok());
  CHECK(as_operator.solution().sources_size() == 1);

  // The source blob: its owner and operators may fetch it; to others it does not exist.
  std::string source_sha;
  for (const v1::ArtifactRef& ref : own.artifacts()) {
    if (ref.kind() == "source") source_sha = ref.sha256();
  }
  REQUIRE(!source_sha.empty());
  v1::GetArtifactRequest artifact_request;
  artifact_request.set_sha256(source_sha);
  v1::Artifact artifact;
  CHECK(node.stub().GetArtifact(As(kRed).get(), artifact_request, &artifact).ok());
  CHECK(node.stub().GetArtifact(As(kOps).get(), artifact_request, &artifact).ok());
  v1::Artifact refused;
  CHECK(node.stub().GetArtifact(As(kBlue).get(), artifact_request, &refused).error_code() ==
        grpc::StatusCode::NOT_FOUND);
  CHECK(refused.content().empty());
}

TEST_CASE("teams list everyone's scores; agents list only their own runs") {
  AuthNode node;
  REQUIRE(EvaluateAs(node.stub(), kRed, AddRequest("red-add")).status.ok());
  REQUIRE(EvaluateAs(node.stub(), kBot, AddRequest("bot-add")).status.ok());

  v1::ListRunsResponse blue_view;
  REQUIRE(node.stub().ListRuns(As(kBlue).get(), v1::ListRunsRequest(), &blue_view).ok());
  REQUIRE(blue_view.runs_size() == 2);
  std::set<std::string> principals;
  for (const v1::RunSummary& r : blue_view.runs()) principals.insert(r.principal());
  CHECK(principals == std::set<std::string>{"team-red", "bot"});

  v1::ListRunsResponse bot_view;
  REQUIRE(node.stub().ListRuns(As(kBot).get(), v1::ListRunsRequest(), &bot_view).ok());
  REQUIRE(bot_view.runs_size() == 1);
  CHECK(bot_view.runs(0).principal() == "bot");

  v1::ListRunsRequest red_only;
  red_only.set_principal("team-red");
  v1::ListRunsResponse filtered;
  REQUIRE(node.stub().ListRuns(As(kOps).get(), red_only, &filtered).ok());
  REQUIRE(filtered.runs_size() == 1);
  CHECK(filtered.runs(0).solution_name() == "red-add");
  CHECK(node.stub().ListRuns(As(kBot).get(), red_only, &filtered).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
}

TEST_CASE("the leaderboard does not rank runs on workloads of their own choosing") {
  // Ranking itself is covered by tests/integration/auth_test.cc (a definition with one small
  // registered workload); vector_add_f32's registered ones include n = 1M, slow here.
  AuthNode node;
  REQUIRE(EvaluateAs(node.stub(), kBlue, AddRequest("blue-tiny")).run().status() == v1::PASSED);
  v1::LeaderboardRequest request;
  request.set_definition("vector_add_f32");
  request.set_mode("kernelbench");
  v1::Leaderboard board;
  REQUIRE(node.stub().GetLeaderboard(As(kBlue).get(), request, &board).ok());
  CHECK(board.mode() == "kernelbench");
  CHECK(board.entries().empty());

  request.set_definition("no_such_definition");
  CHECK(node.stub().GetLeaderboard(As(kBlue).get(), request, &board).error_code() ==
        grpc::StatusCode::NOT_FOUND);
  request.set_definition("vector_add_f32");
  request.set_mode("fastest");
  CHECK(node.stub().GetLeaderboard(As(kBlue).get(), request, &board).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("a principal over its hourly limit is refused with the limit named") {
  AuthNode node(/*max_runs_per_hour=*/1);
  REQUIRE(EvaluateAs(node.stub(), kRed, AddRequest("first")).status.ok());
  testing::EvaluateOutcome second = EvaluateAs(node.stub(), kRed, AddRequest("second"));
  CHECK(second.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(second.status.error_message(), Catch::Contains("--max-runs-per-hour"));
  CHECK(EvaluateAs(node.stub(), kBlue, AddRequest("blue")).status.ok());  // per principal
  CHECK(EvaluateAs(node.stub(), kOps, AddRequest("ops")).status.ok());    // operators exempt
}

}  // namespace
}  // namespace kiln
