// File-system helpers (files.h).
#include "harness/common/files.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
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
