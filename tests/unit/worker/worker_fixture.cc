#include "tests/unit/worker/worker_fixture.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "harness/common/files.h"
#include "harness/model/dtype.h"
#include "harness/model/validate.h"
#include "harness/sandbox/process.h"
#include "harness/verify/input_generator.h"

namespace kiln::testing {
namespace {

// One entry point per behaviour the worker must handle.
constexpr char kSolutions[] = R"cc(
#include <kiln/abi.h>
#include <kiln/host_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

  static int64_t numel(const kiln_tensor* t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
  }

  static int valid_add_args(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    return nargs == 3 && ctx->abi_version == KILN_ABI_VERSION &&
           ctx->backend == KILN_BACKEND_HOST && a[0].dtype == KILN_FLOAT32 && a[0].ndim == 1 &&
           a[0].strides[0] == 1 && ((uintptr_t)a[0].data % 64) == 0 &&
           ((uintptr_t)a[2].data % 64) == 0;
  }

  extern "C" int add(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    if (!valid_add_args(a, nargs, ctx)) return 7;
    const float* x = (const float*)a[0].data;
    const float* y = (const float*)a[1].data;
    float* z = (float*)a[2].data;
    for (int64_t i = 0; i < numel(&a[2]); ++i) z[i] = x[i] + y[i];
    return 0;
  }

  extern "C" int copy_a(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    const float* x = (const float*)a[0].data;
    float* z = (float*)a[2].data;
    for (int64_t i = 0; i < numel(&a[2]); ++i) z[i] = x[i];
    return 0;
  }

  extern "C" int leave_unwritten(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    return 0;
  }

  extern "C" int mutate_b(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    int rc = add(a, nargs, ctx);
    ((float*)a[1].data)[numel(&a[1]) / 2] += 1.0f;
    return rc;
  }

  /* Clean on its first call (the checked call), mutating on every later one. */
  extern "C" int mutate_later(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    static int calls = 0;
    int rc = add(a, nargs, ctx);
    if (++calls > 1) ((float*)a[0].data)[0] = -((float*)a[0].data)[0] - 1.0f;
    return rc;
  }

  extern "C" int return_3(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) { return 3; }

  extern "C" int segfault(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    printf("solution: about to write through a null pointer\n");
    *(volatile int*)ctx->stream = 1; /* NULL on the host backend */
    return 0;
  }

  extern "C" int spin(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    for (;;) __asm__ volatile("");
  }

  extern "C" int chatty_add(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    /* Frame-like bytes on stdout and stderr must not reach the event pipe. */
    static const char kFrameLike[] = "\x04\x00\x00\x00\xff\xff\xff\xff\n";
    for (int i = 0; i < 2000; ++i) {
      printf("chatter %d ", i);
      fwrite(kFrameLike, 1, sizeof kFrameLike - 1, stdout);
      fprintf(stderr, "stderr chatter %d ", i);
      fwrite(kFrameLike, 1, sizeof kFrameLike - 1, stderr);
    }
    return add(a, nargs, ctx);
  }

  extern "C" int forge_event(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    static const char kHuge[4] = {'\xff', '\xff', '\xff', '\x7f'};
    if (write(4, kHuge, sizeof kHuge) != 4) return 9;
    return add(a, nargs, ctx);
  }

  /* A framed WorkerEvent{result{status: PASSED}}. */
  static const char kForgedPass[8] = {4, 0, 0, 0, 0x12, 0x02, 0x08, 0x01};

  extern "C" int forge_result(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    if (write(4, kForgedPass, sizeof kForgedPass) != sizeof kForgedPass) return 9;
    return add(a, nargs, ctx);
  }

  extern "C" int forge_result_and_exit(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    if (write(4, kForgedPass, sizeof kForgedPass) != sizeof kForgedPass) return 9;
    _exit(0);
  }

  /* Adds, and on its 4th call (a timed one) also writes the 8-byte `frame` on the event pipe. */
  static int add_forging(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx,
                         int* calls, const char* frame) {
    if (++*calls == 4 && write(4, frame, 8) != 8) return 9;
    return add(a, nargs, ctx);
  }

  /* A framed WorkerEvent{checked{trial: 1}}: the next trial's gate of a request that has only
     trial 0. */
  static const char kForgedChecked[8] = {4, 0, 0, 0, 0x1a, 0x02, 0x08, 0x01};

  extern "C" int forge_checked(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    static int calls = 0;
    return add_forging(a, nargs, ctx, &calls, kForgedChecked);
  }

  /* A framed WorkerEvent{recheck{trial: 0}}: a recheck's gate before the worker has made the
     recheck. */
  static const char kForgedRecheck[8] = {4, 0, 0, 0, 0x22, 0x02, 0x08, 0x00};

  extern "C" int forge_recheck(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    static int calls = 0;
    return add_forging(a, nargs, ctx, &calls, kForgedRecheck);
  }

  extern "C" int exit_early(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    _exit(0);
  }

  extern "C" int widen_bf16(const kiln_tensor* a, int32_t nargs, const kiln_context* ctx) {
    if (nargs != 3 || a[0].dtype != KILN_BFLOAT16 || a[1].ndim != 0 || a[2].dtype != KILN_FLOAT32)
      return 5;
    const uint16_t* x = (const uint16_t*)a[0].data;
    float scale = *(const float*)a[1].data;
    float* y = (float*)a[2].data;
    for (int64_t i = 0; i < numel(&a[2]); ++i) y[i] = scale * kiln_bf16_to_float(x[i]);
    return 0;
  }
)cc";

v1::TensorSpec Tensor(const std::string& name, v1::DType dtype, std::vector<std::string> shape) {
  v1::TensorSpec t;
  t.set_name(name);
  t.set_dtype(dtype);
  for (auto& s : shape) t.add_shape(s);
  return t;
}

v1::TensorSpec Scalar(const std::string& name, v1::DType dtype) {
  v1::TensorSpec t;
  t.set_name(name);
  t.set_dtype(dtype);
  t.set_scalar(true);
  return t;
}

void AddVarAxis(v1::Definition* def, const std::string& name) {
  v1::Axis* axis = def->add_axes();
  axis->set_name(name);
  axis->set_is_const(false);
}

// The folder of the compiled solutions, removed when the test program exits.
struct SolutionDir {
  std::string path;
  ~SolutionDir() { (void)RemoveTree(path); }
};

std::string CompileSolutions() {
  static SolutionDir dir;
  absl::StatusOr<std::string> made = MakeTempDir("", "kiln-worker-solutions");
  REQUIRE(made.ok());
  dir.path = *made;
  std::string src = dir.path + "/solutions.cc";
  std::string lib = dir.path + "/libsolutions.so";
  REQUIRE(WriteFile(src, kSolutions).ok());
  ProcessOptions opts;
  opts.argv = {"/usr/bin/g++", "-O2", "-shared", "-fPIC", "-I", KILN_SOURCE_DIR "/harness/include",
               "-o",           lib,   src};
  opts.timeout_s = 120;
  absl::StatusOr<ProcessResult> result = RunProcess(opts);
  REQUIRE(result.ok());
  INFO(result->output);
  REQUIRE(result->exit_code == 0);
  return lib;
}

}  // namespace

const std::string& TestSolutionLibrary() {
  static const std::string lib = CompileSolutions();
  return lib;
}

v1::Definition VectorAddDefinition() {
  v1::Definition def;
  def.set_name("vector_add");
  AddVarAxis(&def, "n");
  *def.add_inputs() = Tensor("a", v1::DTYPE_FLOAT32, {"n"});
  *def.add_inputs() = Tensor("b", v1::DTYPE_FLOAT32, {"n"});
  *def.add_outputs() = Tensor("c", v1::DTYPE_FLOAT32, {"n"});
  return def;
}

v1::Definition WidenBf16Definition() {
  v1::Definition def;
  def.set_name("widen_bf16");
  AddVarAxis(&def, "n");
  *def.add_inputs() = Tensor("x", v1::DTYPE_BFLOAT16, {"n"});
  *def.add_inputs() = Scalar("scale", v1::DTYPE_FLOAT32);
  *def.add_outputs() = Tensor("y", v1::DTYPE_FLOAT32, {"n"});
  return def;
}

v1::Workload RandomWorkload(const v1::Definition& def, int64_t n, const std::string& scalar_json) {
  v1::Workload w;
  w.set_uuid("test-workload");
  v1::AxisValue* axis = w.add_axes();
  axis->set_name("n");
  axis->set_value(n);
  for (const v1::TensorSpec& spec : def.inputs()) {
    v1::WorkloadInput* input = w.add_inputs();
    input->set_name(spec.name());
    if (spec.scalar()) {
      input->set_kind(v1::WorkloadInput::SCALAR);
      input->set_value_json(scalar_json);
    } else {
      input->set_kind(v1::WorkloadInput::RANDOM);
    }
  }
  return w;
}

WorkerJob::WorkerJob() {
  absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-worker-job");
  REQUIRE(dir.ok());
  dir_ = *dir;
  REQUIRE(MakeDirs(output_dir()).ok());
}

WorkerJob::~WorkerJob() { (void)RemoveTree(dir_); }

v1::WorkerRequest WorkerJob::Request(const v1::Definition& def, const v1::Workload& workload,
                                     const std::string& symbol, std::vector<uint64_t> seeds,
                                     const std::string& role) const {
  v1::WorkerRequest request;
  *request.mutable_definition() = def;
  *request.mutable_workload() = workload;
  request.set_artifact_path(TestSolutionLibrary());
  request.set_symbol(symbol);
  request.set_role(role);
  for (uint64_t seed : seeds) request.add_trial_seeds(seed);
  request.set_measure(false);
  request.set_output_dir(output_dir());
  request.set_backend("host");
  request.set_device_index(0);
  request.set_blob_root(dir_);
  return request;
}

WorkerLaunch WorkerJob::Launch(double timeout_s) const {
  WorkerLaunch launch;
  launch.worker_path = KILN_BINARY_DIR "/bin/kiln-worker";
  launch.job_dir = dir_;
  launch.log_path = log_path();
  launch.timeout_s = timeout_s;
  return launch;
}

v1::WorkerResult WorkerJob::Run(const v1::WorkerRequest& request, double timeout_s,
                                const std::function<void(const v1::WorkerStatus&)>& on_status,
                                const std::atomic<bool>* cancel) const {
  absl::StatusOr<v1::WorkerResult> result =
      RunWorker(Launch(timeout_s), request, on_status, cancel);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *result;
}

std::string WorkerJob::ReadLog() const {
  absl::StatusOr<std::string> log = ReadFile(log_path());
  return log.ok() ? *log : "";
}

std::string ReadBytes(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  INFO(path);
  REQUIRE(bytes.ok());
  return *bytes;
}

std::vector<float> ReadFloats(const std::string& path) {
  std::string bytes = ReadBytes(path);
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

std::string GeneratedInput(const v1::Definition& def, const v1::Workload& workload, int index,
                           uint64_t seed) {
  const v1::TensorSpec& spec = def.inputs(index);
  absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, spec, workload);
  REQUIRE(shape.ok());
  std::string bytes(static_cast<size_t>(DTypeStorageBytes(spec.dtype(), NumElements(*shape))),
                    '\0');
  REQUIRE(GenerateInput(spec, workload.inputs(index), *shape, seed, index, "", bytes.data()).ok());
  return bytes;
}

}  // namespace kiln::testing
