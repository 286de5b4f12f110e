// kiln-controller's access: tokens deciding what each principal may do, refusing a remote address
// without tokens, naming a --listen address in use, mutual TLS both ways.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/controller_instance.h"
#include "tests/integration/harness_instance.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

TEST_CASE("a controller with --tokens: the CLI's token decides what each principal may do") {
  ScratchDir harness_dir, controller_dir, files, secrets;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  std::ofstream(secrets / "tokens")
      << "ops operator " << Sha256Hex("t-ops") << "\nred team " << Sha256Hex("t-red") << "\n";
  ControllerInstance controller(controller_dir.path(), harness.address(),
                                {"--tokens", secrets / "tokens"});
  std::string yaml = MatmulCampaign(files, {{"max_candidates: 9", "max_candidates: 1"}});

  Completed anonymous = controller.Campaign({"list"});
  CHECK(anonymous.exit_code == 2);
  CHECK_THAT(anonymous.err, Catch::Contains("UNAUTHENTICATED"));
  Completed team_start = controller.Campaign({"start", yaml, "--token", "t-red"});
  CHECK(team_start.exit_code == 2);
  CHECK_THAT(team_start.err, Catch::Contains("PERMISSION_DENIED"));
  // The operator starts one for red; red finds it with its token from the environment.
  Completed start = controller.Campaign({"start", yaml, "--owner", "red", "--token", "t-ops"});
  REQUIRE(start.exit_code == 0);
  const std::string id = start.out.substr(0, start.out.find('\n'));
  ::setenv("KILN_CONTROLLER_TOKEN", "t-red", 1);
  Completed show = controller.Campaign({"show", id, "--json"});
  Completed list = controller.Campaign({"list"});
  ::unsetenv("KILN_CONTROLLER_TOKEN");
  REQUIRE(show.exit_code == 0);
  CHECK(Json::parse(show.out).value("owner", "") == "red");
  CHECK(list.exit_code == 0);
  CHECK_THAT(list.out, Catch::Contains(id));
  Completed team_cancel = controller.Campaign({"cancel", id, "--token", "t-red"});
  CHECK(team_cancel.exit_code == 2);
  CHECK_THAT(team_cancel.err, Catch::Contains("PERMISSION_DENIED"));
  CHECK(controller.Campaign({"cancel", id, "--token", "t-ops"}).exit_code != 2);
}

TEST_CASE("kiln-controller refuses a remote address without a tokens file") {
  ScratchDir dir;
  Completed c = Run({ControllerBinary(), "--listen", "0.0.0.0:0", "--data-dir", dir.path(),
                     "--harness", "127.0.0.1:1"},
                    30);
  CHECK(c.exit_code == 2);
  CHECK_THAT(c.err, Catch::Contains("needs --tokens FILE"));
}

TEST_CASE("kiln-controller names a --listen address in use, changing nothing") {
  ScratchDir first_dir, second_dir;
  ControllerInstance first(first_dir / "data", "127.0.0.1:1");
  const std::string address = first.address();
  Completed second = Run({ControllerBinary(), "--listen", address, "--data-dir",
                          second_dir / "data", "--harness", "127.0.0.1:1"},
                         30);
  INFO(second.Describe());
  CHECK(second.exit_code == 2);
  CHECK_THAT(second.err, Catch::Contains("cannot listen on " + address +
                                         ": the address is in use (another kiln-controller"));
  CHECK_THAT(second.err, !Catch::Contains("chttp2"));
  CHECK_FALSE(fs::exists(second_dir / "data"));  // no archive made
}

TEST_CASE("mutual TLS from the CLI to the controller and from the controller to the harness") {
  ScratchDir certs, harness_dir, controller_dir, files, secrets;
  MakeTestCertificates(certs);
  HarnessInstance harness(harness_dir.path(),
                          {"--backend", "host", "--tls-cert", certs / "server.pem", "--tls-key",
                           certs / "server.key", "--tls-client-ca", certs / "ca.pem"});
  std::ofstream(secrets / "tokens") << "ops operator " << Sha256Hex("t-ops") << "\n";
  ControllerInstance controller(
      controller_dir.path(), harness.address(),
      {"--tokens", secrets / "tokens", "--tls-cert", certs / "server.pem", "--tls-key",
       certs / "server.key", "--tls-client-ca", certs / "ca.pem", "--harness-tls-ca",
       certs / "ca.pem", "--harness-tls-cert", certs / "client.pem", "--harness-tls-key",
       certs / "client.key"});
  const std::vector<std::string> tls = {"--tls-ca", certs / "ca.pem", "--tls-cert",
                                        certs / "client.pem", "--tls-key", certs / "client.key",
                                        "--token", "t-ops"};
  Completed plaintext = controller.Campaign({"list", "--token", "t-ops"});
  CHECK(plaintext.exit_code == 2);
  Completed no_client_cert =
      controller.Campaign({"list", "--tls-ca", certs / "ca.pem", "--token", "t-ops"});
  CHECK(no_client_cert.exit_code == 2);
  // A whole campaign: its evaluations reach the harness only through the controller's mutual TLS.
  std::string yaml = MatmulCampaign(files, {{"max_candidates: 9", "max_candidates: 1"}});
  std::vector<std::string> start = {"start", yaml, "--wait", "--json"};
  start.insert(start.end(), tls.begin(), tls.end());
  Completed done = controller.Campaign(start);
  INFO(done.Describe());
  REQUIRE(done.exit_code == 0);
  Json result = Json::parse(done.out);
  CHECK(result["status"] == "completed");
  CHECK(result["candidates_evaluated"].get<int>() >= 1);
  CHECK(result["baseline_latency_ms"].get<double>() > 0);  // measured on the harness
}

}  // namespace
}  // namespace kiln::testing
