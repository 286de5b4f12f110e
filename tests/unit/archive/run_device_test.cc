// A run's record names the device it was evaluated on (which GPU of a multi-GPU node).
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::OpenArchive;
using archive_test::TempDir;

TEST_CASE("the device a run got its slot on is archived and read back") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run run = MakeRun("run-gpu", "gemm", 1000);
  run.set_backend("cuda");
  REQUIRE(archive->CreateRun(run).ok());
  auto fresh = archive->GetRun("run-gpu", false);
  REQUIRE(fresh.ok());
  CHECK(fresh->device_name().empty());  // not on a device yet

  REQUIRE(archive->UpdateRunState("run-gpu", v1::RUN_VERIFYING).ok());
  REQUIRE(archive->RecordDevice("run-gpu", 5, "NVIDIA H200", "0000:9a:00.0").ok());
  auto running = archive->GetRun("run-gpu", false);
  REQUIRE(running.ok());
  CHECK(running->device_index() == 5);
  CHECK(running->device_name() == "NVIDIA H200");
  CHECK(running->device_pci_bus_id() == "0000:9a:00.0");

  v1::Run done;
  done.set_run_id("run-gpu");
  done.set_status(v1::PASSED);
  REQUIRE(archive->FinishRun(done).ok());
  auto finished = archive->GetRun("run-gpu", false);
  REQUIRE(finished.ok());
  CHECK(finished->device_index() == 5);  // FinishRun keeps it
  CHECK(finished->device_name() == "NVIDIA H200");
  // A finished run's device is history.
  absl::Status late = archive->RecordDevice("run-gpu", 1, "NVIDIA H200", "0000:19:00.0");
  CHECK(late.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(archive->RecordDevice("no-such-run", 0, "x", "").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("imported runs keep their device") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run run = MakeRun("run-imported", "gemm", 1000);
  run.set_state(v1::RUN_DONE);
  run.set_device_index(1);
  run.set_device_name("NVIDIA H200");
  run.set_device_pci_bus_id("0000:19:00.0");
  REQUIRE(archive->ImportRuns({run}).ok());
  auto read = archive->GetRun("run-imported", false);
  REQUIRE(read.ok());
  CHECK(read->device_index() == 1);
  CHECK(read->device_pci_bus_id() == "0000:19:00.0");
}

}  // namespace
}  // namespace kiln
