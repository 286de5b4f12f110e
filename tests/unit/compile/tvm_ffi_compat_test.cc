// kiln's TVM-FFI compatibility headers (harness/include/kiln/tvm_ffi_compat) on the host: cpp
// solutions written against TVM-FFI compile with the host toolchain, and the entry that
// TVM_FFI_DLL_EXPORT_TYPED_FUNC defines converts kiln's arguments (tensors, scalars, dtypes,
// devices, the stream) and turns errors into non-zero returns. The entries are called directly
// here; tests/integration/tvm_ffi_test.cc runs them through a harness and its worker.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/compile/toolchain.h"
#include "harness/model/json_interop.h"
#include "kiln/abi.h"
#include "tests/unit/compile/compile_test_support.h"

namespace kiln {
namespace {

using testing::MakeSolution;
using testing::ScratchDir;

const char* kIncludeDir = KILN_SOURCE_DIR "/harness/include";

// A compiled solution (in a compile cache of its own), loaded.
class Loaded {
 public:
  explicit Loaded(const v1::Solution& solution) {
    std::vector<std::unique_ptr<Toolchain>> toolchains;
    toolchains.push_back(MakeHostCxxToolchain(kIncludeDir));
    Compiler compiler(cache_.path(), std::move(toolchains));
    absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
    REQUIRE(out.ok());
    log_ = out->log;
    ok_ = out->ok;
    if (!ok_) return;
    handle_ = ::dlopen(out->artifact_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(handle_ != nullptr);
  }
  ~Loaded() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  Loaded(const Loaded&) = delete;
  Loaded& operator=(const Loaded&) = delete;

  bool ok() const { return ok_; }
  const std::string& log() const { return log_; }
  // The exported entry `name`; fails the test (with the compile log) when the solution did not
  // compile or does not export it.
  kiln_entry RequireEntry(const char* name) const {
    INFO(log_);
    REQUIRE(ok_);
    auto entry = reinterpret_cast<kiln_entry>(::dlsym(handle_, name));
    REQUIRE(entry != nullptr);
    return entry;
  }
  void* Symbol(const char* name) const { return ::dlsym(handle_, name); }

 private:
  ScratchDir cache_;
  void* handle_ = nullptr;
  bool ok_ = false;
  std::string log_;
};

const std::string kHead = R"(#include <tvm/ffi/function.h>
#include <cstring>
using tvm::ffi::TensorView;
)";

struct Vector {
  std::vector<float> values;
  int64_t shape[1];
  int64_t strides[1] = {1};
  explicit Vector(std::vector<float> v) : values(std::move(v)), shape{(int64_t)values.size()} {}
  kiln_tensor Tensor() { return {values.data(), KILN_FLOAT32, 1, shape, strides}; }
};

kiln_tensor Scalar(void* value, kiln_dtype dtype) { return {value, dtype, 0, nullptr, nullptr}; }

const kiln_context kHostContext = {KILN_ABI_VERSION, KILN_BACKEND_HOST, nullptr, nullptr, nullptr};

TEST_CASE("the TVM-FFI example solution compiles as cpp and adds through its export") {
  absl::StatusOr<std::string> text =
      ReadFile(KILN_SOURCE_DIR "/examples/tvm_ffi/vector_add_f32_cpp.json");
  REQUIRE(text.ok());
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(*text);
  REQUIRE(solution.ok());
  CHECK(solution->spec().entry_point() == "vector_add.cc::run");
  Loaded lib(*solution);
  kiln_entry run = lib.RequireEntry("run");
  // Hidden: the stream state belongs to this library alone.
  CHECK(lib.Symbol("TVMFFIEnvGetStream") == nullptr);

  Vector a({1, 2, 3}), b({10, 20, 30}), c({0, 0, 0});
  kiln_tensor args[] = {a.Tensor(), b.Tensor(), c.Tensor()};
  CHECK(run(args, 3, &kHostContext) == 0);
  CHECK(c.values == std::vector<float>{11, 22, 33});
  // Too few arguments for the function: a clear failure, not a crash.
  CHECK(run(args, 2, &kHostContext) == 2);
  // A failed TVM_FFI_ICHECK (dtype int32 where float32 is required) is a non-zero return.
  args[0].dtype = KILN_INT32;
  CHECK(run(args, 3, &kHostContext) == 1);
}

TEST_CASE("scalar arguments convert to the function's parameter types") {
  v1::Solution solution = MakeSolution({{"main.cc", kHead + R"(
void Scale(TensorView x, double scale, int64_t count, bool negate, float offset, int small,
           TensorView out) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* y = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < count; ++i) y[i] = (negate ? -1 : 1) * in[i] * scale + offset + small;
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_entry, Scale);
)"}},
                                       "main.cc::scale_entry");
  Loaded lib(solution);
  kiln_entry entry = lib.RequireEntry("scale_entry");

  Vector x({1, 2, 4}), y({0, 0, 0});
  float scale = 2.0f;
  int32_t count = 3;
  uint8_t negate = 1;
  uint16_t offset_bf16 = 0x3f00;  // bfloat16 0.5
  int64_t small = 100;
  kiln_tensor args[] = {x.Tensor(),
                        Scalar(&scale, KILN_FLOAT32),
                        Scalar(&count, KILN_INT32),
                        Scalar(&negate, KILN_BOOL),
                        Scalar(&offset_bf16, KILN_BFLOAT16),
                        Scalar(&small, KILN_INT64),
                        y.Tensor()};
  REQUIRE(entry(args, 7, &kHostContext) == 0);
  CHECK(y.values == std::vector<float>{98.5f, 96.5f, 92.5f});

  SECTION("a floating-point scalar does not become an integer parameter") {
    args[2] = Scalar(&scale, KILN_FLOAT32);
    CHECK(entry(args, 7, &kHostContext) == 1);
  }
  SECTION("a tensor does not become a scalar parameter") {
    args[1] = x.Tensor();
    CHECK(entry(args, 7, &kHostContext) == 1);
  }
  SECTION("the count of arguments must match the count of parameters") {
    CHECK(entry(args, 6, &kHostContext) == 2);
    CHECK(entry(nullptr, 7, &kHostContext) == 2);
  }
}

TEST_CASE("dtypes, devices, strides and the stream reach the function as TVM-FFI sees them") {
  // Writes, for each tensor argument: dtype code, bits, lanes, device type, device id, ndim,
  // first stride, and the stream TVMFFIEnvGetStream returns for the argument's device.
  v1::Solution solution = MakeSolution({{"main.cc", kHead + R"(
#include <tvm/ffi/extra/c_env_api.h>
void Describe(TensorView a, tvm::ffi::Tensor b, tvm::ffi::Optional<TensorView> c,
              TensorView out) {
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  const DLTensor* all[] = {a.GetDLTensorPtr(), b.GetDLTensorPtr(), c.value().GetDLTensorPtr()};
  for (const DLTensor* t : all) {
    *o++ = t->dtype.code; *o++ = t->dtype.bits; *o++ = t->dtype.lanes;
    *o++ = t->device.device_type; *o++ = t->device.device_id; *o++ = t->ndim;
    *o++ = t->ndim > 0 ? t->strides[0] : -1;
    *o++ = reinterpret_cast<int64_t>(TVMFFIEnvGetStream(t->device.device_type,
                                                        t->device.device_id));
  }
  TVM_FFI_ICHECK_EQ(a.size(-1), 3);
  TVM_FFI_ICHECK(a.shape() == tvm::ffi::Shape({2, 3})) << a.shape();
  TVM_FFI_ICHECK(a.IsContiguous());
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(describe, Describe);
)"}},
                                       "main.cc::describe");
  Loaded lib(solution);
  kiln_entry entry = lib.RequireEntry("describe");

  uint16_t a_data[6] = {};
  uint8_t b_data[2] = {};
  float c_value = 1.0f;
  std::vector<int64_t> out(24, -7);
  int64_t a_shape[] = {2, 3}, a_strides[] = {3, 1};
  int64_t b_shape[] = {4}, b_strides[] = {1};
  int64_t out_shape[] = {24}, out_strides[] = {1};
  kiln_tensor args[] = {{a_data, KILN_BFLOAT16, 2, a_shape, a_strides},
                        {b_data, KILN_FLOAT4_E2M1, 1, b_shape, b_strides},
                        Scalar(&c_value, KILN_FLOAT32),
                        {out.data(), KILN_INT64, 1, out_shape, out_strides}};

  SECTION("on the CUDA backend: kDLCUDA with the ordinal, and ctx->stream") {
    int ordinal = 3;
    int fake_stream = 0;
    const kiln_context cuda = {KILN_ABI_VERSION, KILN_BACKEND_CUDA, &fake_stream, &ordinal,
                               nullptr};
    REQUIRE(entry(args, 4, &cuda) == 0);
    const int64_t stream = reinterpret_cast<int64_t>(&fake_stream);
    CHECK(std::vector<int64_t>(out.begin(), out.begin() + 8) ==
          std::vector<int64_t>{4, 16, 1, 2, 3, 2, 3, stream});
    CHECK(std::vector<int64_t>(out.begin() + 8, out.begin() + 16) ==
          std::vector<int64_t>{17, 4, 1, 2, 3, 1, 1, stream});
    // A scalar is a host value: device kDLCPU, for which nobody set a stream.
    CHECK(std::vector<int64_t>(out.begin() + 16, out.end()) ==
          std::vector<int64_t>{2, 32, 1, 1, 0, 0, -1, 0});
  }
  SECTION("on the host backend: kDLCPU and no stream") {
    REQUIRE(entry(args, 4, &kHostContext) == 0);
    CHECK(std::vector<int64_t>(out.begin(), out.begin() + 8) ==
          std::vector<int64_t>{4, 16, 1, 1, 0, 2, 3, 0});
  }
}

TEST_CASE("errors thrown by the function are non-zero returns, whatever their kind") {
  v1::Solution solution = MakeSolution({{"main.cc", kHead + R"(
#include <stdexcept>
void Throws(int64_t which) {
  if (which == 0) TVM_FFI_THROW(ValueError) << "bad value " << which;
  if (which == 1) throw std::runtime_error("plain exception");
  if (which == 2) throw 42;
  if (which == 3) TVM_FFI_ICHECK_LT(which, 3) << "too large";
  TVM_FFI_ICHECK_NOTNULL(static_cast<void*>(nullptr));
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throws, Throws);
)"}},
                                       "main.cc::throws");
  Loaded lib(solution);
  kiln_entry entry = lib.RequireEntry("throws");
  for (int64_t which = 0; which <= 4; ++which) {
    INFO("which = " << which);
    kiln_tensor arg = Scalar(&which, KILN_INT64);
    CHECK(entry(&arg, 1, &kHostContext) == 1);
  }
}

TEST_CASE("a TVM-FFI function that returns a value is refused at compile time") {
  v1::Solution solution = MakeSolution({{"main.cc", kHead + R"(
int Returns(TensorView x) { return static_cast<int>(x.ndim()); }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, Returns);
)"}});
  Loaded lib(solution);
  CHECK_FALSE(lib.ok());
  CHECK(absl::StrContains(lib.log(), "destination-passing-style"));
}

}  // namespace
}  // namespace kiln
