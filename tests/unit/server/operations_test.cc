// What the operator sees: Prometheus exposition, the metrics endpoint, logfmt lines, and which
// addresses count as loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/numbers.h"
#include "access/server_credentials.h"
#include "server/harness_server.h"
#include "server/log_line.h"
#include "server/metrics_endpoint.h"
#include "server/prometheus_metrics.h"

namespace kiln {
namespace {

// GET `path` from 127.0.0.1:`port`; the whole response.
std::string HttpGet(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string request = "GET " + path + " HTTP/1.0\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
}

TEST_CASE("metrics render runs by status, durations as histograms and device busy time") {
  PrometheusMetrics metrics;
  metrics.SetLoadProbe([] { return LoadSample{3, 1}; });
  metrics.RunAdmitted();
  metrics.RunFinished("PASSED");
  metrics.RunFinished("PASSED");
  metrics.RunFinished("COMPILE_ERROR");
  metrics.RunRefused("RESOURCE_EXHAUSTED");
  metrics.CompileFinished(0.3);
  metrics.CompileFinished(700);
  metrics.EvaluationFinished(2);
  metrics.DeviceBusy("cuda", 1, 1.5, 0.25);
  metrics.DeviceBusy("cuda", 1, 2.5, 0.75);
  const std::string text = metrics.Render();
  CHECK_THAT(text, Catch::Contains("kiln_runs_finished_total{status=\"PASSED\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("kiln_runs_finished_total{status=\"COMPILE_ERROR\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_runs_refused_total{code=\"RESOURCE_EXHAUSTED\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_queue_depth 3\n"));
  CHECK_THAT(text, Catch::Contains("kiln_runs_running 1\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE kiln_compile_duration_seconds histogram\n"));
  CHECK_THAT(text, Catch::Contains("kiln_compile_duration_seconds_bucket{le=\"0.5\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_compile_duration_seconds_bucket{le=\"600\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_compile_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("kiln_compile_duration_seconds_count 2\n"));
  CHECK_THAT(text, Catch::Contains("kiln_evaluation_duration_seconds_count 1\n"));
  CHECK_THAT(text,
             Catch::Contains("kiln_device_busy_seconds_total{backend=\"cuda\",device=\"1\"} 4\n"));
  // 1 s of the 4 s held was GPU work of timed calls.
  CHECK_THAT(text, Catch::Contains(
                       "kiln_device_gpu_work_seconds_total{backend=\"cuda\",device=\"1\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_device_gpu_work_fraction 0.25\n"));
}

TEST_CASE("metrics render verdict stages per stage and the device-held fraction while pending") {
  PrometheusMetrics metrics;
  // 10 s with runs pending, 2 slots, 15 slot-seconds held meanwhile: 75 %.
  metrics.SetLoadProbe([] { return LoadSample{0, 0, 10.0, 15.0, 2}; });
  metrics.VerdictStage("compile", 0.3);
  metrics.VerdictStage("compile", 0.04);
  metrics.VerdictStage("candidate", 1.2);
  metrics.WarmWorkerStarted(/*from_spare=*/false);
  metrics.WarmWorkerStarted(/*from_spare=*/true);
  const std::string text = metrics.Render();
  CHECK_THAT(text, Catch::Contains("# TYPE kiln_verdict_stage_seconds histogram\n"));
  CHECK_THAT(text,
             Catch::Contains("kiln_verdict_stage_seconds_bucket{stage=\"compile\",le=\"0.05\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("kiln_verdict_stage_seconds_bucket{stage=\"compile\",le=\"0.35\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("kiln_verdict_stage_seconds_count{stage=\"compile\"} 2\n"));
  CHECK_THAT(text,
             Catch::Contains("kiln_verdict_stage_seconds_bucket{stage=\"candidate\",le=\"1\"} 0\n"));
  CHECK_THAT(text,
             Catch::Contains("kiln_verdict_stage_seconds_bucket{stage=\"candidate\",le=\"1.5\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_warm_workers_started_total 2\n"));
  CHECK_THAT(text, Catch::Contains("kiln_warm_workers_from_spare_total 1\n"));
  CHECK_THAT(text, Catch::Contains("kiln_work_pending_seconds_total 10\n"));
  CHECK_THAT(text, Catch::Contains("kiln_device_held_while_pending_seconds_total 15\n"));
  CHECK_THAT(text, Catch::Contains("kiln_device_held_fraction_while_pending 0.75\n"));
}

TEST_CASE("the metrics endpoint serves /metrics and 404s other paths") {
  auto endpoint = MetricsEndpoint::Start("127.0.0.1:0", [] { return std::string("kiln_x 1\n"); });
  REQUIRE(endpoint.ok());
  int port = 0;
  const std::string& address = (*endpoint)->address();
  REQUIRE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port));
  const std::string ok = HttpGet(port, "/metrics");
  CHECK_THAT(ok, Catch::StartsWith("HTTP/1.0 200 OK"));
  CHECK_THAT(ok, Catch::EndsWith("\r\n\r\nkiln_x 1\n"));
  CHECK_THAT(HttpGet(port, "/secrets"), Catch::StartsWith("HTTP/1.0 404"));
}

TEST_CASE("the metrics endpoint names an address it cannot use") {
  auto endpoint = MetricsEndpoint::Start("not-an-ip:9", [] { return std::string(); });
  REQUIRE_FALSE(endpoint.ok());
  CHECK_THAT(std::string(endpoint.status().message()), Catch::Contains("not-an-ip"));
}

TEST_CASE("log lines are logfmt with the event and quoted values") {
  const std::string line = FormatLogLine(absl::FromUnixSeconds(0), "run_finished",
                                         {{"run_id", "r-1"}, {"reason", "bad \"x\"=1\nnext"}});
  CHECK(line ==
        "ts=1970-01-01T00:00:00.000Z level=info event=run_finished run_id=r-1 "
        "reason=\"bad \\\"x\\\"=1\\nnext\"");
  // A PASSED run has no reason: no empty reason="" on its line.
  CHECK(FormatLogLine(absl::FromUnixSeconds(0), "run_finished",
                      {{"run_id", "r-2"}, {"status", "PASSED"}, {"reason", ""}}) ==
        "ts=1970-01-01T00:00:00.000Z level=info event=run_finished run_id=r-2 status=PASSED");
}

TEST_CASE("only loopback addresses count as loopback") {
  CHECK(IsLoopbackListen("127.0.0.1:50051"));
  CHECK(IsLoopbackListen("127.1.2.3:0"));
  CHECK(IsLoopbackListen("localhost:1"));
  CHECK(IsLoopbackListen("[::1]:1"));
  CHECK_FALSE(IsLoopbackListen("0.0.0.0:50051"));
  CHECK_FALSE(IsLoopbackListen("[::]:50051"));
  CHECK_FALSE(IsLoopbackListen("10.0.0.5:50051"));
  CHECK_FALSE(IsLoopbackListen("gpu-node-3:50051"));
}

TEST_CASE("a remote address needs tokens, and TLS unless insecure remote is allowed") {
  HarnessOptions o;
  o.listen = "0.0.0.0:0";
  auto no_tokens = MakeServerCredentials(AccessOf(o));
  REQUIRE_FALSE(no_tokens.ok());
  CHECK_THAT(std::string(no_tokens.status().message()), Catch::Contains("--tokens"));
  o.tokens_file = "tokens";
  auto no_tls = MakeServerCredentials(AccessOf(o));
  REQUIRE_FALSE(no_tls.ok());
  CHECK_THAT(std::string(no_tls.status().message()), Catch::Contains("--allow-insecure-remote"));
  o.allow_insecure_remote = true;
  CHECK(MakeServerCredentials(AccessOf(o)).ok());
  o.tls_cert = "cert.pem";  // without its key
  CHECK(MakeServerCredentials(AccessOf(o)).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("client credentials: plaintext without files, errors that name the flag and the file") {
  CHECK(MakeChannelCredentials("", "", "").ok());
  auto half = MakeChannelCredentials("", "client.pem", "", "--harness-tls");
  REQUIRE_FALSE(half.ok());
  CHECK(half.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(half.status().message()),
             Catch::Contains("--harness-tls-cert and --harness-tls-key go together"));
  auto missing = MakeChannelCredentials("/nonexistent/ca.pem", "", "");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(missing.status().message()),
             Catch::Contains("--tls-ca /nonexistent/ca.pem"));
}

}  // namespace
}  // namespace kiln
