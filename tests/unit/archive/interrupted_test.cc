#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::MakeTrace;
using archive_test::OpenArchive;
using archive_test::TempDir;

TEST_CASE("runs left mid-evaluation by a crash become INTERRUPTED at the next start") {
  TempDir tmp;
  {
    // The process that "crashes": everything it was told succeeded is committed.
    auto archive = OpenArchive(tmp.path());
    REQUIRE(archive->CreateRun(MakeRun("timing", "gemm", 1)).ok());
    REQUIRE(archive->UpdateRunState("timing", v1::RUN_COMPILING).ok());
    REQUIRE(archive->UpdateRunState("timing", v1::RUN_VERIFYING).ok());
    REQUIRE(archive->PutTrace("timing", 0, MakeTrace("w0", v1::PASSED, 1.0, 1.0)).ok());
    REQUIRE(archive->PutTrace("timing", 1, MakeTrace("w1", v1::STATUS_UNSPECIFIED, 0, 0)).ok());
    REQUIRE(archive->UpdateRunState("timing", v1::RUN_TIMING).ok());

    REQUIRE(archive->CreateRun(MakeRun("queued", "gemm", 2)).ok());

    REQUIRE(archive->CreateRun(MakeRun("done", "gemm", 3)).ok());
    v1::Run finished;
    finished.set_run_id("done");
    finished.set_status(v1::PASSED);
    REQUIRE(archive->FinishRun(finished).ok());
  }

  auto archive = OpenArchive(tmp.path());
  auto marked = archive->MarkInterrupted();
  REQUIRE(marked.ok());
  CHECK(*marked == 2);

  auto timing = archive->GetRun("timing", false);
  REQUIRE(timing.ok());
  CHECK(timing->state() == v1::RUN_DONE);
  CHECK(timing->status() == v1::INTERRUPTED);
  CHECK(timing->reason() == "the harness stopped while this run was timing");
  REQUIRE(timing->traces_size() == 2);
  CHECK(timing->traces(0).evaluation().status() == v1::PASSED);  // had a verdict: kept
  CHECK(timing->traces(1).evaluation().status() == v1::INTERRUPTED);

  auto queued = archive->GetRun("queued", false);
  REQUIRE(queued.ok());
  CHECK(queued->status() == v1::INTERRUPTED);
  CHECK(queued->reason() == "the harness stopped while this run was queued");

  auto done = archive->GetRun("done", false);
  REQUIRE(done.ok());
  CHECK(done->status() == v1::PASSED);
  CHECK(done->reason().empty());

  // A second start finds nothing left to mark.
  auto again = archive->MarkInterrupted();
  REQUIRE(again.ok());
  CHECK(*again == 0);
}

}  // namespace
}  // namespace kiln
