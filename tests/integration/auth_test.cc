// kiln-harness serving principals from a tokens file, over TLS, with metrics, driven by the real
// kiln CLI: tokens from --token and $KILN_TOKEN, what each role may see, the leaderboard, and the
// refusals at start for unsafe exposure.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness/common/sha256.h"
#include "tests/integration/harness_instance.h"

namespace kiln::testing {
namespace {

using json = nlohmann::json;

constexpr char kRed[] = "red-secret-token";
constexpr char kBlue[] = "blue-secret-token";
constexpr char kOps[] = "ops-secret-token";

std::string WriteTokens(const ScratchDir& dir) {
  const std::string path = dir / "tokens";
  std::ofstream(path) << "# NAME ROLE SHA256HEX\n"
                      << "team-red  team     " << Sha256Hex(kRed) << "\n"
                      << "team-blue team     " << Sha256Hex(kBlue) << "\n"
                      << "ops       operator " << Sha256Hex(kOps) << "  # on call\n";
  return path;
}

Completed KilnAs(const HarnessInstance& harness, const std::string& token,
                 std::vector<std::string> args) {
  if (!token.empty()) args.insert(args.begin(), {"--token", token});
  return harness.Kiln(args);
}

Completed Submit(const HarnessInstance& harness, const std::string& token) {
  return KilnAs(harness, token,
                {"submit", "--definition", "scale_add_f32", "--solution",
                 DataPath("solutions/correct"), "--mode", "kernelbench", "--json"});
}

// GET /metrics from the harness's metrics endpoint at `address` (HOST:PORT).
std::string ScrapeMetrics(const std::string& address) {
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), 0) > 0);
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
}

TEST_CASE("with a tokens file the CLI must present a token, by flag or environment") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data", {"--tokens", WriteTokens(dir)});
  Completed anonymous = harness.Kiln({"node"});
  CHECK(anonymous.exit_code == 2);
  CHECK_THAT(anonymous.err, Catch::Contains("UNAUTHENTICATED"));
  Completed wrong = KilnAs(harness, "guess", {"defs", "list"});
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.err, Catch::Contains("UNAUTHENTICATED"));
  Completed flag = KilnAs(harness, kRed, {"node"});
  INFO(flag.Describe());
  CHECK(flag.exit_code == 0);
  Completed env = Run({"/usr/bin/env", std::string("KILN_TOKEN=") + kBlue, KilnBinary(), "--server",
                       harness.address(), "defs", "list"});
  INFO(env.Describe());
  CHECK(env.exit_code == 0);
  CHECK_THAT(env.out, Catch::Contains("vector_add_f32"));
}

TEST_CASE("teams submit and read their own runs, see only scores of others, and rank") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data", {"--tokens", WriteTokens(dir), "--mode", "kernelbench"});
  const std::vector<std::string> add_def{"defs", "add", DataPath("scale_add_f32.json"),
                                         "--workloads", DataPath("scale_add_f32_single.jsonl")};
  Completed by_team = KilnAs(harness, kRed, add_def);
  CHECK(by_team.exit_code == 2);
  CHECK_THAT(by_team.err, Catch::Contains("PERMISSION_DENIED"));
  Completed by_ops = KilnAs(harness, kOps, add_def);
  INFO(by_ops.Describe());
  REQUIRE(by_ops.exit_code == 0);

  Completed submitted = Submit(harness, kRed);
  INFO(submitted.Describe());
  REQUIRE(submitted.exit_code == 0);
  const std::string run_id = json::parse(submitted.out)["run_id"];

  Completed own = KilnAs(harness, kRed, {"runs", "show", run_id});
  INFO(own.Describe());
  CHECK(own.exit_code == 0);
  CHECK_THAT(own.out, Catch::Contains("sources:"));
  CHECK_THAT(own.out, Catch::Contains("team-red"));

  Completed other = KilnAs(harness, kBlue, {"runs", "show", run_id, "--json"});
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.err, Catch::Contains("PERMISSION_DENIED"));
  CHECK(other.out.empty());

  Completed listed = KilnAs(harness, kBlue, {"runs", "list", "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  json runs = json::array();
  const json all_runs = json::parse(listed.out)["runs"];
  for (const json& run : all_runs) {
    // `defs add` started the harness's own check of the reference, under principal "kiln".
    if (run["principal"] != "kiln") runs.push_back(run);
  }
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["principal"] == "team-red");
  CHECK(runs[0]["status"] == "PASSED");

  Completed board = KilnAs(harness, kBlue, {"leaderboard", "scale_add_f32", "--json"});
  INFO(board.Describe());
  REQUIRE(board.exit_code == 0);
  json entries = json::parse(board.out)["entries"];
  REQUIRE(entries.size() == 1);
  CHECK(entries[0]["principal"] == "team-red");
  CHECK(entries[0]["run_id"] == run_id);
  Completed table = KilnAs(harness, kOps, {"leaderboard", "scale_add_f32"});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("team-red"));
  CHECK_THAT(table.out, Catch::Contains("rule latest"));
  CHECK_THAT(table.out, Catch::Contains("95% interval"));
  // The score carries the noise of both latencies: low <= score <= high.
  CHECK(entries[0]["score"].get<double>() > 0);
  CHECK(entries[0]["score_ci95_low"].get<double>() <= entries[0]["score"].get<double>());
  CHECK(entries[0]["score_ci95_high"].get<double>() >= entries[0]["score"].get<double>());
  CHECK(entries[0]["status"] == "PASSED");
  // A bad --noise-floor is a usage error naming the flag; a good one is accepted.
  Completed bad_floor =
      KilnAs(harness, kOps, {"leaderboard", "scale_add_f32", "--noise-floor", "-1"});
  CHECK(bad_floor.exit_code == 2);
  CHECK_THAT(bad_floor.err, Catch::Contains("--noise-floor: expected a fraction"));
  CHECK(KilnAs(harness, kOps, {"leaderboard", "scale_add_f32", "--noise-floor", "0.05"})
            .exit_code == 0);

  // A second submission is the team's latest: it counts, whether or not it was faster.
  Completed again = Submit(harness, kRed);
  REQUIRE(again.exit_code == 0);
  const std::string second_id = json::parse(again.out)["run_id"];
  auto board_run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"leaderboard", "scale_add_f32", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    Completed c = KilnAs(harness, kBlue, args);
    INFO(c.Describe());
    REQUIRE(c.exit_code == 0);
    json parsed = json::parse(c.out);
    REQUIRE(parsed["entries"].size() == 1);
    return parsed;
  };
  CHECK(board_run({})["entries"][0]["run_id"] == second_id);
  CHECK(board_run({})["rule"] == "latest");
  json best = board_run({"--best"});
  CHECK(best["rule"] == "best");
  CHECK(best["entries"][0]["passed_runs"] == 2);

  // The team designates its first run (by the random part progress lines show): it counts.
  Completed designate =
      KilnAs(harness, kRed, {"runs", "designate", run_id.substr(run_id.size() - 8)});
  INFO(designate.Describe());
  REQUIRE(designate.exit_code == 0);
  CHECK_THAT(designate.out, Catch::Contains("designated run"));
  json designated = board_run({});
  CHECK(designated["entries"][0]["run_id"] == run_id);
  CHECK(designated["entries"][0]["designated"] == true);
  // Another team cannot designate it, nor see that it exists.
  Completed foreign = KilnAs(harness, kBlue, {"runs", "designate", run_id});
  CHECK(foreign.exit_code == 2);
  CHECK_THAT(foreign.err, Catch::Contains("PERMISSION_DENIED"));
  Completed cleared = KilnAs(harness, kRed, {"runs", "undesignate", "scale_add_f32"});
  INFO(cleared.Describe());
  CHECK(cleared.exit_code == 0);
  CHECK(board_run({})["entries"][0]["run_id"] == second_id);

  // Confirmation: operators re-measure the top entries in one batch; the runs it makes record
  // what they confirm and never rank.
  Completed by_team_confirm =
      KilnAs(harness, kBlue, {"leaderboard", "scale_add_f32", "--confirm", "1"});
  CHECK(by_team_confirm.exit_code == 2);
  CHECK_THAT(by_team_confirm.err, Catch::Contains("PERMISSION_DENIED"));
  Completed confirm =
      KilnAs(harness, kOps, {"leaderboard", "scale_add_f32", "--confirm", "1", "--json"});
  INFO(confirm.Describe());
  REQUIRE(confirm.exit_code == 0);
  json confirmation = json::parse(confirm.out)["confirmation"];
  REQUIRE(confirmation.size() == 1);
  CHECK(confirmation[0]["principal"] == "team-red");
  CHECK(confirmation[0]["ranked_run_id"] == second_id);
  CHECK(confirmation[0]["status"] == "PASSED");
  const std::string confirmation_id = confirmation[0]["run_id"];
  CHECK(confirmation_id != second_id);
  Completed shown = KilnAs(harness, kOps, {"runs", "show", confirmation_id, "--json"});
  REQUIRE(shown.exit_code == 0);
  CHECK(json::parse(shown.out)["confirms"] == second_id);
  json after = board_run({});
  CHECK(after["entries"][0]["principal"] == "team-red");
  CHECK(after["entries"][0]["run_id"] == second_id);
}

TEST_CASE("over TLS the CLI needs the CA, and with mutual TLS a client certificate") {
  ScratchDir dir;
  MakeTestCertificates(dir);
  HarnessInstance harness(dir / "data", {"--tls-cert", dir / "server.pem", "--tls-key",
                                         dir / "server.key", "--tls-client-ca", dir / "ca.pem"});
  Completed plaintext = harness.Kiln({"node"});
  CHECK(plaintext.exit_code == 2);
  Completed no_client_cert = harness.Kiln({"--tls-ca", dir / "ca.pem", "node"});
  CHECK(no_client_cert.exit_code == 2);
  Completed mutual = harness.Kiln({"--tls-ca", dir / "ca.pem", "--tls-cert", dir / "client.pem",
                                   "--tls-key", dir / "client.key", "node"});
  INFO(mutual.Describe());
  CHECK(mutual.exit_code == 0);
  CHECK_THAT(mutual.out, Catch::Contains("runs archived"));
  Completed missing_ca = harness.Kiln({"--tls-ca", dir / "nope.pem", "node"});
  CHECK(missing_ca.exit_code == 2);
  CHECK_THAT(missing_ca.err, Catch::Contains("nope.pem"));
}

TEST_CASE("a harness refuses to serve remote clients without tokens or without TLS") {
  ScratchDir dir;
  Completed no_tokens = Run({HarnessBinary(), "--listen", "0.0.0.0:0", "--data-dir", dir / "a"});
  CHECK(no_tokens.exit_code == 2);
  CHECK_THAT(no_tokens.err, Catch::Contains("--tokens"));
  Completed no_tls = Run({HarnessBinary(), "--listen", "0.0.0.0:0", "--data-dir", dir / "b",
                          "--tokens", WriteTokens(dir)});
  CHECK(no_tls.exit_code == 2);
  CHECK_THAT(no_tls.err, Catch::Contains("--allow-insecure-remote"));
  Completed bad_tokens = Run({HarnessBinary(), "--listen", "127.0.0.1:0", "--data-dir", dir / "c",
                              "--tokens", DataPath("scale_add_f32.json")});
  CHECK(bad_tokens.exit_code == 2);
  CHECK_THAT(bad_tokens.err, Catch::Contains("scale_add_f32.json:1:"));
}

TEST_CASE("metrics count finished runs by status and logs carry run ids") {
  ScratchDir dir;
  // Without the reference check of `defs add`, the submission below is the only run to count.
  HarnessInstance harness(dir / "data", {"--metrics-listen", "127.0.0.1:0", "--quiet=false",
                                         "--check-references=false"});
  std::smatch m;
  const std::string log = harness.log();
  static const std::regex kMetrics("metrics=(127\\.0\\.0\\.1:[0-9]+)");
  REQUIRE(std::regex_search(log, m, kMetrics));
  const std::string metrics_address = m[1];
  REQUIRE(harness
              .Kiln({"defs", "add", DataPath("scale_add_f32.json"), "--workloads",
                     DataPath("scale_add_f32_single.jsonl")})
              .exit_code == 0);
  Completed submitted = Submit(harness, "");
  INFO(submitted.Describe());
  REQUIRE(submitted.exit_code == 0);
  const std::string run_id = json::parse(submitted.out)["run_id"];
  const std::string scraped = ScrapeMetrics(metrics_address);
  CHECK_THAT(scraped, Catch::Contains("kiln_runs_finished_total{status=\"PASSED\"} 1\n"));
  CHECK_THAT(scraped, Catch::Contains("kiln_compile_duration_seconds_count 1\n"));
  CHECK_THAT(scraped, Catch::Contains("kiln_device_busy_seconds_total{backend=\"host\""));
  CHECK_THAT(harness.log(), Catch::Contains("event=run_finished run_id=" + run_id));
}

}  // namespace
}  // namespace kiln::testing
