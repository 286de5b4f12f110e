// Which processes serve a run: one fresh candidate process for all of a run's workloads, never
// shared with another run; the reference served by a warm worker kept between runs (unless
// --warm-references=false).
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <regex>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "harness/common/sha256.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::EvaluateOutcome;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;
using testing::VectorAddWorkload;

// Prints where its own code was loaded (ASLR: another process, another address) on the first
// element of every call.
v1::Solution ProcessReporter(const std::string& name) {
  return VectorAddSolution(name, R"(
    if (i == 0) { std::printf("kiln-test process %p\n", (void*)&marker); std::fflush(stdout); }
    c[i] = a[i] + b[i];)",
                           "#include <cstdio>\nstatic int marker;\n");
}

v1::EvaluateRequest ThreeWorkloads(const v1::Solution& solution) {
  v1::EvaluateRequest request = VectorAddRequest(solution, 1024);
  *request.add_workloads() = VectorAddWorkload(2048, "test-n2048");
  *request.add_workloads() = VectorAddWorkload(4096, "test-n4096");
  return request;
}

// The process markers each workload's worker log names, by workload ("w0", "w1", ...).
std::map<std::string, std::set<std::string>> Processes(TestNode& node, const v1::Run& run) {
  std::map<std::string, std::set<std::string>> out;
  const std::regex marker("kiln-test process (0x[0-9a-f]+)");
  for (const auto& [name, text] : testing::WorkerLogs(node.stub(), run.run_id())) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), marker);
         it != std::sregex_iterator(); ++it) {
      out[name].insert((*it)[1].str());
    }
  }
  return out;
}

// The run `request` made, as archived, whatever its verdict.
v1::Run Evaluated(TestNode& node, const v1::EvaluateRequest& request) {
  EvaluateOutcome out = Evaluate(node.stub(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  grpc::ClientContext ctx;
  v1::GetRunRequest get;
  get.set_run_id(out.run().run_id());
  v1::Run archived;
  REQUIRE(node.stub().GetRun(&ctx, get, &archived).ok());
  REQUIRE(archived.traces_size() == request.workloads_size());
  return archived;
}

v1::Run Passed(TestNode& node, const v1::EvaluateRequest& request) {
  v1::Run run = Evaluated(node, request);
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  return run;
}

// Folders of warm reference workers started on this node.
int WarmWorkersStarted(const TestNode& node) {
  const std::string warm = node.dir() + "/data/jobs/warm";
  if (!std::filesystem::exists(warm)) return 0;
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(warm)) n += entry.is_directory();
  return n;
}

TEST_CASE("a run's workloads share one candidate process that no other run shares") {
  TestNode node;
  v1::Run first = Passed(node, ThreeWorkloads(ProcessReporter("reporter")));
  v1::Run second = Passed(node, ThreeWorkloads(ProcessReporter("reporter")));
  auto a = Processes(node, first);
  auto b = Processes(node, second);
  REQUIRE(a.size() == 3);
  REQUIRE(b.size() == 3);
  // Within a run: every workload's log names the same one process.
  std::set<std::string> in_a, in_b;
  for (const auto& [name, markers] : a) in_a.insert(markers.begin(), markers.end());
  for (const auto& [name, markers] : b) in_b.insert(markers.begin(), markers.end());
  CHECK(in_a.size() == 1);
  CHECK(in_b.size() == 1);
  // Across runs: another process (another load address).
  CHECK(in_a != in_b);
  // The reference was served by one warm worker for both runs.
  CHECK(WarmWorkersStarted(node) == 1);
}

TEST_CASE("a candidate whose worker fails a workload gets a fresh process for the next one") {
  TestNode node;
  // Fails (non-zero return) on the 2048 workload only: the worker ends there.
  v1::Solution s = VectorAddSolution("fails_middle", R"(
    if (i == 0) { std::printf("kiln-test process %p\n", (void*)&marker); std::fflush(stdout); }
    if (args[0].shape[0] == 2048) return 5;
    c[i] = a[i] + b[i];)",
                                     "#include <cstdio>\nstatic int marker;\n");
  v1::Run run = Evaluated(node, ThreeWorkloads(s));
  CHECK(run.traces(0).evaluation().status() == v1::PASSED);
  CHECK(run.traces(1).evaluation().status() == v1::RUNTIME_ERROR);
  CHECK_THAT(run.traces(1).kiln().reason(), Catch::Contains("returned 5"));
  CHECK(run.traces(2).evaluation().status() == v1::PASSED);
  auto markers = Processes(node, run);
  REQUIRE(markers["w0"].size() == 1);
  REQUIRE(markers["w2"].size() == 1);
  CHECK(markers["w0"] != markers["w2"]);
}

TEST_CASE("a workload whose outputs are wrong is not timed, and its process serves the next") {
  TestNode node;
  // Wrong on the 2048 workload only: judged at the gate of its first trial, never timed.
  v1::Solution s = VectorAddSolution("wrong_middle", R"(
    if (i == 0) { std::printf("kiln-test process %p\n", (void*)&marker); std::fflush(stdout); }
    c[i] = args[0].shape[0] == 2048 ? a[i] - b[i] : a[i] + b[i];)",
                                     "#include <cstdio>\nstatic int marker;\n");
  v1::Run run = Evaluated(node, ThreeWorkloads(s));
  const v1::Trace& wrong = run.traces(1);
  CHECK(wrong.evaluation().status() == v1::INCORRECT_NUMERICAL);
  CHECK_THAT(wrong.kiln().reason(), Catch::Contains("output 'c' trial 0"));
  CHECK(wrong.evaluation().correctness().max_absolute_error() > 0);
  CHECK_FALSE(wrong.evaluation().has_performance());
  CHECK(wrong.kiln().timing().sample_count() == 0);
  CHECK(run.traces(0).evaluation().status() == v1::PASSED);
  CHECK(run.traces(2).evaluation().status() == v1::PASSED);
  CHECK(run.traces(2).kiln().timing().sample_count() > 0);
  auto logs = testing::WorkerLogs(node.stub(), run.run_id());
  CHECK_THAT(logs["w1"], Catch::Contains("trial 0 judged: incorrect, stop"));
  CHECK_THAT(logs["w1"], !Catch::Contains("timing, trial"));
  CHECK_THAT(logs["w2"], Catch::Contains("timing, trial 0"));
  // Stopped at a gate is no failure of the process: one process for all three.
  auto markers = Processes(node, run);
  REQUIRE(markers["w0"].size() == 1);
  CHECK(markers["w0"] == markers["w1"]);
  CHECK(markers["w0"] == markers["w2"]);
}

// Prints its worker's folder (the process's working directory) on the first element of every call.
v1::Solution FolderReporter(const std::string& name) {
  return VectorAddSolution(name, R"(
    if (i == 0) {
      char cwd[4096];
      if (getcwd(cwd, sizeof cwd) != nullptr) std::printf("kiln-test folder %s\n", cwd);
      std::fflush(stdout);
    }
    c[i] = a[i] + b[i];)",
                           "#include <cstdio>\n#include <unistd.h>\n");
}

// The folders the candidate's worker logs of `run` name.
std::set<std::string> CandidateFolders(TestNode& node, const v1::Run& run) {
  std::set<std::string> out;
  const std::regex line("kiln-test folder (\\S+)");
  for (const auto& [name, text] : testing::WorkerLogs(node.stub(), run.run_id())) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
         it != std::sregex_iterator(); ++it) {
      out.insert((*it)[1].str());
    }
  }
  return out;
}

int Subfolders(const std::string& dir) {
  if (!std::filesystem::exists(dir)) return 0;
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) n += entry.is_directory();
  return n;
}

// A test's --scratch-dir: /dev/shm where the machine has it (the sandbox binds the workers'
// folders below its own /dev), else a temporary folder, removed with this object.
struct TestScratch {
  TestScratch()
      : shm(::access("/dev/shm", W_OK | X_OK) == 0),
        dir(shm ? "/dev/shm" : *MakeTempDir("", "kiln-scratch-test")) {}
  ~TestScratch() {
    if (!shm) (void)RemoveTree(dir);
  }
  TestScratch(const TestScratch&) = delete;
  TestScratch& operator=(const TestScratch&) = delete;
  const bool shm;
  const std::string dir;
};

// The job folder a node whose data dir is `data_dir` made under --scratch-dir `parent`.
std::string ScratchJobs(const std::string& parent, const std::string& data_dir) {
  return parent + "/kiln-jobs-" +
         Sha256Hex(std::filesystem::canonical(data_dir).string()).substr(0, 16) + "/jobs";
}

TEST_CASE("workers' folders are in the scratch folder; a run whose outputs do not fit uses "
          "the data dir's, with workers of its own") {
  TestScratch scratch_folder;
  const std::string& scratch = scratch_folder.dir;
  SECTION("the outputs fit") {
    HarnessOptions options;
    options.scratch_dir = scratch;
    std::string jobs;
    {
      TestNode node(options);
      jobs = ScratchJobs(scratch, node.dir() + "/data");
      REQUIRE(std::filesystem::is_directory(jobs));
      CHECK((std::filesystem::status(jobs).permissions() & std::filesystem::perms::others_all) ==
            std::filesystem::perms::none);
      v1::Run run = Passed(node, ThreeWorkloads(FolderReporter("folders")));
      std::set<std::string> folders = CandidateFolders(node, run);
      REQUIRE(folders.size() == 1);
      CHECK(folders.begin()->rfind(jobs + "/" + run.run_id() + "/", 0) == 0);
      // The reference's warm worker lives there too; the data dir's job folder stays empty.
      CHECK(Subfolders(jobs + "/warm") == 1);
      CHECK(WarmWorkersStarted(node) == 0);
      CHECK(Subfolders(node.dir() + "/data/jobs") == 0);
    }
    // A stopped node leaves nothing in memory.
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(jobs).parent_path()));
  }
  SECTION("they do not") {
    HarnessOptions options;
    options.scratch_dir = scratch;
    options.scratch_limit_bytes = 0;  // nothing fits
    TestNode node(options);
    const std::string jobs = ScratchJobs(scratch, node.dir() + "/data");
    REQUIRE(std::filesystem::is_directory(jobs));
    v1::Run run = Passed(node, ThreeWorkloads(FolderReporter("folders")));
    std::set<std::string> folders = CandidateFolders(node, run);
    REQUIRE(folders.size() == 1);
    CHECK(folders.begin()->rfind(node.dir() + "/data/jobs/" + run.run_id() + "/", 0) == 0);
    CHECK(Subfolders(jobs + "/warm") == 0);
    CHECK(WarmWorkersStarted(node) == 0);
  }
  SECTION("nor on the data dir's disk: the run says so before anything runs") {
    HarnessOptions options;
    options.scratch_dir = scratch;
    options.scratch_limit_bytes = 0;
    options.data_dir_limit_bytes = 1000;  // less than a trial's outputs
    TestNode node(options);
    v1::Run run = Evaluated(node, ThreeWorkloads(FolderReporter("folders")));
    CHECK(run.status() == v1::RUNTIME_ERROR);
    CHECK(run.reason().find("the node cannot hold this run's output files, not a fault of the "
                            "solution") != std::string::npos);
    CHECK(CandidateFolders(node, run).empty());  // the candidate never ran
  }
}

// On every call, prints how many files its worker's output folders (w*/out under its working
// directory) hold, and the inode of each.
v1::Solution OutputCounter(const std::string& name) {
  return VectorAddSolution(name, R"(
    if (i == 0) {
      int files = 0, dirs = 0;
      if (DIR* top = opendir(".")) {
        while (dirent* w = readdir(top)) {
          if (w->d_name[0] != 'w') continue;
          std::string out = std::string(w->d_name) + "/out";
          if (DIR* d = opendir(out.c_str())) {
            ++dirs;
            while (dirent* f = readdir(d)) {
              if (f->d_name[0] == '.') continue;
              ++files;
              std::printf("kiln-test inode %s %lu\n", w->d_name,
                          static_cast<unsigned long>(f->d_ino));
            }
            closedir(d);
          }
        }
        closedir(top);
      }
      std::printf("kiln-test outputs dirs=%d files=%d\n", dirs, files);
      std::fflush(stdout);
    }
    c[i] = a[i] + b[i];)",
                           "#include <cstdio>\n#include <dirent.h>\n#include <string>\n");
}

TEST_CASE("the candidate's files of a pass judged at its gate are written over by its next pass; "
          "the room a run reserves counts on it") {
  // Official mode: 3 trials, each a checked and a recheck pass. The reference keeps its 6 passes
  // until the workload is done, the candidate at most 2: per workload 8 passes of files instead
  // of 12 (Evaluation::OutputFileBytes). Each pass after the first is written over the file of
  // the pass before it, which the harness renamed to WorkerReuseFile once it was judged.
  TestScratch scratch_folder;
  const std::string& scratch = scratch_folder.dir;
  HarnessOptions options;
  options.scratch_dir = scratch;
  const int64_t pass_bytes = 4 * (1024 + 2048 + 4096);  // one float32 output per workload
  options.scratch_limit_bytes = 2 * 8 * pass_bytes;    // runs fit in half of it
  {
    TestNode node(options);
    const std::string jobs = ScratchJobs(scratch, node.dir() + "/data");
    v1::EvaluateRequest request = ThreeWorkloads(OutputCounter("counter"));
    request.set_mode("official");
    v1::Run run = Passed(node, request);
    // In the RAM-backed folder: with every pass of both kept (12 passes) it would not fit.
    std::set<std::string> folders;
    int listings = 0, most = 0, seen_dirs = 0;
    std::map<std::string, std::set<std::string>> inodes;  // per workload folder
    const std::regex line("kiln-test outputs dirs=([0-9]+) files=([0-9]+)");
    const std::regex inode("kiln-test inode (w[0-9]+) ([0-9]+)");
    for (const auto& [name, text] : testing::WorkerLogs(node.stub(), run.run_id())) {
      for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
           it != std::sregex_iterator(); ++it) {
        ++listings;
        seen_dirs = std::max(seen_dirs, std::stoi((*it)[1].str()));
        most = std::max(most, std::stoi((*it)[2].str()));
      }
      for (auto it = std::sregex_iterator(text.begin(), text.end(), inode);
           it != std::sregex_iterator(); ++it) {
        inodes[(*it)[1].str()].insert((*it)[2].str());
      }
    }
    CHECK(Subfolders(node.dir() + "/data/jobs") == 0);
    CHECK(Subfolders(jobs + "/warm") == 1);
    REQUIRE(listings > 0);
    CHECK(seen_dirs >= 1);
    // At a call: the pass being written (after the checked call, the second call of the trial)
    // and the pass before it, whose removal may not be done. Kept, trial 2's calls would see 4.
    CHECK(most <= 2);
    // Every pass of a workload in one file: its pages made once, by the first. Six passes
    // written anew would show six.
    CHECK(inodes.size() == 3);
    for (const auto& [folder, seen] : inodes) {
      INFO(folder);
      CHECK(seen.size() == 1);
    }
  }
}

// The folder of `node`'s warm workers, under its --scratch-dir `scratch`.
std::string WarmFolder(const std::string& scratch, const TestNode& node) {
  return ScratchJobs(scratch, node.dir() + "/data") + "/warm";
}

// The files a warm reference worker's folder keeps for its next run, by name (kept_w<i>/out/...),
// with their inodes.
std::map<std::string, uint64_t> KeptFiles(const std::string& warm) {
  namespace fs = std::filesystem;
  std::map<std::string, uint64_t> out;
  std::error_code ec;
  for (const auto& worker : fs::directory_iterator(warm, ec)) {
    for (const auto& kept : fs::directory_iterator(worker.path(), ec)) {
      if (kept.path().filename().string().rfind("kept_w", 0) != 0) continue;
      for (const auto& f : fs::directory_iterator(kept.path() / "out", ec)) {
        struct stat info;
        if (::lstat(f.path().c_str(), &info) == 0) {
          out[kept.path().filename().string() + "/" + f.path().filename().string()] =
              static_cast<uint64_t>(info.st_ino);
        }
      }
    }
  }
  return out;
}

TEST_CASE("a warm reference worker writes each pass of its next run over its file of that pass "
          "from the last run") {
  TestScratch scratch_folder;
  const std::string& scratch = scratch_folder.dir;
  HarnessOptions options;
  options.scratch_dir = scratch;
  {
    TestNode node(options);
    const std::string warm = WarmFolder(scratch, node);
    v1::EvaluateRequest request = ThreeWorkloads(VectorAddSolution("plain", "c[i] = a[i] + b[i];"));
    request.set_mode("official");
    Passed(node, request);
    // Official mode: 3 trials, each a checked and a recheck pass, for each of 3 workloads.
    const std::map<std::string, uint64_t> first = KeptFiles(warm);
    CHECK(first.size() == 18);
    CHECK(first.count("kept_w0/kept_t0_c.bin") == 1);
    CHECK(first.count("kept_w2/kept_r2_c.bin") == 1);
    // The next run's inputs are new (its own seeds): a correct candidate passes only if every
    // expected output is this run's, and an incorrect one is still found.
    Passed(node, request);
    const std::map<std::string, uint64_t> second = KeptFiles(warm);
    CHECK(second == first);  // the same files, the same inodes: written over, no new pages
    v1::EvaluateRequest wrong =
        ThreeWorkloads(VectorAddSolution("off by one", "c[i] = a[i] + b[i] + (i == 5 ? 1.0f : 0.0f);"));
    wrong.set_mode("official");
    v1::Run run = Evaluated(node, wrong);
    CHECK(run.status() == v1::INCORRECT_NUMERICAL);
    // A kernelbench-mode run (one trial) writes two passes of each workload over kept ones; the
    // rest stay kept.
    request.set_mode("kernelbench");
    Passed(node, request);
    const std::map<std::string, uint64_t> third = KeptFiles(warm);
    CHECK(third.size() == 18);
    CHECK(third.at("kept_w1/kept_t0_c.bin") == first.at("kept_w1/kept_t0_c.bin"));
    // Nothing under a pass's own name is left between runs.
    for (const auto& [name, inode] : third) CHECK(name.find("/kept_") != std::string::npos);
  }
  {
    options.keep_reference_files = false;
    TestNode node(options);
    v1::EvaluateRequest request = ThreeWorkloads(VectorAddSolution("plain", "c[i] = a[i] + b[i];"));
    Passed(node, request);
    Passed(node, request);
    CHECK(KeptFiles(WarmFolder(scratch, node)).empty());
  }
}

TEST_CASE("a warm reference worker evicted from its slot takes its folder, and the files it kept, "
          "with it") {
  TestScratch scratch_folder;
  const std::string& scratch = scratch_folder.dir;
  HarnessOptions options;
  options.scratch_dir = scratch;
  {
    TestNode node(options);
    const std::string warm = WarmFolder(scratch, node);
    // Three definitions, so three warm reference workers on the one slot, which keeps two.
    std::vector<std::string> names = {"vector_add_f32", "vector_add_copy_b", "vector_add_copy_c"};
    for (size_t i = 1; i < names.size(); ++i) {
      v1::Definition def = testing::BuiltinCopy("vector_add_f32");
      def.set_name(names[i]);
      grpc::Status status = testing::PutDefinition(node.stub(), def);
      INFO(status.error_message());
      REQUIRE(status.ok());
    }
    std::vector<std::string> folders;  // each new warm worker's folder, in order
    for (const std::string& name : names) {
      v1::EvaluateRequest request = ThreeWorkloads(VectorAddSolution("plain", "c[i] = a[i] + b[i];"));
      request.set_definition(name);
      request.mutable_solution()->set_definition(name);
      Passed(node, request);
      for (const auto& entry : std::filesystem::directory_iterator(warm)) {
        const std::string f = entry.path().filename().string();
        if (f[0] != '.' && entry.is_directory() &&
            std::find(folders.begin(), folders.end(), f) == folders.end()) {
          folders.push_back(f);
        }
      }
    }
    REQUIRE(folders.size() == 3);
    for (int k : {1, 2}) CHECK(std::filesystem::exists(warm + "/" + folders[k] + ".log"));
    // The first worker was evicted by the third; its folder and its log beside it are removed
    // off the slot, by the reaper's thread.
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = !std::filesystem::exists(warm + "/" + folders[0]) &&
             !std::filesystem::exists(warm + "/" + folders[0] + ".log");
      if (!gone) ::usleep(50 * 1000);
    }
    CHECK(gone);
    CHECK(std::filesystem::exists(warm + "/" + folders[1] + "/kept_w0"));
    CHECK(std::filesystem::exists(warm + "/" + folders[2] + "/kept_w0"));
  }
}

TEST_CASE("--warm-references=false gives every workload's reference a worker of its own") {
  HarnessOptions options;
  options.warm_references = false;
  TestNode node(options);
  Passed(node, ThreeWorkloads(ProcessReporter("reporter")));
  CHECK(WarmWorkersStarted(node) == 0);
}

}  // namespace
}  // namespace kiln
