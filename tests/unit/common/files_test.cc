// File-system helpers (files.h).
#include "harness/common/files.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>
#include <string>

namespace kiln {
namespace {

class TempDir {
 public:
  TempDir() {
    auto dir = MakeTempDir("", "kiln-files-test");
    REQUIRE(dir.ok());
    path_ = *dir;
  }
  ~TempDir() { (void)RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("a written file reads back byte for byte") {
  TempDir dir;
  const std::string path = dir.path() + "/blob.bin";
  const std::string content("binary\0data\xff", 12);
  REQUIRE(WriteFile(path, content).ok());
  auto read = ReadFile(path);
  REQUIRE(read.ok());
  CHECK(*read == content);
}

TEST_CASE("WriteFile replaces the old content and leaves no temporary file") {
  TempDir dir;
  const std::string path = dir.path() + "/f.txt";
  REQUIRE(WriteFile(path, "first version, longer").ok());
  REQUIRE(WriteFile(path, "second", /*durable=*/true).ok());
  CHECK(*ReadFile(path) == "second");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  CHECK(entries == 1);
}

TEST_CASE("reading a missing file is NOT_FOUND naming the path") {
  TempDir dir;
  const std::string path = dir.path() + "/absent.json";
  auto read = ReadFile(path);
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(read.status().message()).find(path) != std::string::npos);
}

TEST_CASE("writing into a missing folder fails naming the path") {
  TempDir dir;
  const std::string path = dir.path() + "/no/such/folder/f";
  const absl::Status s = WriteFile(path, "x");
  CHECK_FALSE(s.ok());
  CHECK(std::string(s.message()).find(dir.path()) != std::string::npos);
}

TEST_CASE("MakeDirs creates nested folders and RemoveTree removes them") {
  TempDir dir;
  const std::string nested = dir.path() + "/a/b/c";
  REQUIRE(MakeDirs(nested).ok());
  CHECK(std::filesystem::is_directory(nested));
  REQUIRE(MakeDirs(nested).ok());  // existing is fine
  REQUIRE(WriteFile(nested + "/f", "x").ok());
  REQUIRE(RemoveTree(dir.path() + "/a").ok());
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/a"));
  CHECK(RemoveTree(dir.path() + "/never-existed").ok());
}

TEST_CASE("UnlinkBeneath removes named files without following a link to another folder") {
  TempDir dir;
  namespace fs = std::filesystem;
  REQUIRE(MakeDirs(dir.path() + "/root/w0/out").ok());
  REQUIRE(MakeDirs(dir.path() + "/elsewhere/out").ok());
  for (const char* f : {"/root/w0/out/t0_c.bin", "/root/w0/out/t1_c.bin",
                        "/elsewhere/out/t0_c.bin", "/elsewhere/keep.bin"}) {
    REQUIRE(WriteFile(dir.path() + f, "x").ok());
  }
  const std::string root = dir.path() + "/root";
  // Only the names given, and a missing one is skipped.
  CHECK(UnlinkBeneath(root, {"w0", "out"}, {"t0_c.bin", "r0_c.bin"}) == 1);
  CHECK_FALSE(fs::exists(root + "/w0/out/t0_c.bin"));
  CHECK(fs::exists(root + "/w0/out/t1_c.bin"));
  // Names that would leave the folder are not removed.
  CHECK(UnlinkBeneath(root, {"w0"}, {"../../elsewhere/keep.bin", "..", ""}) == 0);
  CHECK(fs::exists(dir.path() + "/elsewhere/keep.bin"));
  CHECK(UnlinkBeneath(root, {"..", "elsewhere"}, {"keep.bin"}) == 0);
  CHECK(fs::exists(dir.path() + "/elsewhere/keep.bin"));
  // A folder replaced by a link to elsewhere (as a worker could do in its own folder) is not
  // entered.
  fs::rename(root + "/w0/out", root + "/w0/out.old");
  fs::create_directory_symlink(dir.path() + "/elsewhere/out", root + "/w0/out");
  CHECK(UnlinkBeneath(root, {"w0", "out"}, {"t0_c.bin"}) == 0);
  CHECK(fs::exists(dir.path() + "/elsewhere/out/t0_c.bin"));
  // w0 itself a link.
  fs::remove_all(root + "/w0");
  fs::create_directory_symlink(dir.path() + "/elsewhere", root + "/w0");
  CHECK(UnlinkBeneath(root, {"w0", "out"}, {"t0_c.bin"}) == 0);
  CHECK(fs::exists(dir.path() + "/elsewhere/out/t0_c.bin"));
  // A missing folder: nothing.
  CHECK(UnlinkBeneath(dir.path() + "/none", {"w0"}, {"t0_c.bin"}) == 0);
}

TEST_CASE("RenameBeneath renames within the folder, without following a link to another") {
  TempDir dir;
  namespace fs = std::filesystem;
  REQUIRE(MakeDirs(dir.path() + "/root/w0/out").ok());
  REQUIRE(MakeDirs(dir.path() + "/elsewhere/out").ok());
  const std::string root = dir.path() + "/root";
  REQUIRE(WriteFile(root + "/w0/out/t0_c.bin", "pass 0").ok());
  REQUIRE(WriteFile(root + "/w0/out/reuse_c.bin", "older").ok());
  REQUIRE(WriteFile(dir.path() + "/elsewhere/out/t0_c.bin", "x").ok());
  // Renamed over an older file of that name; a missing one is reported back.
  std::vector<std::string> left =
      RenameBeneath(root, {"w0", "out"}, {{"t0_c.bin", "reuse_c.bin"}, {"r0_c.bin", "x.bin"}});
  CHECK(left == std::vector<std::string>{"r0_c.bin"});
  CHECK_FALSE(fs::exists(root + "/w0/out/t0_c.bin"));
  CHECK(*ReadFile(root + "/w0/out/reuse_c.bin") == "pass 0");
  // Names that would leave the folder are not renamed.
  left = RenameBeneath(root, {"w0", "out"}, {{"reuse_c.bin", "../../../elsewhere/out/y.bin"},
                                             {"..", "z"}, {"", "z"}});
  CHECK(left.size() == 3);
  CHECK(fs::exists(root + "/w0/out/reuse_c.bin"));
  CHECK_FALSE(fs::exists(dir.path() + "/elsewhere/out/y.bin"));
  // A folder replaced by a link to elsewhere is not entered.
  fs::rename(root + "/w0/out", root + "/w0/out.old");
  fs::create_directory_symlink(dir.path() + "/elsewhere/out", root + "/w0/out");
  left = RenameBeneath(root, {"w0", "out"}, {{"t0_c.bin", "reuse_c.bin"}});
  CHECK(left == std::vector<std::string>{"t0_c.bin"});
  CHECK(fs::exists(dir.path() + "/elsewhere/out/t0_c.bin"));
  CHECK_FALSE(fs::exists(dir.path() + "/elsewhere/out/reuse_c.bin"));
}

TEST_CASE("WriteFileOver writes over a plain file in place and renames it; never through a "
          "link") {
  TempDir dir;
  namespace fs = std::filesystem;
  const std::string reuse = dir.path() + "/reuse_c.bin", path = dir.path() + "/t1_c.bin";
  auto parts = [](std::vector<std::string> texts) {
    auto at = std::make_shared<size_t>(0);
    auto held = std::make_shared<std::vector<std::string>>(std::move(texts));
    return [at, held]() -> absl::StatusOr<std::string_view> {
      if (*at == held->size()) return std::string_view();
      return std::string_view((*held)[(*at)++]);
    };
  };
  auto inode = [](const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_ino) : int64_t{-1};
  };
  SECTION("a plain file: the same inode, cut to what was written") {
    REQUIRE(WriteFile(reuse, "an older and longer pass").ok());
    const int64_t before = inode(reuse);
    REQUIRE(WriteFileOver(path, reuse, parts({"new ", "pass"})).ok());
    CHECK(*ReadFile(path) == "new pass");
    CHECK(inode(path) == before);
    CHECK_FALSE(fs::exists(reuse));
  }
  SECTION("none there: a new file") {
    REQUIRE(WriteFileOver(path, reuse, parts({"new"})).ok());
    CHECK(*ReadFile(path) == "new");
  }
  SECTION("a link: not followed, its target untouched, a new file written") {
    const std::string target = dir.path() + "/target.bin";
    REQUIRE(WriteFile(target, "someone else's").ok());
    fs::create_symlink(target, reuse);
    REQUIRE(WriteFileOver(path, reuse, parts({"new"})).ok());
    CHECK(*ReadFile(path) == "new");
    CHECK(*ReadFile(target) == "someone else's");
    CHECK(inode(path) != inode(target));
  }
  SECTION("an error from a part: nothing at path, the reused file gone") {
    REQUIRE(WriteFile(reuse, "older").ok());
    bool first = true;
    absl::Status s = WriteFileOver(path, reuse, [&]() -> absl::StatusOr<std::string_view> {
      if (std::exchange(first, false)) return std::string_view("half");
      return absl::DataLossError("the device copy failed");
    });
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK_FALSE(fs::exists(path));
    CHECK_FALSE(fs::exists(reuse));
  }
}

TEST_CASE("temporary folders are fresh and private") {
  TempDir a, b;
  CHECK(a.path() != b.path());
  CHECK(a.path().find("kiln-files-test-") != std::string::npos);
  struct stat st;
  REQUIRE(::stat(a.path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

TEST_CASE("the executable folder holds the running test") {
  const std::string dir = ExecutableDir();
  CHECK(std::filesystem::exists(dir + "/unit_common"));
}

}  // namespace
}  // namespace kiln
