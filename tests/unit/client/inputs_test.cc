#include "client/inputs.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "harness/common/files.h"

using namespace kiln;

namespace {

class Scratch {
 public:
  Scratch() : path_(*MakeTempDir("", "kiln-client-test")) {}
  ~Scratch() { (void)RemoveTree(path_); }
  std::string Write(const std::string& rel, const std::string& content) {
    std::string p = path_ + "/" + rel;
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << content;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr char kSolutionHead[] =
    R"({"name": "s", "definition": "d", "author": "a",
        "spec": {"language": "cpp", "target_hardware": ["cpu"], "entry_point": "k.cc::run"})";

}  // namespace

TEST_CASE("a solution folder without sources takes the files beside solution.json") {
  Scratch dir;
  dir.Write("solution.json", std::string(kSolutionHead) + "}");
  dir.Write("k.cc", "int x;\n");
  dir.Write("include/k.h", "#pragma once\n");
  auto s = cli::LoadSolution(dir.path());
  REQUIRE(s.ok());
  REQUIRE(s->sources_size() == 2);
  CHECK(s->sources(0).path() == "include/k.h");
  CHECK(s->sources(1).path() == "k.cc");
  CHECK(s->sources(1).content() == "int x;\n");
}

TEST_CASE("a solution folder whose solution.json has sources uses only those") {
  Scratch dir;
  dir.Write("solution.json", std::string(kSolutionHead) +
                                 R"(, "sources": [{"path": "k.cc", "content": "int y;"}]})");
  dir.Write("k.cc", "int x;\n");
  auto s = cli::LoadSolution(dir.path());
  REQUIRE(s.ok());
  REQUIRE(s->sources_size() == 1);
  CHECK(s->sources(0).content() == "int y;");
}

TEST_CASE("a missing solution file is named") {
  auto s = cli::LoadSolution("/nonexistent/kiln/solution.json");
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.status().message()).find("/nonexistent/kiln/solution.json") !=
        std::string::npos);
}

TEST_CASE("a folder of Solution files (what runs export --solutions writes) names one to pass") {
  Scratch dir;
  dir.Write("vadd.json", std::string(kSolutionHead) + "}");
  dir.Write("vadd_3f2a1b2c.json", std::string(kSolutionHead) + "}");
  auto s = cli::LoadSolution(dir.path());
  REQUIRE_FALSE(s.ok());
  const std::string message(s.status().message());
  INFO(message);
  CHECK(message.find("no solution.json") != std::string::npos);
  CHECK(message.find("holds 2 Solution files") != std::string::npos);
  CHECK(message.find("--solution " + dir.path() + "/vadd.json") != std::string::npos);

  // A folder with one Solution file (one solution exported): that file is the solution.
  Scratch one;
  one.Write("vadd_3f2a1b2c.json",
            std::string(kSolutionHead) + R"(, "sources": [{"path": "k.cc", "content": "int x;"}]})");
  auto loaded = cli::LoadSolution(one.path());
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->sources(0).path() == "k.cc");
}

TEST_CASE("a broken definition file is named with the parser's message") {
  Scratch dir;
  std::string p = dir.Write("bad.json", "{\"name\": ");
  auto d = cli::LoadDefinitionFile(p);
  REQUIRE_FALSE(d.ok());
  CHECK(std::string(d.status().message()).rfind(p + ": ", 0) == 0);
}

TEST_CASE("a KernelBench .py names ModelNew as a class, a binding or an import; else refused") {
  Scratch dir;
  for (const std::string& body :
       {std::string("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"),
        std::string("class Model:\n    pass\n\nModelNew = Model\n"),
        std::string("class Model:\n    pass\nModelNew: type = Model\n"),
        std::string("from fast_kernels import Fused as ModelNew\n")}) {
    const std::string path = dir.Write("candidate.py", body);
    auto s = cli::LoadSolution(path);
    INFO(body << "\n" << s.status().ToString());
    REQUIRE(s.ok());
    CHECK(s->spec().entry_point() == "candidate.py::ModelNew");
  }
  for (const std::string& body :
       {std::string("class Model:\n    pass\n"), std::string("x = 1\nif ModelNew == 2: pass\n"),
        std::string("# ModelNew = Model\n")}) {
    const std::string path = dir.Write("other.py", body);
    auto s = cli::LoadSolution(path);
    INFO(body);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(std::string(s.status().message()), Catch::Contains("defines none"));
  }
}
