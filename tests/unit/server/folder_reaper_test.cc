// The folder reaper: a discarded folder's name is free at once, its files go on the reaper's
// thread in the order discarded, and nothing discarded outlives the reaper.
#include "server/evaluation/folder_reaper.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "harness/common/files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string MakeTree(const std::string& root, const std::string& name) {
  const std::string dir = root + "/" + name;
  REQUIRE(MakeDirs(dir + "/out/deeper").ok());
  REQUIRE(WriteFile(dir + "/out/trial0.bin", std::string(1 << 16, 'x')).ok());
  REQUIRE(WriteFile(dir + "/out/deeper/recheck0.bin", "y").ok());
  return dir;
}

// Everything in `dir` (names only, sorted).
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("a discarded folder's name is free at once and its files are gone after Flush") {
  auto root = MakeTempDir("", "kiln-reaper-test");
  REQUIRE(root.ok());
  FolderReaper reaper;
  // The reaper's thread is held until the test lets it go, so that what Discard itself did
  // can be seen before any removal.
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  const std::string blocker = MakeTree(*root, "blocker");
  reaper.Discard(blocker, [&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return go; });
  });
  const std::string run = MakeTree(*root, "run1");
  std::vector<std::string> order;
  reaper.Discard(run + "/out", [&] { order.push_back("out"); });
  reaper.Discard(run, [&] { order.push_back("run"); });
  reaper.Discard(*root + "/never-made", [&] { order.push_back("missing"); });
  // Renamed already: the names can be made again, and the files are all still there.
  CHECK_FALSE(fs::exists(run));
  CHECK_FALSE(fs::exists(blocker));
  const std::vector<std::string> hidden = Entries(*root);
  REQUIRE(hidden.size() == 2);
  CHECK(hidden[0].rfind(".discarded-", 0) == 0);
  CHECK(hidden[1].rfind(".discarded-", 0) == 0);
  REQUIRE(MakeDirs(run).ok());
  CHECK(order.empty());
  {
    std::lock_guard<std::mutex> lock(mu);
    go = true;
  }
  cv.notify_all();
  CHECK(reaper.Flush());
  CHECK(order == std::vector<std::string>{"out", "run", "missing"});
  CHECK(Entries(*root) == std::vector<std::string>{"run1"});  // the new folder stays
  CHECK(reaper.removed() == 3);  // blocker, out, run1 (the missing one was nothing)
  CHECK_FALSE(reaper.Flush());   // nothing left to wait for
  (void)RemoveTree(*root);
}

TEST_CASE("a reaper removes everything discarded before it stops") {
  auto root = MakeTempDir("", "kiln-reaper-test");
  REQUIRE(root.ok());
  bool released = false;
  {
    FolderReaper reaper;
    for (int i = 0; i < 20; ++i) reaper.Discard(MakeTree(*root, "w" + std::to_string(i)));
    reaper.Discard(*root + "/w0", [&] { released = true; });  // already discarded: nothing
  }
  CHECK(released);
  CHECK(Entries(*root).empty());
  (void)RemoveTree(*root);
}

TEST_CASE("without a reaper a folder is removed where it is discarded") {
  auto root = MakeTempDir("", "kiln-reaper-test");
  REQUIRE(root.ok());
  const std::string dir = MakeTree(*root, "run");
  bool then = false;
  DiscardFolder(nullptr, dir, [&] { then = true; });
  CHECK(then);
  CHECK_FALSE(fs::exists(dir));
  (void)RemoveTree(*root);
}

}  // namespace
}  // namespace kiln
