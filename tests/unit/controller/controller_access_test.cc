// kiln-controller's access rules (controller_service.h), for every RPC and role, through a real
// gRPC server in the test process: operators start, cancel and see every campaign; a team or
// agent principal sees only the campaigns started for it; a call without a valid token gets
// nothing. The harness named here does not exist: campaigns end as failed, which is enough to
// read, watch, cancel and export them.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "access/authenticator.h"
#include "controller/controller_service.h"
#include "controller/harness_pool.h"
#include "controller/spec/campaign_spec.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "kiln/v1/controller.grpc.pb.h"

namespace kiln::controller {
namespace {

const std::string kExamples = std::string(KILN_SOURCE_DIR) + "/controller/examples";

TokenEntry Entry(const std::string& name, Role role, const std::string& token) {
  TokenEntry e;
  e.principal.name = name;
  e.principal.role = role;
  e.sha256_hex = Sha256Hex(token);
  return e;
}

class AccessFixture {
 public:
  AccessFixture() {
    dir_ = *MakeTempDir("", "kiln-controller-access");
    archive_ = *CampaignArchive::Open(dir_);
    // Evaluations wait at most 0.5 s for the harness that never comes.
    pool_ = std::make_unique<HarnessPool>(std::vector<std::string>{"127.0.0.1:1"}, "", nullptr,
                                          PoolOptions{0.1, 0.3, 0.5});
    service_ = std::make_unique<ControllerService>(
        *archive_, *pool_, dir_,
        Authenticator::WithTokens({Entry("ops", Role::kOperator, "t-ops"),
                                   Entry("red", Role::kTeam, "t-red"),
                                   Entry("blue", Role::kTeam, "t-blue"),
                                   Entry("bot", Role::kAgent, "t-bot")}));
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    REQUIRE(server_ != nullptr);
    stub_ = v1::Controller::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  ~AccessFixture() {
    service_->Shutdown();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    (void)RemoveTree(dir_);
  }

  // A call context with `token` ("" sends none) and a deadline.
  static std::unique_ptr<grpc::ClientContext> As(const std::string& token, double seconds = 20) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
    return context;
  }

  static v1::StartCampaignRequest StartRequest(const std::string& owner) {
    DiskCampaignFiles files(kExamples);
    const std::string yaml = *ReadFile(kExamples + "/sweep-host.yaml");
    REQUIRE(ParseCampaignSpec(yaml, files).ok());
    v1::StartCampaignRequest request;
    request.set_spec_yaml(yaml);
    request.set_spec_name("sweep-host.yaml");
    for (const auto& [path, content] : files.read()) {
      v1::CampaignFile* f = request.add_files();
      f->set_path(path);
      f->set_content(content);
    }
    request.set_owner(owner);
    return request;
  }

  grpc::Status Start(const std::string& token, const std::string& owner, v1::Campaign* out) {
    return stub_->StartCampaign(As(token).get(), StartRequest(owner), out);
  }
  grpc::Status Get(const std::string& token, const std::string& id, v1::Campaign* out = nullptr) {
    v1::GetCampaignRequest request;
    request.set_campaign_id(id);
    v1::Campaign ignored;
    return stub_->GetCampaign(As(token).get(), request, out != nullptr ? out : &ignored);
  }
  std::set<std::string> List(const std::string& token, grpc::Status* status = nullptr) {
    v1::ListCampaignsResponse response;
    grpc::Status s = stub_->ListCampaigns(As(token).get(), v1::ListCampaignsRequest(), &response);
    if (status != nullptr) *status = s;
    std::set<std::string> ids;
    for (const v1::Campaign& c : response.campaigns()) ids.insert(c.campaign_id());
    return ids;
  }
  // The first event of the campaign's stream (its "started" event), or the call's failure.
  grpc::Status WatchFirst(const std::string& token, const std::string& id, bool* got_event) {
    auto context = As(token, 10);
    v1::WatchCampaignRequest request;
    request.set_campaign_id(id);
    auto reader = stub_->WatchCampaign(context.get(), request);
    v1::CampaignEvent event;
    *got_event = reader->Read(&event);
    if (*got_event) {
      context->TryCancel();
      return grpc::Status::OK;
    }
    return reader->Finish();
  }
  grpc::Status Cancel(const std::string& token, const std::string& id, v1::Campaign* out) {
    v1::CancelCampaignRequest request;
    request.set_campaign_id(id);
    return stub_->CancelCampaign(As(token).get(), request, out);
  }
  grpc::Status Export(const std::string& token, const std::string& id) {
    v1::ExportCampaignRequest request;
    request.set_campaign_id(id);
    v1::ExportCampaignResponse response;
    return stub_->ExportCampaign(As(token).get(), request, &response);
  }

 private:
  std::string dir_;
  std::unique_ptr<CampaignArchive> archive_;
  std::unique_ptr<HarnessPool> pool_;
  std::unique_ptr<ControllerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Controller::Stub> stub_;
};

TEST_CASE("controller access: every RPC refuses a call without a valid token") {
  AccessFixture f;
  v1::Campaign started;
  REQUIRE(f.Start("t-ops", "red", &started).ok());
  const std::string id = started.campaign_id();
  for (const std::string& token : {std::string(), std::string("t-wrong")}) {
    INFO("token '" << token << "'");
    v1::Campaign c;
    CHECK(f.Start(token, "", &c).error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK(f.Get(token, id).error_code() == grpc::StatusCode::UNAUTHENTICATED);
    grpc::Status listed;
    CHECK(f.List(token, &listed).empty());
    CHECK(listed.error_code() == grpc::StatusCode::UNAUTHENTICATED);
    bool event = false;
    CHECK(f.WatchFirst(token, id, &event).error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK_FALSE(event);
    CHECK(f.Cancel(token, id, &c).error_code() == grpc::StatusCode::UNAUTHENTICATED);
    CHECK(f.Export(token, id).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  }
}

TEST_CASE("controller access: only operators start campaigns, for themselves or for a principal") {
  AccessFixture f;
  v1::Campaign c;
  for (const char* token : {"t-red", "t-bot"}) {
    grpc::Status s = f.Start(token, "", &c);
    CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK_THAT(s.error_message(), Catch::Contains("starting a campaign"));
  }
  CHECK(f.List("t-ops").empty());  // nothing was started by the refused calls
  REQUIRE(f.Start("t-ops", "", &c).ok());
  CHECK(c.owner() == "ops");
  REQUIRE(f.Start("t-ops", "red", &c).ok());
  CHECK(c.owner() == "red");
  grpc::Status bad = f.Start("t-ops", "no such/name", &c);
  CHECK(bad.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(bad.error_message(), Catch::Contains("owner"));
  CHECK(f.List("t-ops").size() == 2);
}

TEST_CASE("controller access: a team or agent sees its own campaigns, an operator all") {
  AccessFixture f;
  v1::Campaign red, bot, ops;
  REQUIRE(f.Start("t-ops", "red", &red).ok());
  REQUIRE(f.Start("t-ops", "bot", &bot).ok());
  REQUIRE(f.Start("t-ops", "", &ops).ok());
  // Get
  v1::Campaign seen;
  CHECK(f.Get("t-red", red.campaign_id(), &seen).ok());
  CHECK(seen.owner() == "red");
  CHECK(f.Get("t-bot", bot.campaign_id()).ok());
  CHECK(f.Get("t-ops", red.campaign_id()).ok());
  for (const auto& [token, id] : std::vector<std::pair<std::string, std::string>>{
           {"t-blue", red.campaign_id()}, {"t-bot", red.campaign_id()},
           {"t-red", bot.campaign_id()}, {"t-red", ops.campaign_id()}}) {
    INFO(token << " reading " << id);
    grpc::Status s = f.Get(token, id);
    CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK_THAT(s.error_message(), Catch::Contains(id));
  }
  // List
  CHECK(f.List("t-red") == std::set<std::string>{red.campaign_id()});
  CHECK(f.List("t-bot") == std::set<std::string>{bot.campaign_id()});
  CHECK(f.List("t-blue").empty());
  CHECK(f.List("t-ops") ==
        std::set<std::string>{red.campaign_id(), bot.campaign_id(), ops.campaign_id()});
  // Watch
  bool event = false;
  CHECK(f.WatchFirst("t-red", red.campaign_id(), &event).ok());
  CHECK(event);
  CHECK(f.WatchFirst("t-ops", bot.campaign_id(), &event).ok());
  CHECK(event);
  CHECK(f.WatchFirst("t-blue", red.campaign_id(), &event).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK_FALSE(event);
  // Export: past the access check, a campaign with no retained solution is refused as such.
  CHECK(f.Export("t-red", red.campaign_id()).error_code() ==
        grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(f.Export("t-ops", red.campaign_id()).error_code() ==
        grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(f.Export("t-blue", red.campaign_id()).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
  CHECK(f.Export("t-bot", red.campaign_id()).error_code() ==
        grpc::StatusCode::PERMISSION_DENIED);
}

TEST_CASE("controller access: only operators cancel, even a principal's own campaign") {
  AccessFixture f;
  v1::Campaign red;
  REQUIRE(f.Start("t-ops", "red", &red).ok());
  v1::Campaign after;
  for (const char* token : {"t-red", "t-blue", "t-bot"}) {
    grpc::Status s = f.Cancel(token, red.campaign_id(), &after);
    CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK_THAT(s.error_message(), Catch::Contains("cancelling a campaign"));
  }
  REQUIRE(f.Cancel("t-ops", red.campaign_id(), &after).ok());
  CHECK(after.status() != "running");
}

}  // namespace
}  // namespace kiln::controller
