// The kiln CLI's own behaviour against a real kiln-harness: definitions, listings, node info,
// help, unreachable servers, and the self-contained demo.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

// A local port nothing listens on: bound, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("defs add registers a definition that defs list then shows") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data");
  Completed added = harness.Kiln({"defs", "add", DataPath("scale_add_f32.json"), "--workloads",
                                  DataPath("scale_add_f32.jsonl")});
  INFO(added.Describe());
  REQUIRE(added.exit_code == 0);
  CHECK(added.out.find("scale_add_f32") != std::string::npos);
  CHECK(added.out.find("3 workloads") != std::string::npos);

  Completed listed = harness.Kiln({"defs", "list"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find("scale_add_f32") != std::string::npos);
  CHECK(listed.out.find("rmsnorm_h2048") != std::string::npos);  // built in

  Completed as_json = harness.Kiln({"defs", "list", "--json"});
  REQUIRE(as_json.exit_code == 0);
  json j = json::parse(as_json.out);
  bool found = false;
  for (const json& d : j["definitions"]) {
    if (d["name"] == "scale_add_f32") {
      found = true;
      CHECK(d["workload_count"] == 3);
      CHECK(d["has_native_reference"] == true);
    }
  }
  CHECK(found);

  Completed bad = harness.Kiln({"defs", "add", DataPath("bad/unknown_dtype.json")});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("float13") != std::string::npos);
}

TEST_CASE("kiln node describes the harness") {
  Completed r = SharedHarness().Kiln({"node", "--json"});
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK_FALSE(j["backends"].empty());
  Completed text = SharedHarness().Kiln({"node"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("backends") != std::string::npos);
}

TEST_CASE("a closed port is reported as unreachable with exit 2") {
  std::string server = "127.0.0.1:" + std::to_string(ClosedPort());
  Completed r = Kiln({"--server", server, "runs", "list"}, 60);
  INFO(r.Describe());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot reach kiln-harness at " + server) != std::string::npos);

  Completed submit = Kiln({"--server", server, "submit", "--definition", "scale_add_f32",
                           "--solution", DataPath("solutions/correct")},
                          60);
  CHECK(submit.exit_code == 2);
  CHECK(submit.err.find("cannot reach") != std::string::npos);
}

TEST_CASE("help is printed with exit 0 and usage errors exit 2") {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--help"}, {"help"}, {"help", "submit"}, {"submit", "--help"}}) {
    Completed r = Kiln(args, 30);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("usage: kiln") != std::string::npos);
  }
  Completed r = Kiln({"frobnicate"}, 30);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown command 'frobnicate'") != std::string::npos);
}

TEST_CASE("kiln demo runs the built-in example end to end") {
  Completed r = Kiln({"demo"}, 600);
  INFO(r.Describe());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("kiln demo: embedded kiln-harness on 127.0.0.1:") != std::string::npos);
  CHECK(r.out.find(": PASSED (") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("\\(data in (\\S+)\\)")));
  CHECK_FALSE(std::filesystem::exists(std::string(m[1])));  // the demo cleans up
}
