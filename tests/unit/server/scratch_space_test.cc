// The RAM-backed job folder: which runs it takes, and how --scratch-dir is prepared.
#include "server/evaluation/scratch_space.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <ctime>
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
    auto folder = PrepareScratchDir("", parent + "/data", &note);
    REQUIRE(folder.ok());
    CHECK(*folder == nullptr);
    CHECK(note.find("data dir") != std::string::npos);
  }
  SECTION("a folder") {
    std::string jobs, other_jobs;
    {
      auto folder = PrepareScratchDir(parent, parent + "/data", &note);
      REQUIRE(folder.ok());
      REQUIRE(*folder != nullptr);
      jobs = (*folder)->jobs();
      CHECK(jobs.rfind(parent + "/kiln-jobs-", 0) == 0);
      CHECK(std::filesystem::is_directory(jobs));
      struct stat st {};
      REQUIRE(::stat(std::filesystem::path(jobs).parent_path().c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0700);
      // Another data dir, another folder; the same one, held by a node that runs, is refused.
      auto other = PrepareScratchDir(parent, parent + "/data2", &note);
      REQUIRE(other.ok());
      other_jobs = (*other)->jobs();
      CHECK(other_jobs != jobs);
      auto same = PrepareScratchDir(parent, parent + "/data", &note);
      REQUIRE_FALSE(same.ok());
      CHECK(same.status().message().find("held by another kiln-harness") != std::string::npos);
      REQUIRE(WriteFile(jobs + "/left-over", "x").ok());
    }
    // A stopped node removes its folder.
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(jobs).parent_path()));
    CHECK_FALSE(std::filesystem::exists(std::filesystem::path(other_jobs).parent_path()));
  }
  SECTION("what a killed node left is emptied or removed") {
    auto first = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE(first.ok());
    const std::string jobs = (*first)->jobs();
    const std::string own = std::filesystem::path(jobs).parent_path().string();
    first->reset();
    // As a killed node leaves them: its own folder with a run's files and a free lock; another
    // node's, killed a while ago; one whose node runs (its lock held); one of a node that is
    // just starting (a fresh lock file); one without a lock file.
    auto make = [&](const std::string& name, bool old) {
      const std::string dir = parent + "/" + name;
      REQUIRE(MakeDirs(dir + "/jobs/run1", 0700).ok());
      REQUIRE(WriteFile(dir + "/jobs/run1/t0_out.bin", "x").ok());
      REQUIRE(WriteFile(dir + "/lock", "").ok());
      if (old) {
        struct timespec times[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
        REQUIRE(::utimensat(AT_FDCWD, (dir + "/lock").c_str(), times, 0) == 0);
      }
      return dir;
    };
    make(std::filesystem::path(own).filename().string(), true);
    const std::string killed = make("kiln-jobs-00000000000000aa", true);
    const std::string running = make("kiln-jobs-00000000000000bb", true);
    const std::string starting = make("kiln-jobs-00000000000000cc", false);
    const std::string unlocked = parent + "/kiln-jobs-00000000000000dd";
    REQUIRE(MakeDirs(unlocked, 0700).ok());
    const int held = ::open((running + "/lock").c_str(), O_RDWR);
    REQUIRE(held >= 0);
    REQUIRE(::flock(held, LOCK_EX | LOCK_NB) == 0);
    auto again = PrepareScratchDir(parent, parent + "/data", &note);
    REQUIRE(again.ok());
    CHECK((*again)->jobs() == jobs);
    CHECK_FALSE(std::filesystem::exists(jobs + "/run1"));
    CHECK_FALSE(std::filesystem::exists(killed));
    CHECK(std::filesystem::exists(running + "/jobs/run1/t0_out.bin"));
    CHECK(std::filesystem::exists(starting + "/jobs/run1/t0_out.bin"));
    CHECK(std::filesystem::exists(unlocked));
    ::close(held);
  }
  SECTION("a link in the folder's place is refused") {
    std::string own;
    {
      auto folder = PrepareScratchDir(parent, parent + "/data", &note);
      REQUIRE(folder.ok());
      own = std::filesystem::path((*folder)->jobs()).parent_path().string();
    }
    REQUIRE(::mkdir((parent + "/elsewhere").c_str(), 0700) == 0);
    REQUIRE(::symlink((parent + "/elsewhere").c_str(), own.c_str()) == 0);
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
