// kiln-controller: campaigns that drive coding agents against kiln-harness nodes.
//
//   kiln-controller --listen HOST:PORT --data-dir DIR --harness ADDR[,ADDR...]
//                   [--tokens FILE] [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
//                   [--harness-tls-ca FILE [--harness-tls-cert FILE --harness-tls-key FILE]]
//                   [--harness-probe-s S] [--harness-gone-s S] [--harness-wait-s S]
//                   [--harness-resolve-s S]
//
// The same port serves kiln.v1.Harness for the whole fleet (controller/fleet/fleet_service.h):
// `kiln --server CONTROLLER submit ...` evaluates on whichever harness is free.
// Prints "kiln-controller listening on HOST:PORT" once ready and resumes every campaign its
// archive has as running. SIGTERM or SIGINT stops the campaigns' loops (they stay "running" and
// resume on the next start) and exits 0. Bad flags or an unusable data dir exit 2.
// Access is the harness's: --tokens (principals and roles; see controller_service.h for what
// each role may do), TLS, mutual TLS, no remote address without tokens and TLS. Towards the
// harnesses the controller is a client: $KILN_HARNESS_TOKEN (or --harness-token-file) is its
// bearer token, --harness-tls-* its TLS.
#include <semaphore.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "access/authenticator.h"
#include "access/listen_check.h"
#include "access/server_credentials.h"
#include "access/token_file.h"
#include "controller/campaign_archive.h"
#include "controller/fleet/fleet_service.h"
#include "controller/fleet/run_index.h"
#include "controller/controller_service.h"
#include "controller/harness_pool.h"
#include "harness/common/files.h"
#include "web/web_console.h"

namespace {

constexpr char kUsage[] =
    "usage: kiln-controller --listen HOST:PORT --data-dir DIR --harness ADDR[,ADDR...]\n"
    "\n"
    "Serves kiln.v1.Controller. Port 0 picks a free port; the line \"kiln-controller listening\n"
    "on HOST:PORT\" on stdout says it is ready. --harness names the kiln-harness nodes (a host\n"
    "name that resolves to several addresses counts as several). Campaigns left running by a\n"
    "previous process resume. SIGTERM or SIGINT stops and exits 0; bad flags exit 2.\n"
    "\n"
    "Access (as kiln-harness's):\n"
    "  --tokens FILE             one principal a line: NAME ROLE SHA256HEX (ROLE team | agent |\n"
    "                            operator). Operators start and cancel campaigns and see all;\n"
    "                            a team or agent sees the campaigns started for it (--owner).\n"
    "                            WITHOUT --tokens: loopback only, every caller is an operator.\n"
    "  --tls-cert FILE --tls-key FILE   serve TLS; --tls-client-ca FILE requires client certs\n"
    "  --allow-insecure-remote   allow plaintext on a non-loopback address (tokens in clear)\n"
    "  --http-listen HOST:PORT   the read-only web console (campaigns), same tokens and TLS\n"
    "Towards the harnesses:\n"
    "  --harness-token-file FILE the bearer token to send (else $KILN_HARNESS_TOKEN)\n"
    "  --harness-tls-ca FILE     connect with TLS, trusting this PEM CA certificate\n"
    "  --harness-tls-cert FILE --harness-tls-key FILE   client certificate for mutual TLS\n"
    "  --harness-probe-s S       ask each harness for its state every S seconds (default 2)\n"
    "  --harness-gone-s S        a harness that has not answered for S seconds is gone: its\n"
    "                            runs in flight are evaluated elsewhere (default 30)\n"
    "  --harness-wait-s S        an evaluation waits up to S seconds for a healthy harness\n"
    "                            before it fails (default 600)\n"
    "  --harness-resolve-s S     resolve the --harness names again every S seconds; an address\n"
    "                            a name gained is a new harness (default 30; 0: never)\n";

sem_t stop_requested;
void OnStopSignal(int) { sem_post(&stop_requested); }

int Fail(const std::string& message) {
  std::fprintf(stderr, "kiln-controller: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen, data_dir, harness, harness_token_file, harness_ca, harness_cert,
      harness_key, http_listen;
  kiln::ListenAccess access;
  kiln::controller::PoolOptions pool_options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--allow-insecure-remote") {
      access.allow_insecure_remote = true;
      continue;
    }
    std::string name = a, value;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return Fail("flag " + a + " needs a value");
    }
    if (name == "--listen") {
      listen = value;
    } else if (name == "--data-dir") {
      data_dir = value;
    } else if (name == "--http-listen") {
      http_listen = value;
    } else if (name == "--harness") {
      harness = value;
    } else if (name == "--tokens") {
      access.tokens_file = value;
    } else if (name == "--tls-cert") {
      access.tls_cert = value;
    } else if (name == "--tls-key") {
      access.tls_key = value;
    } else if (name == "--tls-client-ca") {
      access.tls_client_ca = value;
    } else if (name == "--harness-token-file") {
      harness_token_file = value;
    } else if (name == "--harness-tls-ca") {
      harness_ca = value;
    } else if (name == "--harness-tls-cert") {
      harness_cert = value;
    } else if (name == "--harness-tls-key") {
      harness_key = value;
    } else if (name == "--harness-resolve-s") {
      char* end = nullptr;
      const double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(seconds >= 0) || seconds > 86400) {
        return Fail("flag " + name + " needs a number of seconds in [0, 86400], not '" + value +
                    "'");
      }
      pool_options.resolve_interval_s = seconds;
    } else if (name == "--harness-probe-s" || name == "--harness-gone-s" ||
               name == "--harness-wait-s") {
      char* end = nullptr;
      const double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(seconds > 0) || seconds > 86400) {
        return Fail("flag " + name + " needs a number of seconds in (0, 86400], not '" + value +
                    "'");
      }
      (name == "--harness-probe-s"  ? pool_options.probe_interval_s
       : name == "--harness-gone-s" ? pool_options.gone_after_s
                                    : pool_options.wait_s) = seconds;
    } else {
      return Fail("unknown flag " + name);
    }
  }
  if (listen.empty()) return Fail("--listen HOST:PORT is required");
  if (data_dir.empty()) return Fail("--data-dir DIR is required");
  if (harness.empty()) return Fail("--harness ADDR[,ADDR...] is required");
  if (pool_options.gone_after_s <= pool_options.probe_interval_s) {
    return Fail("--harness-gone-s must be longer than --harness-probe-s");
  }
  std::vector<std::string> addresses = absl::StrSplit(harness, ',', absl::SkipWhitespace());

  access.listen = listen;
  auto credentials = kiln::MakeServerCredentials(access);
  if (!credentials.ok()) return Fail(std::string(credentials.status().message()));
  kiln::Authenticator auth = kiln::Authenticator::Open();
  if (!access.tokens_file.empty()) {
    auto tokens = kiln::LoadTokenFile(access.tokens_file);
    if (!tokens.ok()) return Fail(std::string(tokens.status().message()));
    auth = kiln::Authenticator::WithTokens(*std::move(tokens));
  }
  std::string harness_token;
  if (!harness_token_file.empty()) {
    auto text = kiln::ReadFile(harness_token_file);
    if (!text.ok()) {
      return Fail("--harness-token-file " + harness_token_file + ": " +
                  std::string(text.status().message()));
    }
    harness_token = std::string(absl::StripAsciiWhitespace(*text));
    if (harness_token.empty()) return Fail("--harness-token-file " + harness_token_file + " is empty");
  } else if (const char* token = std::getenv("KILN_HARNESS_TOKEN"); token != nullptr) {
    harness_token = token;
  }
  auto harness_credentials =
      kiln::MakeChannelCredentials(harness_ca, harness_cert, harness_key, "--harness-tls");
  if (!harness_credentials.ok()) return Fail(std::string(harness_credentials.status().message()));

  if (absl::Status s = kiln::CheckListenAddress(listen, "kiln-controller"); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  auto archive = kiln::controller::CampaignArchive::Open(data_dir);
  if (!archive.ok()) return Fail(std::string(archive.status().message()));
  kiln::controller::HarnessPool pool(addresses, harness_token, *harness_credentials,
                                     pool_options);
  // The fleet's front door (kiln.v1.Harness on the same port) indexes the runs it sends.
  auto run_index = kiln::controller::RunIndex::Open(data_dir);
  if (!run_index.ok()) return Fail(std::string(run_index.status().message()));
  auto registrations = kiln::controller::RegistrationLog::Open(data_dir);
  if (!registrations.ok()) return Fail(std::string(registrations.status().message()));
  auto journal = (*registrations)->All();
  if (!journal.ok()) return Fail(std::string(journal.status().message()));
  // What callers registered through this controller before it restarted: every harness takes it
  // before it is offered work.
  pool.LoadJournal(*journal);
  kiln::controller::FleetService fleet(pool, **run_index, auth, registrations->get());
  kiln::controller::ControllerService service(**archive, pool, data_dir, std::move(auth));

  sem_init(&stop_requested, 0, 0);
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);

  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&service);
  builder.RegisterService(&fleet);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail("cannot listen on " + listen);
  std::string host = listen.substr(0, listen.rfind(':'));
  std::printf("kiln-controller listening on %s:%d\n", host.c_str(), port);
  std::unique_ptr<kiln::WebConsole> console;
  if (!http_listen.empty()) {
    kiln::WebConsoleOptions options;
    options.access = access;
    options.access.listen = http_listen;
    options.controller = true;
    auto started = kiln::WebConsole::Start(options, server->InProcessChannel(grpc::ChannelArguments()));
    if (!started.ok()) return Fail(std::string(started.status().message()));
    console = *std::move(started);
    std::printf("kiln-controller web console on %s\n", console->url().c_str());
  }
  std::fflush(stdout);
  service.ResumeAll();

  while (sem_wait(&stop_requested) != 0) {
  }
  if (console != nullptr) console->Stop();
  service.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
