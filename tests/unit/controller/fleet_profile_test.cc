// The fleet front door's Profile (FleetService): a profile goes to a harness of the fleet that
// runs CUDA, never to a host one; the harness's events stream through to the caller, and the
// profile's run is indexed so that `kiln runs show` and its report's download find it.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>
#include <string>
#include <thread>

#include "controller/campaign_archive.h"
#include "controller/fleet/fleet_service.h"
#include "controller/fleet/run_index.h"
#include "controller/harness_pool.h"

namespace kiln::controller {
namespace {

// Answers GetNodeInfo with one backend, and Profile with an admission and a profiled run.
class ProfilingHarness final : public v1::Harness::Service {
 public:
  explicit ProfilingHarness(std::string backend) : backend_(std::move(backend)) {}
  std::atomic<int> profiles{0};

  grpc::Status GetNodeInfo(grpc::ServerContext*, const v1::GetNodeInfoRequest*,
                           v1::NodeInfo* info) override {
    info->add_backends(backend_);
    info->set_started_unix_ms(1000);
    return grpc::Status::OK;
  }
  grpc::Status Profile(grpc::ServerContext*, const v1::ProfileRequest* request,
                       grpc::ServerWriter<v1::EvaluateEvent>* writer) override {
    ++profiles;
    const std::string run_id = "profile-on-" + backend_;
    v1::EvaluateEvent admitted;
    admitted.mutable_progress()->set_run_id(run_id);
    admitted.mutable_progress()->set_message("run " + run_id + " admitted");
    writer->Write(admitted);
    v1::EvaluateEvent done;
    v1::Run* run = done.mutable_run();
    run->set_run_id(run_id);
    run->set_kind("profile");
    run->set_state(v1::RUN_DONE);
    run->set_status(v1::PASSED);
    run->mutable_profile()->set_section(request->section());
    v1::ProfiledTarget* target = run->mutable_profile()->add_targets();
    target->set_target("solution");
    target->add_kernels()->set_name("copy_vectorised_kernel");
    target->set_report_artifact("profile/solution.ncu-rep");
    writer->Write(done);
    return grpc::Status::OK;
  }

 private:
  std::string backend_;
};

struct Served {
  explicit Served(grpc::Service* service) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service);
    server = builder.BuildAndStart();
    REQUIRE(server != nullptr);
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~Served() { server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1)); }
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

TEST_CASE("fleet front door: a profile goes to the CUDA harness, streams through and is indexed") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("kiln-fleet-profile-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ProfilingHarness host("host"), cuda("cuda");
  Served host_node(&host), cuda_node(&cuda);
  HarnessPool pool({host_node.address, cuda_node.address}, "", nullptr,
                   PoolOptions(/*probe=*/0.05, /*gone=*/0.6, /*wait=*/3));
  // controller.db, with its migrations, as kiln-controller makes it before the index opens it.
  auto archive = CampaignArchive::Open(dir.string());
  REQUIRE(archive.ok());
  absl::StatusOr<std::unique_ptr<RunIndex>> index = RunIndex::Open(dir.string());
  REQUIRE(index.ok());
  FleetService fleet(pool, **index);
  Served front_door(&fleet);
  auto stub = v1::Harness::NewStub(
      grpc::CreateChannel(front_door.address, grpc::InsecureChannelCredentials()));

  for (int i = 0; i < 3; ++i) {  // least queued first must still mean a CUDA harness
    v1::ProfileRequest request;
    request.set_definition("perf_copy_f32");
    request.set_section("basic");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    auto reader = stub->Profile(&context, request);
    v1::EvaluateEvent event;
    std::vector<std::string> progress;
    std::optional<v1::Run> run;
    while (reader->Read(&event)) {
      if (event.has_progress()) progress.push_back(event.progress().message());
      if (event.has_run()) run = event.run();
    }
    const grpc::Status finished = reader->Finish();
    INFO(finished.error_message());
    REQUIRE(finished.ok());
    REQUIRE(run.has_value());
    CHECK(run->run_id() == "profile-on-cuda");
    CHECK(run->kind() == "profile");
    REQUIRE(run->profile().targets_size() == 1);
    CHECK(run->profile().section() == "basic");
    CHECK(run->profile().targets(0).kernels(0).name() == "copy_vectorised_kernel");
    CHECK(std::find(progress.begin(), progress.end(), "run profile-on-cuda admitted") !=
          progress.end());
  }
  CHECK(cuda.profiles.load() == 3);
  CHECK(host.profiles.load() == 0);
  absl::StatusOr<std::optional<std::string>> holder = (*index)->HarnessOf("profile-on-cuda");
  REQUIRE(holder.ok());
  CHECK(holder->value_or("") == cuda_node.address);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::controller
