#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::MakeTrace;
using archive_test::OpenArchive;
using archive_test::TempDir;

// A second process's view of the database: holds the write lock until destroyed.
class ExternalWriter {
 public:
  explicit ExternalWriter(const std::string& db_path) {
    REQUIRE(sqlite3_open(db_path.c_str(), &db_) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db_,
                         "BEGIN IMMEDIATE; INSERT INTO settings (key, value) VALUES "
                         "('uncommitted', x'00');",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  ~ExternalWriter() {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST_CASE("readers on several threads see committed runs while a writer writes") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  constexpr int kRuns = 120;
  std::atomic<bool> writing{true};
  std::atomic<int> read_errors{0};
  std::atomic<int> went_backwards{0};

  std::thread writer([&] {
    for (int i = 0; i < kRuns; ++i) {
      const std::string id = "run-" + std::to_string(i);
      bool ok = archive->CreateRun(MakeRun(id, "gemm", i + 1)).ok() &&
                archive->PutTrace(id, 0, MakeTrace("w0", v1::PASSED, 1.0, 2.0)).ok();
      v1::Run finished;
      finished.set_run_id(id);
      finished.set_status(v1::PASSED);
      ok = ok && archive->FinishRun(finished).ok();
      if (!ok) read_errors += 1000;  // a failed write fails the test below too
    }
    writing = false;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; ++r) {  // more readers than the pool holds connections
    readers.emplace_back([&] {
      int64_t last_count = 0;
      while (writing) {
        auto count = archive->CountRuns();
        auto page = archive->ListRuns({});
        if (!count.ok() || !page.ok()) {
          ++read_errors;
          continue;
        }
        if (*count < last_count) ++went_backwards;
        last_count = *count;
        if (page->runs_size() > 0 && !archive->GetRun(page->runs(0).run_id(), true).ok()) {
          ++read_errors;
        }
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  CHECK(read_errors == 0);
  CHECK(went_backwards == 0);
  auto count = archive->CountRuns();
  REQUIRE(count.ok());
  CHECK(*count == kRuns);
}

TEST_CASE("reads are not blocked by a write transaction in progress") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  REQUIRE(archive->CreateRun(MakeRun("run-1", "gemm", 1)).ok());
  ExternalWriter external(tmp.db());
  auto page = archive->ListRuns({});
  REQUIRE(page.ok());
  CHECK(page->runs_size() == 1);
  auto run = archive->GetRun("run-1", true);
  CHECK(run.ok());
  auto setting = archive->GetSetting("uncommitted");
  REQUIRE(setting.ok());
  CHECK_FALSE(setting->has_value());  // not committed, so not visible
}

TEST_CASE("a write still locked out after the busy timeout is UNAVAILABLE") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  ExternalWriter external(tmp.db());  // held for longer than the 5 s busy timeout
  absl::Status status = archive->PutSetting("key", "value");
  CHECK(status.code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(status.message()), Catch::Contains("storing setting 'key'"));
}

}  // namespace
}  // namespace kiln
