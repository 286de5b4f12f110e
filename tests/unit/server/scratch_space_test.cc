// The RAM-backed job folder: which runs it takes, and how --scratch-dir is prepared.
#include "server/evaluation/scratch_space.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "harness/common/files.h"

namespace kiln {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST_CASE("a run goes to the RAM-backed folder only while its outputs fit in half the free "
          "memory, runs in flight counted") {
  int64_t free_bytes = 10 * kGiB;
  ScratchSpace scratch("/fast/jobs", "/data/jobs", 0, [&] { return free_bytes; });
  CHECK(scratch.jobs_dir() == "/fast/jobs");
  std::string why;
  CHECK(scratch.Reserve(3 * kGiB, 1 * kGiB, &why));
  CHECK(scratch.Reserve(2 * kGiB, 1 * kGiB, &why));
  // 3 + 2 + 1 GiB reserved would pass half of 10 GiB.
  CHECK_FALSE(scratch.Reserve(1 * kGiB, 1 * kGiB, &why));
  CHECK(why.find("5.0 GiB") != std::string::npos);
  CHECK(why.find("10.0 GiB") != std::string::npos);
  scratch.Release(3 * kGiB);
  CHECK(scratch.Reserve(1 * kGiB, 1 * kGiB, &why));
  // Less free than the machine had: counted when asked.
  free_bytes = 4 * kGiB;
  scratch.Release(2 * kGiB);
  scratch.Release(1 * kGiB);
  CHECK_FALSE(scratch.Reserve(3 * kGiB, 1 * kGiB, &why));
  CHECK(scratch.Reserve(2 * kGiB, 1 * kGiB, &why));
  // Unreadable free space: nothing goes there.
  free_bytes = -1;
  CHECK_FALSE(scratch.Reserve(1, 1, &why));
  CHECK(why.find("cannot be read") != std::string::npos);
}

TEST_CASE("where the sandbox caps a worker's memory, one worker's outputs must fit in half of "
          "the cap") {
  ScratchSpace scratch("/fast/jobs", "/data/jobs", 16 * kGiB, [] { return 100 * kGiB; });
  std::string why;
  CHECK(scratch.Reserve(30 * kGiB, 8 * kGiB, &why));
  CHECK_FALSE(scratch.Reserve(30 * kGiB, 9 * kGiB, &why));
  CHECK(why.find("memory limit of 16.0 GiB") != std::string::npos);
}

TEST_CASE("without a RAM-backed folder every run uses the data dir") {
  ScratchSpace scratch("", "/data/jobs", 0, [] { return 100 * kGiB; });
  CHECK(scratch.jobs_dir() == "/data/jobs");
  CHECK_FALSE(scratch.has_fast_dir());
  std::string why;
  CHECK_FALSE(scratch.Reserve(1, 1, &why));
}

TEST_CASE("--scratch-dir makes a private job folder per data dir and empties what was left") {
  const std::string parent = *MakeTempDir("", "kiln-scratch-prep");
  std::string note;
  SECTION("empty: the data dir") {
    auto dir = PrepareScratchDir("", parent + "/data", &note);
    REQUIRE(dir.ok());
    CHECK(dir->empty());
    CHECK(note.find("data dir") != std::string::npos);
  }
  SECTION("a folder") {
    auto dir = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE(dir.ok());
    CHECK(dir->rfind(parent + "/kiln-jobs-", 0) == 0);
    CHECK(std::filesystem::path(*dir).filename() == "jobs");
    struct stat st {};
    REQUIRE(::stat(std::filesystem::path(*dir).parent_path().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    // Another data dir, another folder; the same data dir, the same folder, emptied.
    auto other = PrepareScratchDir(parent, parent + "/data2", &note);
    REQUIRE(other.ok());
    CHECK(*other != *dir);
    REQUIRE(WriteFile(*dir + "/left-over", "x").ok());
    auto again = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE(again.ok());
    CHECK(*again == *dir);
    CHECK_FALSE(std::filesystem::exists(*dir + "/left-over"));
  }
  SECTION("a link in the folder's place is refused") {
    auto dir = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE(dir.ok());
    const std::string folder = std::filesystem::path(*dir).parent_path().string();
    REQUIRE(RemoveTree(folder).ok());
    REQUIRE(::mkdir((parent + "/elsewhere").c_str(), 0700) == 0);
    REQUIRE(::symlink((parent + "/elsewhere").c_str(), folder.c_str()) == 0);
    auto refused = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("not a folder owned by this user") !=
          std::string::npos);
  }
  SECTION("a folder that cannot be written is an error naming the flag") {
    auto refused = PrepareScratchDir(parent + "/missing", parent + "/data", &note);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().message().find("--scratch-dir") != std::string::npos);
  }
  (void)RemoveTree(parent);
}

}  // namespace
}  // namespace kiln
