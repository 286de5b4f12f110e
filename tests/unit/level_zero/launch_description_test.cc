#include "harness/model/launch_description.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "tests/unit/level_zero/level_zero_test_support.h"

namespace kiln {
namespace {

using testing::VectorAddDefinition;

LaunchDescription Parse(const std::string& json) {
  absl::StatusOr<LaunchDescription> d = ParseLaunchDescription(json, VectorAddDefinition(), "k");
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  return *std::move(d);
}

std::string Error(const std::string& json) {
  absl::StatusOr<LaunchDescription> d = ParseLaunchDescription(json, VectorAddDefinition(), "k");
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(d.status().message());
}

// The entry point's arguments for n elements: x, y, alpha (host scalar), out.
struct Args {
  explicit Args(int64_t n) : shape{n} {
    for (int i = 0; i < 4; ++i) {
      tensors[i] = kiln_tensor{buffers[i], KILN_FLOAT32, i == 2 ? 0 : 1, shape, strides};
    }
    std::memcpy(buffers[2], &alpha, sizeof alpha);
  }
  int64_t shape[1];
  int64_t strides[1] = {1};
  float alpha = 2.5f;
  alignas(8) unsigned char buffers[4][8] = {};
  kiln_tensor tensors[4];
};

TEST_CASE("a launch description binds names to the definition's calling order") {
  LaunchDescription d = Parse(testing::kVectorAddLaunch);
  CHECK(d.kernel_name == "k");
  REQUIRE(d.tensors.size() == 4);
  CHECK(d.tensors[2].name == "alpha");
  CHECK(d.tensors[2].ndim == 0);
  CHECK(d.tensors[3].name == "out");
  REQUIRE(d.args.size() == 5);
  CHECK(d.args[0].kind == kiln_launch::kBuffer);
  CHECK(d.args[0].tensor == 0);
  CHECK(d.args[2].kind == kiln_launch::kScalar);
  CHECK(d.args[3].kind == kiln_launch::kBuffer);
  CHECK(d.args[3].tensor == 3);
  CHECK(d.args[4].kind == kiln_launch::kValue);
  CHECK(d.args[4].bytes == 4);
  REQUIRE(d.axes.size() == 2);
  CHECK(d.axes[0].tensor == 0);  // n is read off x's first dimension
  CHECK(d.axes[1].tensor == -1);
  CHECK(d.axes[1].constant == 256);
  CHECK(Parse(R"json({"kernel": "other", "args": [], "global": [1]})json").kernel_name == "other");
}

TEST_CASE("a plan resolves axes from tensor shapes and packs every kind of argument") {
  LaunchDescription d = Parse(R"json({
    "args": [{"input": "x"}, {"input": "alpha"}, {"output": "out"}, {"axis": "n"},
             {"value": "n * 3", "type": "ulong"}, {"local": "block * 4"}],
    "global": ["round_up(n, block)", 2], "local": ["block", 1]})json");
  LaunchPlanView view(d);
  Args args(1000);
  kiln_launch::AxisValues axes;
  kiln_launch::Error error;
  REQUIRE(kiln_launch::ResolveAxes(view.plan(), args.tensors, 4, &axes, &error));
  CHECK(axes.value[0] == 1000);
  CHECK(axes.value[1] == 256);
  kiln_launch::KernelArg bound[6];
  REQUIRE(kiln_launch::BindArguments(view.plan(), args.tensors, axes, bound, &error));
  CHECK(bound[0].size == sizeof(void*));
  CHECK(*static_cast<void* const*>(bound[0].value) == args.buffers[0]);
  CHECK(bound[1].size == 4);
  float alpha = 0;
  std::memcpy(&alpha, bound[1].value, 4);
  CHECK(alpha == 2.5f);
  CHECK(*static_cast<void* const*>(bound[2].value) == args.buffers[3]);
  int32_t n = 0;
  std::memcpy(&n, bound[3].value, 4);
  CHECK((bound[3].size == 4 && n == 1000));
  uint64_t n3 = 0;
  std::memcpy(&n3, bound[4].value, 8);
  CHECK((bound[4].size == 8 && n3 == 3000));
  CHECK((bound[5].size == 1024 && bound[5].value == nullptr));
  kiln_launch::Geometry g;
  REQUIRE(kiln_launch::ComputeGeometry(view.plan(), axes, &g, &error));
  CHECK(g.dims == 2);
  CHECK(g.global[0] == 1024);
  CHECK(g.group_size[0] == 256);
  CHECK(g.group_count[0] == 4);
  CHECK(g.group_count[1] == 2);
}

TEST_CASE("a global size that is not a multiple of the local size is rounded up to whole groups") {
  LaunchDescription d = Parse(R"json({"args": [], "global": ["n"], "local": [128]})json");
  LaunchPlanView view(d);
  Args args(1000);
  kiln_launch::AxisValues axes;
  kiln_launch::Error error;
  REQUIRE(kiln_launch::ResolveAxes(view.plan(), args.tensors, 4, &axes, &error));
  kiln_launch::Geometry g;
  REQUIRE(kiln_launch::ComputeGeometry(view.plan(), axes, &g, &error));
  CHECK(g.group_count[0] == 8);                       // 1000 / 128 rounded up
  Parse(R"json({"args": [], "global": ["n"]})json");  // no local: the device picks
}

TEST_CASE("a launch refuses arguments that do not match the signature it was built for") {
  LaunchDescription d = Parse(testing::kVectorAddLaunch);
  LaunchPlanView view(d);
  Args args(10);
  kiln_launch::AxisValues axes;
  kiln_launch::Error error;
  CHECK_FALSE(kiln_launch::ResolveAxes(view.plan(), args.tensors, 3, &axes, &error));
  CHECK(std::string(error.text).find("received 3 arguments") != std::string::npos);
  args.tensors[1].dtype = KILN_FLOAT16;
  CHECK_FALSE(kiln_launch::ResolveAxes(view.plan(), args.tensors, 4, &axes, &error));
  CHECK(std::string(error.text).find("'y'") != std::string::npos);
}

TEST_CASE("a value that does not fit its OpenCL type is refused at launch") {
  LaunchDescription d = Parse(R"json({"args": [{"value": "n - 2000", "type": "uint"},
                                           {"value": "n * n * n * n", "type": "int"}],
                                  "global": [1]})json");
  LaunchPlanView view(d);
  Args args(1000);
  kiln_launch::AxisValues axes;
  kiln_launch::Error error;
  REQUIRE(kiln_launch::ResolveAxes(view.plan(), args.tensors, 4, &axes, &error));
  kiln_launch::KernelArg bound[2];
  CHECK_FALSE(kiln_launch::BindArguments(view.plan(), args.tensors, axes, bound, &error));
  CHECK(std::string(error.text).find("args[0]") != std::string::npos);
}

TEST_CASE("launch.json errors name the offending field") {
  CHECK(Error("{").find("not JSON") != std::string::npos);
  CHECK(Error(R"json({"args": [], "global": [1], "grid": 2})json").find("grid: unknown field") !=
        std::string::npos);
  CHECK(Error(R"json({"global": [1]})json").find("args:") != std::string::npos);
  CHECK(Error(R"json({"args": [{"input": "z"}], "global": [1]})json")
            .find("args[0].input: 'z' is not an input of definition 'vector_add'") !=
        std::string::npos);
  CHECK(Error(R"json({"args": [{"output": "x"}], "global": [1]})json").find("args[0].output") !=
        std::string::npos);
  CHECK(Error(R"json({"args": [{"input": "x", "axis": "n"}], "global": [1]})json")
            .find("exactly one of") != std::string::npos);
  CHECK(Error(R"json({"args": [{"axis": "n", "type": "short"}], "global": [1]})json")
            .find("args[0].type: 'short'") != std::string::npos);
  CHECK(Error(R"json({"args": [], "global": []})json").find("global:") != std::string::npos);
  CHECK(Error(R"json({"args": [], "global": [1, 2, 3, 4]})json").find("global:") !=
        std::string::npos);
  CHECK(Error(R"json({"args": [], "global": ["m"]})json").find("global[0]") != std::string::npos);
  CHECK(Error(R"json({"args": [], "global": [1, 1], "local": [1]})json").find("local: has 1") !=
        std::string::npos);
}

TEST_CASE("an opencl solution without launch.json is refused naming the file") {
  v1::Solution s = testing::VectorAddSolution();
  s.mutable_sources()->RemoveLast();
  absl::StatusOr<std::string> launch = LaunchDescriptionSource(s);
  REQUIRE_FALSE(launch.ok());
  CHECK(std::string(launch.status().message()).find("launch.json") != std::string::npos);
  CHECK(LaunchDescriptionSource(testing::VectorAddSolution()).ok());
}

}  // namespace
}  // namespace kiln
