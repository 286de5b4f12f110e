// kiln-controller: campaigns that drive coding agents against kiln-harness nodes.
//
//   kiln-controller --listen HOST:PORT --data-dir DIR --harness ADDR[,ADDR...]
//
// Prints "kiln-controller listening on HOST:PORT" once ready and resumes every campaign its
// archive has as running. SIGTERM or SIGINT stops the campaigns' loops (they stay "running" and
// resume on the next start) and exits 0. Bad flags or an unusable data dir exit 2.
// $KILN_HARNESS_TOKEN, when set, is the bearer token sent to harnesses run with --tokens.
#include <semaphore.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "controller/campaign_archive.h"
#include "controller/controller_service.h"
#include "controller/harness_pool.h"

namespace {

constexpr char kUsage[] =
    "usage: kiln-controller --listen HOST:PORT --data-dir DIR --harness ADDR[,ADDR...]\n"
    "\n"
    "Serves kiln.v1.Controller. Port 0 picks a free port; the line \"kiln-controller listening\n"
    "on HOST:PORT\" on stdout says it is ready. --harness names the kiln-harness nodes (a host\n"
    "name that resolves to several addresses counts as several). Campaigns left running by a\n"
    "previous process resume. SIGTERM or SIGINT stops and exits 0; bad flags exit 2.\n"
    "$KILN_HARNESS_TOKEN, when set, is sent as the bearer token to harnesses run with --tokens.\n";

sem_t stop_requested;
void OnStopSignal(int) { sem_post(&stop_requested); }

int Fail(const std::string& message) {
  std::fprintf(stderr, "kiln-controller: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen, data_dir, harness;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
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
    } else if (name == "--harness") {
      harness = value;
    } else {
      return Fail("unknown flag " + name);
    }
  }
  if (listen.empty()) return Fail("--listen HOST:PORT is required");
  if (data_dir.empty()) return Fail("--data-dir DIR is required");
  if (harness.empty()) return Fail("--harness ADDR[,ADDR...] is required");
  std::vector<std::string> addresses = absl::StrSplit(harness, ',', absl::SkipWhitespace());

  auto archive = kiln::controller::CampaignArchive::Open(data_dir);
  if (!archive.ok()) return Fail(std::string(archive.status().message()));
  const char* token = std::getenv("KILN_HARNESS_TOKEN");
  kiln::controller::HarnessPool pool(addresses, token != nullptr ? token : "");
  kiln::controller::ControllerService service(**archive, pool, data_dir);

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
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return Fail("cannot listen on " + listen);
  std::string host = listen.substr(0, listen.rfind(':'));
  std::printf("kiln-controller listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  service.ResumeAll();

  while (sem_wait(&stop_requested) != 0) {
  }
  service.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
