// One harness, every GPU of its node: which GPUs --gpus serves, the device node each slot's
// workers get, the scheduler running runs on different slots at once, and the run record naming
// its device. No GPU needed: the GPUs are described, the /proc tree is fake, the scheduler's runs
// are stand-ins.
#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/common/files.h"
#include "server/backend.h"
#include "server/evaluation/scheduler.h"
#include "server/node_info.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("--gpus selects CUDA devices by index, or all of them") {
  auto all = ParseGpuList("all", 3);
  REQUIRE(all.ok());
  CHECK(*all == std::vector<int>{0, 1, 2});
  auto empty = ParseGpuList("", 2);
  REQUIRE(empty.ok());
  CHECK(*empty == std::vector<int>{0, 1});
  auto some = ParseGpuList("5, 0,2", 8);
  REQUIRE(some.ok());
  CHECK(*some == std::vector<int>{0, 2, 5});  // ascending: slot 0 is the lowest GPU
}

TEST_CASE("--gpus with an unknown, repeated or malformed index is refused, naming what exists") {
  auto unknown = ParseGpuList("0,2", 2);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(Message(unknown.status()), Catch::Contains("--gpus") &&
                                            Catch::Contains("GPU 2 does not exist") &&
                                            Catch::Contains("2 CUDA device(s): 0, 1"));
  auto twice = ParseGpuList("1,1", 2);
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(Message(twice.status()), Catch::Contains("--gpus") && Catch::Contains("twice"));
  for (const char* bad : {"one", "0,,1", "-1", "1.5", "0;1"}) {
    INFO(bad);
    auto parsed = ParseGpuList(bad, 4);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(Message(parsed.status()),
               Catch::Contains("--gpus") && Catch::Contains("0, 1, 2, 3"));
  }
  auto none = ParseGpuList("0", 0);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(Message(none.status()), Catch::Contains("no CUDA device"));
}

TEST_CASE("--gpus other than all without the cuda backend is a startup error") {
  auto host = ResolveNodeBackends("host", "0,1");
  REQUIRE_FALSE(host.ok());
  CHECK_THAT(Message(host.status()), Catch::Contains("--gpus") && Catch::Contains("host"));
  auto plain = ResolveNodeBackends("host", "all");
  REQUIRE(plain.ok());
  REQUIRE(plain->size() == 1);
  REQUIRE(plain->front().placements.size() == 1);
  CHECK(plain->front().placements.front().device_minor == -1);  // no device node for the host
}

// A fake /proc whose driver numbered the GPUs in another order than CUDA does.
class FakeProc {
 public:
  FakeProc() { root_ = *MakeTempDir("", "kiln-fake-proc"); }
  ~FakeProc() { (void)RemoveTree(root_); }
  void AddGpu(const std::string& bus, int minor) {
    const std::string dir = root_ + "/driver/nvidia/gpus/" + bus;
    REQUIRE(MakeDirs(dir).ok());
    REQUIRE(WriteFile(dir + "/information", "Model: \t\t NVIDIA H200\nBus Location: \t " + bus +
                                                "\nDevice Minor: \t " + std::to_string(minor) +
                                                "\n")
                .ok());
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

std::vector<GpuFacts> ThreeGpus() {
  return {GpuFacts{0, "NVIDIA H200", 90, "0000:19:00.0", "GPU-aaaa"},
          GpuFacts{1, "NVIDIA H200", 90, "0000:3B:00.0", "GPU-bbbb"},
          GpuFacts{2, "NVIDIA H200", 90, "0000:4c:00.0", "GPU-cccc"}};
}

TEST_CASE("each served GPU gets a slot whose device node is found from its PCI bus id") {
  FakeProc proc;
  proc.AddGpu("0000:19:00.0", 2);
  proc.AddGpu("0000:3b:00.0", 0);
  proc.AddGpu("0000:4c:00.0", 1);
  auto cuda = CudaBackendFor(ThreeGpus(), "1,2", proc.root());
  REQUIRE(cuda.ok());
  CHECK(cuda->name == "cuda");
  REQUIRE(cuda->devices.size() == 2);
  REQUIRE(cuda->placements.size() == 2);
  CHECK(cuda->compute_capabilities == std::vector<int>{90, 90});
  CHECK(cuda->placements[0].index == 1);
  CHECK(cuda->placements[0].pci_bus_id == "0000:3b:00.0");
  CHECK(cuda->placements[0].device_minor == 0);  // not 1: the driver's order differs
  CHECK(cuda->placements[0].uuid == "GPU-bbbb");
  CHECK_FALSE(cuda->placements[0].minor_guessed);
  CHECK(cuda->placements[1].index == 2);
  CHECK(cuda->placements[1].device_minor == 1);
  CHECK(cuda->warnings.empty());
  CHECK(DeviceHardwareLabel(*cuda, 0) == "NVIDIA H200 (GPU 1, 0000:3b:00.0)");
  CHECK(DeviceHardwareLabel(*cuda, 1) == "NVIDIA H200 (GPU 2, 0000:4c:00.0)");

  // GetNodeInfo lists the served GPUs with their index, name and bus id.
  NodeFacts facts;
  facts.backends = {*cuda};
  NodeLoad load;
  load.busy = {{false, true}};
  v1::NodeInfo info = DescribeNode(facts, load);
  REQUIRE(info.devices_size() == 2);
  CHECK(info.devices(0).index() == 1);
  CHECK(info.devices(0).name() == "NVIDIA H200");
  CHECK(info.devices(0).pci_bus_id() == "0000:3b:00.0");
  CHECK(info.devices(0).device_minor() == 0);
  CHECK_FALSE(info.devices(0).busy());
  CHECK(info.devices(1).index() == 2);
  CHECK(info.devices(1).busy());
}

TEST_CASE("without the driver's listing the minor is the CUDA ordinal, with a warning") {
  FakeProc proc;  // no driver/nvidia/gpus
  auto cuda = CudaBackendFor(ThreeGpus(), "all", proc.root());
  REQUIRE(cuda.ok());
  REQUIRE(cuda->placements.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(cuda->placements[i].device_minor == i);
    CHECK(cuda->placements[i].minor_guessed);
  }
  REQUIRE(cuda->warnings.size() == 3);
  CHECK_THAT(cuda->warnings[1], Catch::Contains("GPU 1") && Catch::Contains("/dev/nvidia1"));

  // A bus id the driver does not list falls back the same way, for that GPU only.
  proc.AddGpu("0000:19:00.0", 4);
  auto partly = CudaBackendFor(ThreeGpus(), "0,1", proc.root());
  REQUIRE(partly.ok());
  CHECK(partly->placements[0].device_minor == 4);
  CHECK_FALSE(partly->placements[0].minor_guessed);
  CHECK(partly->placements[1].device_minor == 1);
  CHECK(partly->placements[1].minor_guessed);
  CHECK(partly->warnings.size() == 1);

  auto bad = CudaBackendFor(ThreeGpus(), "3", proc.root());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(Message(bad.status()), Catch::Contains("--gpus") && Catch::Contains("0, 1, 2"));
}

// A run that holds its device slot until released, recording where and when it ran.
class FakeRun : public ScheduledRun {
 public:
  FakeRun(std::string backend, std::atomic<int>* compiles) : backend_(std::move(backend)),
                                                              compiles_(compiles) {}
  void Compile() override {
    compile_nice_ = ThreadNice();
    ++*compiles_;
  }
  bool NeedsDevice() const override { return true; }
  const std::string& backend() const override { return backend_; }
  void RunOnDevice(int slot) override {
    const int nice = ThreadNice();
    std::unique_lock<std::mutex> lock(mu_);
    device_nice_ = nice;
    slot_ = slot;
    started_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return released_; });
  }
  void Finish() override {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Waits up to 10 s for the run to reach its device; false if it did not.
  bool WaitStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [this] { return started_; });
  }
  bool WaitFinished() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [this] { return finished_; });
  }
  bool started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int slot() {
    std::lock_guard<std::mutex> lock(mu_);
    return slot_;
  }
  // The nice values of the threads that compiled it and ran it on its slot.
  int compile_nice() const { return compile_nice_.load(); }
  int device_nice() {
    std::lock_guard<std::mutex> lock(mu_);
    return device_nice_;
  }
  static int ThreadNice() {
    return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  }

 private:
  const std::string backend_;
  std::atomic<int>* compiles_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, released_ = false, finished_ = false;
  int slot_ = -1;
  std::atomic<int> compile_nice_{-100};
  int device_nice_ = -100;
};

NodeBackend FakeGpus(int count) {
  NodeBackend b;
  b.name = "cuda";
  b.languages = {"cuda"};
  for (int i = 0; i < count; ++i) {
    b.devices.push_back("GPU " + std::to_string(i));
    DevicePlacement p;
    p.index = i;
    p.device_minor = i;
    b.placements.push_back(p);
  }
  return b;
}

// Releases every run it saw when the test ends, however it ends (the scheduler's destructor
// waits for them).
struct Runs {
  std::atomic<int> compiles{0};
  std::vector<std::shared_ptr<FakeRun>> all;
  ~Runs() {
    for (auto& run : all) run->Release();
  }
};

std::shared_ptr<FakeRun> Submit(Scheduler& scheduler, Runs& runs) {
  REQUIRE(scheduler.Reserve().ok());
  auto run = std::make_shared<FakeRun>("cuda", &runs.compiles);
  runs.all.push_back(run);
  scheduler.Submit(run);
  return run;
}

// Waits up to 10 s until the slots' busy flags are `busy`.
bool WaitBusy(Scheduler& scheduler, const std::vector<bool>& busy) {
  for (int i = 0; i < 2000; ++i) {
    if (scheduler.Load().busy.front() == busy) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST_CASE("runs on different GPU slots proceed in parallel and a third waits for a free slot") {
  Scheduler scheduler(/*compile_threads=*/1, /*max_queue=*/16, {FakeGpus(2)});
  Runs runs;  // released before the scheduler stops
  auto first = Submit(scheduler, runs);
  REQUIRE(first->WaitStarted());
  CHECK(first->slot() == 0);  // an idle node: the first slot
  auto second = Submit(scheduler, runs);
  REQUIRE(second->WaitStarted());
  CHECK(second->slot() == 1);  // both slots hold a run at once
  auto third = Submit(scheduler, runs);
  // Compiling overlaps device work: the third compiles while both slots are busy.
  for (int i = 0; i < 1000 && runs.compiles.load() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(runs.compiles.load() == 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(third->started());
  NodeLoad load = scheduler.Load();
  CHECK(load.running == 2);
  CHECK(load.queue_depth == 1);
  CHECK(load.busy == std::vector<std::vector<bool>>{{true, true}});

  // Slot 1 frees first: the waiting run takes it.
  second->Release();
  REQUIRE(second->WaitFinished());
  REQUIRE(third->WaitStarted());
  CHECK(third->slot() == 1);
  CHECK(first->started());
  first->Release();
  third->Release();
  REQUIRE(first->WaitFinished());
  REQUIRE(third->WaitFinished());
}

TEST_CASE("compile threads run at the harness's nice value plus --compile-nice, slots at its own") {
  const int base = FakeRun::ThreadNice();
  Scheduler scheduler(/*compile_threads=*/2, /*max_queue=*/16, {FakeGpus(1)}, NullMetrics(),
                      /*compile_nice=*/7);
  Runs runs;
  auto run = Submit(scheduler, runs);
  REQUIRE(run->WaitStarted());
  CHECK(run->compile_nice() == std::min(19, base + 7));
  CHECK(run->device_nice() == base);
  CHECK(FakeRun::ThreadNice() == base);  // the harness's own threads are untouched
  run->Release();
  REQUIRE(run->WaitFinished());
}

TEST_CASE("a run waiting for cuda takes the lowest free cuda slot") {
  Scheduler scheduler(1, 16, {FakeGpus(3)});
  Runs runs;
  auto a = Submit(scheduler, runs);
  REQUIRE(a->WaitStarted());
  auto b = Submit(scheduler, runs);
  REQUIRE(b->WaitStarted());
  auto c = Submit(scheduler, runs);
  REQUIRE(c->WaitStarted());
  CHECK(std::vector<int>{a->slot(), b->slot(), c->slot()} == std::vector<int>{0, 1, 2});
  // Slots 0 and 2 free; the next run takes 0, the one after it 2.
  a->Release();
  c->Release();
  REQUIRE(a->WaitFinished());
  REQUIRE(c->WaitFinished());
  REQUIRE(WaitBusy(scheduler, {false, true, false}));
  auto d = Submit(scheduler, runs);
  REQUIRE(d->WaitStarted());
  CHECK(d->slot() == 0);
  auto e = Submit(scheduler, runs);
  REQUIRE(e->WaitStarted());
  CHECK(e->slot() == 2);
  CHECK(WaitBusy(scheduler, {true, true, true}));
}

TEST_CASE("a run's record names the device it was evaluated on") {
  testing::TestNode node;
  v1::EvaluateRequest request = testing::VectorAddRequest(
      testing::VectorAddSolution("device_named", "c[i] = a[i] + b[i];"));
  testing::EvaluateOutcome out = testing::Evaluate(node.stub(), request);
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  CHECK(run.backend() == "host");
  CHECK(run.device_name() == CpuModelName());
  CHECK(run.device_index() == 0);
  CHECK(run.device_pci_bus_id().empty());
  REQUIRE(run.traces_size() == 1);
  CHECK(run.traces(0).evaluation().environment().hardware() == CpuModelName());

  grpc::ClientContext ctx;
  v1::GetRunRequest get;
  get.set_run_id(run.run_id());
  v1::Run archived;
  REQUIRE(node.stub().GetRun(&ctx, get, &archived).ok());
  CHECK(archived.device_name() == CpuModelName());
  CHECK(archived.device_index() == 0);

  // A run that never reached a device names none.
  testing::EvaluateOutcome broken = testing::Evaluate(
      node.stub(), testing::VectorAddRequest(
                       testing::VectorAddSolution("does_not_compile", "c[i] = a[i] + ;")));
  REQUIRE(broken.status.ok());
  CHECK(broken.run().status() == v1::COMPILE_ERROR);
  CHECK(broken.run().device_name().empty());
}

}  // namespace
}  // namespace kiln
