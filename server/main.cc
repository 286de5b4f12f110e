// kiln-harness: the evaluation service of one node.
//
//   kiln-harness --listen HOST:PORT --data-dir DIR [--backend auto|host|cuda|level_zero]
//                [--mode official|kernelbench|robust] [--worker-timeout-s S]
//                [--compile-timeout-s S] [--max-queue N] [--quiet]
//
// Prints "kiln-harness listening on HOST:PORT" once ready. SIGTERM or SIGINT drains: new
// evaluations are refused, admitted ones finish, then the process exits 0. Bad flags, an
// unusable data dir or a failed bind exit 2.
#include <semaphore.h>
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "server/access_flags.h"
#include "server/command_line.h"
#include "server/harness_server.h"
#include "server/sandbox_flags.h"

ABSL_FLAG(std::string, listen, "", "HOST:PORT to serve on; port 0 picks a free port");
ABSL_FLAG(std::string, data_dir, "", "folder of the archive, compile cache and job folders");
ABSL_FLAG(std::string, backend, "auto", "auto | host | cuda | level_zero");
ABSL_FLAG(std::string, mode, "official", "default timing mode: official | kernelbench | robust");
ABSL_FLAG(double, worker_timeout_s, 300, "wall-clock limit of one worker, seconds");
ABSL_FLAG(double, compile_timeout_s, 120, "wall-clock limit of one compile, seconds");
ABSL_FLAG(int, compile_threads, 0,
          "compiles run side by side; 0: half the CPU cores, between 2 and 16");
ABSL_FLAG(int, compile_nice, 0,
          "added to the nice value of the compile threads and the compilers they start (0 to "
          "19), so that the run holding a device slot gets the CPU first; 0: as the harness");
ABSL_FLAG(int, max_queue, 64, "admitted, unfinished runs beyond which Evaluate is refused");
ABSL_FLAG(bool, quiet, false, "no log lines on stderr");
ABSL_FLAG(int64_t, host_flush_mb, 0,
          "host backend, every mode: cache-flush buffer in MiB (0: the mode's own, twice the "
          "last-level cache or kernelbench's 256 MiB); recorded with every timing");
ABSL_FLAG(std::string, python, "python3",
          "the python3 whose torch runs definitions' Python references (flashinfer-bench "
          "run()) and Python/Triton solutions; none: native references only, no Python "
          "solutions");
ABSL_FLAG(bool, warm_references, true,
          "keep each definition's reference running between runs (one sandboxed worker per "
          "reference and device, torch imported and the device's context made); false: a "
          "fresh reference worker for every workload");
ABSL_FLAG(bool, keep_reference_files, true,
          "a warm reference worker's output files of a run (up to 2 GiB a worker) are kept for "
          "its next run to write over in place; false: written anew every run");
ABSL_FLAG(bool, python_spares, true,
          "keep Python runners per GPU started ahead of need (torch imported): one for the next "
          "Python/Triton candidate, one for the next Python reference no warm worker serves");
ABSL_FLAG(std::string, scratch_dir, "auto",
          "where workers' folders, and the outputs they write for the judge, live: auto "
          "(/dev/shm when it is a tmpfs), a folder, or empty (the data dir); a run whose "
          "outputs do not fit in half the free memory uses the data dir");
ABSL_FLAG(bool, check_references, true,
          "run a new definition's native reference once when it is added, flagging it when "
          "all-zero or constant output would pass");

namespace {

constexpr int kUsageError = 2;

// Posted by the stop signals' handler (sem_post is async-signal-safe); main waits on it. A
// handler rather than a blocked mask: threads started before main (library initialisers) would
// not carry the mask, and a signal landing on one of them would kill the process.
sem_t stop_requested;

void OnStopSignal(int) { sem_post(&stop_requested); }

void InstallStopHandlers() {
  sem_init(&stop_requested, 0, 0);
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "kiln-harness: %s\n", message.c_str());
  return kUsageError;
}

kiln::HarnessOptions OptionsFromFlags() {
  kiln::HarnessOptions o;
  o.listen = absl::GetFlag(FLAGS_listen);
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.backend = absl::GetFlag(FLAGS_backend);
  o.default_mode = absl::GetFlag(FLAGS_mode);
  o.worker_timeout_s = absl::GetFlag(FLAGS_worker_timeout_s);
  o.compile_timeout_s = absl::GetFlag(FLAGS_compile_timeout_s);
  o.max_queue = absl::GetFlag(FLAGS_max_queue);
  o.compile_threads = absl::GetFlag(FLAGS_compile_threads);
  o.compile_nice = absl::GetFlag(FLAGS_compile_nice);
  o.quiet = absl::GetFlag(FLAGS_quiet);
  o.host_flush_mb = absl::GetFlag(FLAGS_host_flush_mb);
  o.python = absl::GetFlag(FLAGS_python);
  o.check_references = absl::GetFlag(FLAGS_check_references);
  o.warm_references = absl::GetFlag(FLAGS_warm_references);
  o.keep_reference_files = absl::GetFlag(FLAGS_keep_reference_files);
  o.python_spares = absl::GetFlag(FLAGS_python_spares);
  o.scratch_dir = absl::GetFlag(FLAGS_scratch_dir);
  kiln::ApplyAccessFlags(&o);
  kiln::ApplySandboxFlags(&o);
  return o;
}

}  // namespace

constexpr char kUsage[] =
    "usage: kiln-harness --listen HOST:PORT --data-dir DIR [--backend auto|host|cuda|level_zero]\n"
    "                    [--mode official|kernelbench|robust] [--worker-timeout-s S]\n"
    "                    [--compile-timeout-s S] [--max-queue N] [--quiet]\n"
    "                    [--check-references=true|false] [--python PATH|none]\n"
    "                    [--host-flush-mb N] [--warm-references=true|false]\n"
    "                    [--keep-reference-files=true|false]\n"
    "                    [--python-spares=true|false] [--compile-threads N]\n"
    "                    [--compile-nice N]\n"
    "                    [--scratch-dir auto|DIR|'']\n"
    "\n"
    "Serves kiln.v1.Harness. Port 0 picks a free port; the line \"kiln-harness listening on\n"
    "HOST:PORT\" on stdout says it is ready. SIGTERM or SIGINT drains: new evaluations are\n"
    "refused, admitted ones finish, then it exits 0. Bad flags, an unusable data dir or a\n"
    "failed bind exit 2. A definition added with PutDefinition gets one run of its native\n"
    "reference on its first workload (--check-references, default true), so `kiln defs list`\n"
    "flags it when all-zero or constant output would pass its tolerances.\n"
    "\n"
    "  --python PATH|none        the python3 (a virtual environment's works) whose torch runs\n"
    "                            definitions' Python references and Python/Triton solutions\n"
    "                            (default python3; none: native references only, no Python\n"
    "                            solutions). Probed at start, in the background; a PATH that\n"
    "                            is no program is refused at once, and one without torch is\n"
    "                            named in the log and in kiln node with a python3 that has it\n"
    "  --host-flush-mb N         host backend, every mode: cache-flush buffer in MiB (0: the\n"
    "                            mode's own, twice the last-level cache or kernelbench's\n"
    "                            256 MiB); recorded with every timing\n"
    "  --warm-references=B       keep each definition's reference running between runs: one\n"
    "                            sandboxed worker per reference program and device, its torch\n"
    "                            imported and its device context made (default true; false: a\n"
    "                            fresh reference worker for every workload). Candidates always\n"
    "                            get a fresh process of their own\n"
    "  --keep-reference-files=B  a warm reference worker's output files of a run, up to 2 GiB\n"
    "                            a worker, are kept for its next run to write each pass over\n"
    "                            in place: no new pages on the RAM-backed folder (default\n"
    "                            true; false: written anew every run)\n"
    "  --python-spares=B         keep Python runners per GPU started ahead of need, torch\n"
    "                            imported on the CPU only: one (triton too) for the next\n"
    "                            Python or Triton candidate, which serves one run, and one for\n"
    "                            the next Python reference that no warm worker serves yet,\n"
    "                            which becomes its warm worker (default true; none on the host\n"
    "                            backend, whose timings are CPU time)\n"
    "  --scratch-dir auto|DIR    where workers' folders, and the outputs they write for the\n"
    "                            judge, live (default auto: /dev/shm when it is a tmpfs;\n"
    "                            empty: the data dir). A run whose outputs do not fit in half\n"
    "                            the free memory writes in the data dir\n"
    "  --compile-threads N       candidates compiled side by side (default 0: half the CPU\n"
    "                            cores, between 2 and 16)\n"
    "  --compile-nice N          added to the nice value of the compile threads and every\n"
    "                            compiler or check they start (0 to 19; default 0: as the\n"
    "                            harness). On a node of its own, 10 gives the run on a device\n"
    "                            slot, whose worker checks every timed call, the CPU first\n"
    "                            while queued runs compile; where other work shares the CPU,\n"
    "                            compiles then wait for it too\n";

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h" || a == "--helpfull") {
      std::fputs(kUsage, stdout);
      std::fputs("\n", stdout);
      std::fputs(kiln::kAccessFlagsUsage, stdout);
      std::fputs("\n", stdout);
      std::fputs(kiln::kSandboxFlagsUsage, stdout);
      return 0;
    }
  }
  // Flags are spelled with dashes on the command line (--data-dir); absl names use underscores.
  std::vector<std::string> args = kiln::NormalizeFlagNames(argc, argv);
  if (std::string error = kiln::CheckFlags(args); !error.empty()) return Fail(error);
  std::vector<char*> arg_ptrs;
  arg_ptrs.reserve(args.size());
  for (std::string& a : args) arg_ptrs.push_back(a.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  if (positional.size() > 1) return Fail(std::string("unexpected argument: ") + positional[1]);
  kiln::HarnessOptions options = OptionsFromFlags();
  if (kiln::NodeCheckRequested()) return kiln::RunRequestedCheck(options);
  if (options.listen.empty()) return Fail("--listen HOST:PORT is required");
  if (options.data_dir.empty()) return Fail("--data-dir DIR is required");

  InstallStopHandlers();
  auto server = kiln::HarnessServer::Start(options);
  if (!server.ok()) return Fail(std::string(server.status().message()));
  std::printf("kiln-harness listening on %s\n", (*server)->address().c_str());
  if (!(*server)->console_url().empty()) {
    std::printf("kiln-harness web console on %s\n", (*server)->console_url().c_str());
  }
  std::fflush(stdout);

  while (sem_wait(&stop_requested) != 0) {
  }
  (*server)->Drain();
  return 0;
}
