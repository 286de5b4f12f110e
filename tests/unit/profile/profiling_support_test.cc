// Whether a node can profile, and the reason it cannot: no GPU, no ncu, counters restricted to
// administrators, the driver's parameters unreadable.
#include "harness/profile/profiling_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kiln {
namespace {

// A private folder with an executable "ncu" in bin/ and a driver parameters file.
class FakeNode {
 public:
  FakeNode() {
    char tmpl[] = "/tmp/kiln-profiling-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    REQUIRE(::mkdir((dir_ + "/bin").c_str(), 0755) == 0);
    std::ofstream(dir_ + "/bin/ncu") << "#!/bin/sh\n";
    REQUIRE(::chmod((dir_ + "/bin/ncu").c_str(), 0755) == 0);
    REQUIRE(::mkdir((dir_ + "/empty").c_str(), 0755) == 0);
  }
  ~FakeNode() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Params(const std::string& admin_only) {
    const std::string path = dir_ + "/params";
    std::ofstream(path) << "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: " << admin_only
                        << "\nEnableMSI: 1\n";
    return path;
  }
  std::string dir() const { return dir_; }

 private:
  std::string dir_;
};

TEST_CASE("profiling is available with a GPU, ncu and open counters") {
  FakeNode node;
  ProfilingSupport s = CheckProfiling(1, {node.dir() + "/empty", node.dir() + "/bin"},
                                      node.Params("0"));
  CHECK(s.available);
  CHECK(s.ncu == node.dir() + "/bin/ncu");
  CHECK(DescribeProfiling(s) == "available: ncu at " + node.dir() + "/bin/ncu");
}

TEST_CASE("profiling is unavailable, and says why") {
  FakeNode node;
  ProfilingSupport no_gpu = CheckProfiling(0, {node.dir() + "/bin"}, node.Params("0"));
  CHECK_FALSE(no_gpu.available);
  CHECK(no_gpu.reason == "no CUDA GPU on this node");
  ProfilingSupport no_ncu = CheckProfiling(2, {node.dir() + "/empty"}, node.Params("0"));
  CHECK_FALSE(no_ncu.available);
  CHECK_THAT(no_ncu.reason, Catch::StartsWith("ncu (Nsight Compute) not found in "));
  CHECK_THAT(no_ncu.reason, Catch::Contains(node.dir() + "/empty"));
  ProfilingSupport admin = CheckProfiling(1, {node.dir() + "/bin"}, node.Params("1"));
  CHECK_FALSE(admin.available);
  CHECK_THAT(DescribeProfiling(admin),
             Catch::StartsWith("unavailable: the driver restricts GPU performance counters to "
                               "administrators (RmProfilingAdminOnly: 1"));
  ProfilingSupport unreadable =
      CheckProfiling(1, {node.dir() + "/bin"}, node.dir() + "/no-such-params");
  CHECK_FALSE(unreadable.available);
  CHECK_THAT(unreadable.reason, Catch::Contains("cannot read the NVIDIA driver's parameters"));
}

}  // namespace
}  // namespace kiln
