// Hostile candidates against a real, sandboxed kiln-harness: each attempt ends with a clear
// verdict, nothing outside the run's folder is read or written, and the harness passes an honest
// run afterwards. A kernel returns 7 when every attempt failed and 99 when one got through, so
// the verdict's "entry point returned N" says what the sandbox did.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

constexpr char kSecret[] = "team-b operator 5ec7e75ec7e75ec7e7";

// A harness with a short compile limit and a small worker memory limit, and a secret file in its
// data dir (where a tokens file would be).
struct HostileHarness {
  HostileHarness() {
    std::ofstream(data.path() + "/tokens") << kSecret << "\n";
    harness.emplace(data.path(), std::vector<std::string>{"--compile-timeout-s", "10",
                                                          "--worker-memory-mb", "512"});
  }
  ScratchDir data;
  std::optional<HarnessInstance> harness;
};

HostileHarness& Shared() {
  // Destroyed when the binary exits, which stops the harness and removes its data (a leaked one
  // outlived the test binary, with its workers and folders).
  static HostileHarness h;
  return h;
}

const std::string kPrelude = R"(#include <kiln/abi.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static int Honest(const kiln_tensor* args) {
  const float* a = static_cast<const float*>(args[0].data);
  const float* b = static_cast<const float*>(args[1].data);
  float* out = static_cast<float*>(args[2].data);
  for (int64_t i = 0; i < args[0].shape[0]; ++i) out[i] = a[i] * 2.0f + b[i];
  return 0;
}
)";

// Submits a cpp solution whose kernel.cc is `source`; returns the parsed --json result.
json SubmitSource(const std::string& name, const std::string& source) {
  ScratchDir dir;
  std::ofstream(dir.path() + "/solution.json") << json{
      {"name", name},
      {"definition", "scale_add_f32"},
      {"author", "kiln-hostile-tests"},
      {"spec",
       {{"language", "cpp"}, {"target_hardware", {"cpu"}}, {"entry_point", "kernel.cc::run"}}}};
  std::ofstream(dir.path() + "/kernel.cc") << source;
  Completed r = Shared().harness->Kiln(
      {"submit", "--definition", DataPath("scale_add_f32.json"), "--solution", dir.path(), "--mode",
       "kernelbench", "--workloads", DataPath("scale_add_f32_single.jsonl"), "--json"},
      240);
  INFO(r.Describe());
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

// Every log and reason of the result, joined.
std::string AllText(const json& j) { return j.dump(); }

std::string Kernel(const std::string& body) {
  return kPrelude + "extern \"C\" int run(const kiln_tensor* args, int32_t nargs, "
                    "const kiln_context* ctx) {\n" + body + "\n}\n";
}

void ExpectHonestRunPasses() {
  json j = SubmitSource("honest_after_hostile", Kernel("return Honest(args);"));
  CHECK(j["status"] == "PASSED");
}

}  // namespace

TEST_CASE("a candidate cannot read the data dir or the tokens file") {
  const std::string data = Shared().harness->data_dir();
  json j = SubmitSource("read_secrets", Kernel(R"(
    const char* paths[] = {")" + data + R"(/tokens", "/root/.bashrc", "/etc/shadow"};
    for (const char* p : paths) {
      int fd = open(p, O_RDONLY);
      if (fd >= 0) return 99;
    }
    // The data dir exists only as the empty skeleton leading to the bound folders.
    DIR* d = opendir(")" + data + R"(");
    while (struct dirent* e = d != nullptr ? readdir(d) : nullptr) {
      if (strcmp(e->d_name, "tokens") == 0) return 98;
    }
    return 7;)"));
  const std::string text = AllText(j);
  INFO(text);
  CHECK(j["status"] == "RUNTIME_ERROR");
  CHECK(text.find("entry point returned 7") != std::string::npos);  // every open failed
  CHECK(text.find("5ec7e75ec7") == std::string::npos);
  ExpectHonestRunPasses();
}

TEST_CASE("a candidate cannot write outside its job folder") {
  const std::string data = Shared().harness->data_dir();
  json j = SubmitSource("write_outside", Kernel(R"(
    const char* paths[] = {")" + data + R"(/pwned", "../pwned", "/usr/pwned"};
    for (const char* p : paths) {
      if (open(p, O_CREAT | O_WRONLY, 0644) >= 0) return 99;
    }
    return 7;)"));
  const std::string text = AllText(j);
  INFO(text);
  CHECK(j["status"] == "RUNTIME_ERROR");
  CHECK(text.find("entry point returned 7") != std::string::npos);  // every open failed
  CHECK(::access((data + "/pwned").c_str(), F_OK) != 0);
  CHECK(::access("/usr/pwned", F_OK) != 0);
  ExpectHonestRunPasses();
}

TEST_CASE("a candidate cannot connect to the harness port") {
  const std::string address = Shared().harness->address();
  const std::string port = address.substr(address.rfind(':') + 1);
  json j = SubmitSource("connect_harness", Kernel(R"(
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return 7;
    sockaddr_in a = {}; a.sin_family = AF_INET; a.sin_port = htons()" + port + R"();
    a.sin_addr.s_addr = htonl(0x7f000001);
    return connect(s, (sockaddr*)&a, sizeof a) == 0 ? 99 : 8;)"));
  const std::string text = AllText(j);
  INFO(text);
  CHECK(j["status"] == "RUNTIME_ERROR");
  CHECK(text.find("entry point returned 7") != std::string::npos);  // no AF_INET socket
  ExpectHonestRunPasses();
}

TEST_CASE("a fork loop is bounded and ends the run") {
  json j = SubmitSource("fork_loop", Kernel(R"(
    for (int n = 0;; ++n) {
      pid_t p = fork();
      if (p == 0) { pause(); _exit(0); }
      if (p < 0) return 7;
    })"));
  const std::string text = AllText(j);
  INFO(text);
  CHECK((j["status"] == "RUNTIME_ERROR" || j["status"] == "TIMEOUT"));
  CHECK(text.find("entry point returned 7") != std::string::npos);  // fork failed at the limit
  ExpectHonestRunPasses();
}

TEST_CASE("memory exhaustion ends in a clear error") {
  json j = SubmitSource("memory_hog", Kernel(R"(
    for (size_t total = 0;; total += 64 << 20) {
      char* p = static_cast<char*>(malloc(64 << 20));
      if (p == nullptr) return 7;
      memset(p, 1, 64 << 20);
    })"));
  const std::string text = AllText(j);
  INFO(text);
  CHECK(j["status"] == "RUNTIME_ERROR");
  CHECK((text.find("memory limit of 512 MiB") != std::string::npos ||
         text.find("entry point returned 7") != std::string::npos));
  ExpectHonestRunPasses();
}

TEST_CASE("an include of a host path or of itself is a compile error") {
  const std::string data = Shared().harness->data_dir();
  json host = SubmitSource("include_host", "#include \"" + data + "/tokens\"\n" +
                                               Kernel("return Honest(args);"));
  INFO(AllText(host));
  CHECK(host["status"] == "COMPILE_ERROR");
  CHECK(AllText(host).find("5ec7e75ec7") == std::string::npos);
  json self = SubmitSource("include_self", "#include \"kernel.cc\"\n" + Kernel("return 0;"));
  CHECK(self["status"] == "COMPILE_ERROR");
  ExpectHonestRunPasses();
}

TEST_CASE("an endless compile is stopped by the compile time limit") {
  json j = SubmitSource("constexpr_bomb", kPrelude + R"(
constexpr long Spin() { long s = 0; for (long i = 0; i < (1L << 40); ++i) s += i ^ (s >> 3); return s; }
static_assert(Spin() != 1, "spin");
extern "C" int run(const kiln_tensor* args, int32_t, const kiln_context*) { return Honest(args); }
)");
  const std::string text = AllText(j);
  INFO(text);
  CHECK(j["status"] == "COMPILE_ERROR");
  CHECK((text.find("timed out") != std::string::npos ||
         text.find("constexpr") != std::string::npos));
  ExpectHonestRunPasses();
}

TEST_CASE("output flooding is stopped at the log limit, not at the time limit, with the log cut") {
  json j = SubmitSource("flood", Kernel(R"(
    static char line[1 << 16]; memset(line, 'x', sizeof line - 1);
    for (;;) puts(line);)"));
  INFO(j.dump().substr(0, 2000));
  CHECK(j["status"] == "RUNTIME_ERROR");
  CHECK_THAT(j.dump(), Catch::Contains("output passed 64 MiB"));
  CHECK(j.dump().size() < (4u << 20));
  ExpectHonestRunPasses();
}
