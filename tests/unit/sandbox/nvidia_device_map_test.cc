// Pinning a worker to one GPU: the /dev/nvidiaN minor of a GPU found from its PCI bus id in a
// (fake) /proc/driver/nvidia tree, and the device nodes a worker of minor N is given.
#include "harness/sandbox/nvidia_device_map.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/sandbox/sandbox_policy.h"

namespace kiln {
namespace {

// A /proc root whose driver/nvidia/gpus lists GPUs as the NVIDIA driver writes them.
class FakeProc {
 public:
  FakeProc() { root_ = *MakeTempDir("", "kiln-fake-proc"); }
  ~FakeProc() { (void)RemoveTree(root_); }
  void AddGpu(const std::string& folder, const std::string& information) {
    const std::string dir = root_ + "/driver/nvidia/gpus/" + folder;
    REQUIRE(MakeDirs(dir).ok());
    REQUIRE(WriteFile(dir + "/information", information).ok());
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

std::string Information(const std::string& bus, int minor, const std::string& uuid) {
  return "Model: \t\t NVIDIA H200\nIRQ:   \t\t 123\nGPU UUID: \t " + uuid +
         "\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
         "Bus Location: \t " + bus + "\nDevice Minor: \t " + std::to_string(minor) +
         "\nGPU Excluded:\t No\n";
}

TEST_CASE("PCI bus ids are normalised whatever the spelling") {
  CHECK(NormalizePciBusId("0000:19:00.0") == "0000:19:00.0");
  CHECK(NormalizePciBusId("00000000:3B:00.0") == "0000:3b:00.0");  // nvidia-smi's spelling
  CHECK(NormalizePciBusId("0000:3B:00") == "0000:3b:00.0");
  CHECK(NormalizePciBusId(" 0001:c1:1f.3\n") == "0001:c1:1f.3");
  CHECK(NormalizePciBusId("").empty());
  CHECK(NormalizePciBusId("19:00.0").empty());
  CHECK(NormalizePciBusId("0000:zz:00.0").empty());
  CHECK(NormalizePciBusId("0000:19:20.0").empty());  // device numbers stop at 0x1f
}

TEST_CASE("a GPU's device minor comes from the driver's listing, not its CUDA ordinal") {
  FakeProc proc;
  // The driver probed the GPUs in another order than CUDA numbers them.
  proc.AddGpu("0000:19:00.0", Information("0000:19:00.0", 2, "GPU-aaaa"));
  proc.AddGpu("0000:3b:00.0", Information("0000:3b:00.0", 0, "GPU-bbbb"));
  proc.AddGpu("0000:4c:00.0", Information("0000:4c:00.0", 1, "GPU-cccc"));

  absl::StatusOr<int> minor = NvidiaDeviceMinor(proc.root(), "0000:19:00.0");
  REQUIRE(minor.ok());
  CHECK(*minor == 2);
  // cudaDeviceGetPCIBusId may answer in upper case; nvidia-smi with an 8-digit domain.
  minor = NvidiaDeviceMinor(proc.root(), "0000:3B:00.0");
  REQUIRE(minor.ok());
  CHECK(*minor == 0);
  minor = NvidiaDeviceMinor(proc.root(), "00000000:4C:00.0");
  REQUIRE(minor.ok());
  CHECK(*minor == 1);

  absl::StatusOr<std::vector<NvidiaProcGpu>> gpus = ReadNvidiaProcGpus(proc.root());
  REQUIRE(gpus.ok());
  REQUIRE(gpus->size() == 3);
  CHECK((*gpus)[0].uuid == "GPU-aaaa");
  CHECK((*gpus)[0].model == "NVIDIA H200");
}

TEST_CASE("an unknown bus id or a missing driver is an error that says what exists") {
  FakeProc proc;
  proc.AddGpu("0000:19:00.0", Information("0000:19:00.0", 0, "GPU-aaaa"));
  absl::StatusOr<int> minor = NvidiaDeviceMinor(proc.root(), "0000:9a:00.0");
  REQUIRE_FALSE(minor.ok());
  CHECK(minor.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(minor.status().message()), Catch::Contains("0000:9a:00.0") &&
                                                        Catch::Contains("lists: 0000:19:00.0"));

  minor = NvidiaDeviceMinor(proc.root(), "not-a-bus-id");
  REQUIRE_FALSE(minor.ok());
  CHECK(minor.status().code() == absl::StatusCode::kInvalidArgument);

  FakeProc empty;
  minor = NvidiaDeviceMinor(empty.root(), "0000:19:00.0");
  REQUIRE_FALSE(minor.ok());
  CHECK(minor.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(minor.status().message()), Catch::Contains("driver/nvidia/gpus"));
}

TEST_CASE("an information file without a Device Minor line is named") {
  FakeProc proc;
  proc.AddGpu("0000:19:00.0", "Model: \t\t NVIDIA H200\nBus Location: \t 0000:19:00.0\n");
  absl::StatusOr<int> minor = NvidiaDeviceMinor(proc.root(), "0000:19:00.0");
  REQUIRE_FALSE(minor.ok());
  CHECK_THAT(std::string(minor.status().message()),
             Catch::Contains("0000:19:00.0/information") && Catch::Contains("Device Minor"));
}

TEST_CASE("a worker of GPU minor N is given /dev/nvidiaN and the shared nodes, no other GPU") {
  const std::vector<std::string> nodes = GpuDeviceNodePaths("cuda", 3);
  CHECK(nodes == std::vector<std::string>{"/dev/nvidia3", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                          "/dev/nvidia-uvm-tools"});
  for (int other : {0, 1, 2, 4, 7}) {
    CHECK(std::find(nodes.begin(), nodes.end(), "/dev/nvidia" + std::to_string(other)) ==
          nodes.end());
  }
  CHECK(GpuDeviceNodePaths("cuda", 0).front() == "/dev/nvidia0");
  CHECK(GpuDeviceNodePaths("level_zero", 1) == std::vector<std::string>{"/dev/dri/renderD129"});
  CHECK(GpuDeviceNodePaths("host", 0).empty());
  CHECK(GpuDeviceNodePaths("cuda", -1).empty());
  // The policy's device list is what bwrap binds with --dev-bind (those present on the host).
  SandboxPolicy policy;
  policy.bwrap = "/usr/bin/bwrap";
  policy.devices = {"/dev/null"};  // a node present everywhere stands in for /dev/nvidia3
  std::vector<std::string> argv = BwrapArgv(policy, {"/bin/true"}, "", 3);
  auto at = std::find(argv.begin(), argv.end(), "--dev-bind");
  REQUIRE(at != argv.end());
  CHECK(*(at + 1) == "/dev/null");
}

}  // namespace
}  // namespace kiln
