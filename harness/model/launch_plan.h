// A resolved OpenCL launch: what a launch description (launch_description.h) becomes once its
// names are bound to the definition's calling order. Plain data plus the three pure steps every
// launch takes: read the axis values off the tensors, evaluate the size expressions, and pack the
// kernel arguments.
//
// This header depends on nothing but the C++ standard library and kiln/abi.h, because the same
// text is compiled into two places: kiln (which builds and tests plans) and each OpenCL
// solution's generated launcher (which runs them next to the Level Zero calls). Errors are
// returned as false with a message in an Error, never thrown.
//
//   kiln_launch::AxisValues axes;
//   kiln_launch::Error error;
//   if (!kiln_launch::ResolveAxes(plan, args, nargs, &axes, &error)) ... error.text ...
//   kiln_launch::Geometry geometry;
//   kiln_launch::ComputeGeometry(plan, axes, &geometry, &error);
#ifndef KILN_HARNESS_MODEL_LAUNCH_PLAN_H_
#define KILN_HARNESS_MODEL_LAUNCH_PLAN_H_

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kiln/abi.h"

namespace kiln_launch {

// Bumped whenever the layout below changes (it is part of the OpenCL toolchain's cache key).
inline constexpr int kPlanFormatVersion = 1;
inline constexpr int kMaxAxes = 32;
inline constexpr int kMaxDims = 3;
inline constexpr int kMaxExprOps = 64;

// Expressions are postfix programs over int64: operands are pushed, operators pop two.
enum OpCode : int32_t {
  kPushConstant = 0,  // value
  kPushAxis = 1,      // value = axis index into AxisValues
  kAdd = 2,
  kSub = 3,
  kMul = 4,
  kDiv = 5,  // truncating, as C; division by zero is an error
  kMod = 6,
  kNeg = 7,  // pops one
  kMin = 8,
  kMax = 9,
  kCeilDiv = 10,  // ceil_div(a, b) = (a + b - 1) / b for b > 0
  kRoundUp = 11,  // round_up(a, b) = ceil_div(a, b) * b
};

struct Op {
  int32_t code;
  int64_t value;
};

struct Expr {
  const Op* ops;
  int32_t size;
  const char* text;  // the source text, for messages
};

// Where an axis value comes from: dimension `dim` of tensor `tensor` (an index into the entry
// point's args), or `constant` when tensor < 0 (const axes).
struct AxisSource {
  const char* name;
  int32_t tensor;
  int32_t dim;
  int64_t constant;
};

// What the entry point must receive at position i (checked before every launch).
struct TensorSignature {
  const char* name;
  int32_t dtype;  // kiln_dtype
  int32_t ndim;   // 0: a scalar, passed in host memory
};

enum ArgKind : int32_t {
  kBuffer = 0,      // tensor's device pointer (a __global pointer parameter)
  kScalar = 1,      // a scalar input's value, its dtype's size, copied from host memory
  kValue = 2,       // an integer expression, `bytes` wide (4: int/uint, 8: long/ulong)
  kLocalBytes = 3,  // a __local buffer of `expr` bytes
};

struct ArgBinding {
  int32_t kind;
  int32_t tensor;     // kBuffer, kScalar: index into args
  int32_t bytes;      // kValue: 4 or 8
  int32_t is_signed;  // kValue: the OpenCL type is signed (int, long)
  Expr expr;          // kValue, kLocalBytes
};

struct Plan {
  int32_t format_version;
  const char* kernel_name;
  const TensorSignature* tensors;
  int32_t num_tensors;
  const AxisSource* axes;
  int32_t num_axes;
  const ArgBinding* args;
  int32_t num_args;
  int32_t dims;  // 1..3
  Expr global[kMaxDims];
  int32_t has_local;  // 0: the device picks the group size
  Expr local[kMaxDims];
};

struct Error {
  char text[256] = {};
};

struct AxisValues {
  int64_t value[kMaxAxes] = {};
};

// One kernel argument as zeKernelSetArgumentValue takes it: `size` bytes at `value`, or a
// __local buffer of `size` bytes when value is null.
struct KernelArg {
  uint64_t size = 0;
  const void* value = nullptr;
  unsigned char storage[8] = {};
};

struct Geometry {
  uint32_t dims = 1;
  uint64_t global[kMaxDims] = {1, 1, 1};
  uint32_t group_size[kMaxDims] = {1, 1, 1};   // zero when has_local is 0: the device picks
  uint32_t group_count[kMaxDims] = {1, 1, 1};  // valid only when group_size is set
};

template <typename... T>
inline bool Fail(Error* error, const char* format, T... values) {
  if (error != nullptr) std::snprintf(error->text, sizeof error->text, format, values...);
  return false;
}

// Evaluates `expr`; overflow, division by zero, a malformed program or an axis index out of
// range are errors naming the expression.
inline bool Evaluate(const Expr& expr, const AxisValues& axes, int32_t num_axes, int64_t* out,
                     Error* error) {
  int64_t stack[kMaxExprOps];
  int depth = 0;
  for (int32_t i = 0; i < expr.size; ++i) {
    const Op& op = expr.ops[i];
    if (op.code == kPushConstant || op.code == kPushAxis) {
      if (depth >= kMaxExprOps) return Fail(error, "'%s': expression too deep", expr.text);
      if (op.code == kPushAxis && (op.value < 0 || op.value >= num_axes)) {
        return Fail(error, "'%s': axis index %lld out of range", expr.text,
                    static_cast<long long>(op.value));
      }
      stack[depth++] = op.code == kPushConstant ? op.value : axes.value[op.value];
      continue;
    }
    if (op.code == kNeg) {
      if (depth < 1) return Fail(error, "'%s': malformed expression", expr.text);
      if (__builtin_sub_overflow(int64_t{0}, stack[depth - 1], &stack[depth - 1])) {
        return Fail(error, "'%s': integer overflow", expr.text);
      }
      continue;
    }
    if (depth < 2) return Fail(error, "'%s': malformed expression", expr.text);
    int64_t b = stack[--depth];
    int64_t a = stack[depth - 1];
    int64_t r = 0;
    bool overflow = false;
    switch (op.code) {
      case kAdd:
        overflow = __builtin_add_overflow(a, b, &r);
        break;
      case kSub:
        overflow = __builtin_sub_overflow(a, b, &r);
        break;
      case kMul:
        overflow = __builtin_mul_overflow(a, b, &r);
        break;
      case kMin:
        r = a < b ? a : b;
        break;
      case kMax:
        r = a > b ? a : b;
        break;
      case kDiv:
      case kMod:
        if (b == 0) return Fail(error, "'%s': division by zero", expr.text);
        if (a == INT64_MIN && b == -1) return Fail(error, "'%s': integer overflow", expr.text);
        r = op.code == kDiv ? a / b : a % b;
        break;
      case kCeilDiv:
      case kRoundUp:
        if (b <= 0) {
          return Fail(error, "'%s': ceil_div/round_up by %lld (must be positive)", expr.text,
                      static_cast<long long>(b));
        }
        overflow = __builtin_add_overflow(a, b - 1, &r);
        r = r / b - (r % b < 0 ? 1 : 0);  // floor, so that ceil_div is right for negative a too
        if (op.code == kRoundUp) overflow = overflow || __builtin_mul_overflow(r, b, &r);
        break;
      default:
        return Fail(error, "'%s': unknown operation %d", expr.text, static_cast<int>(op.code));
    }
    if (overflow) return Fail(error, "'%s': integer overflow", expr.text);
    stack[depth - 1] = r;
  }
  if (depth != 1) return Fail(error, "'%s': malformed expression", expr.text);
  *out = stack[0];
  return true;
}

// Checks the entry point's arguments against the plan's signature and reads every axis value.
// An axis found in several tensors must have the same extent in each.
inline bool ResolveAxes(const Plan& plan, const kiln_tensor* args, int32_t nargs, AxisValues* axes,
                        Error* error) {
  if (plan.format_version != kPlanFormatVersion) {
    return Fail(error, "launch plan format %d, expected %d", static_cast<int>(plan.format_version),
                kPlanFormatVersion);
  }
  if (nargs != plan.num_tensors) {
    return Fail(error, "the entry point received %d arguments, the launch was built for %d",
                static_cast<int>(nargs), static_cast<int>(plan.num_tensors));
  }
  if (plan.num_axes > kMaxAxes) return Fail(error, "too many axes (%d)", plan.num_axes);
  for (int32_t i = 0; i < nargs; ++i) {
    const TensorSignature& sig = plan.tensors[i];
    if (args[i].dtype != sig.dtype || args[i].ndim != sig.ndim) {
      return Fail(error,
                  "argument %d ('%s') has dtype %d and %d dimensions; the launch was built "
                  "for dtype %d and %d",
                  static_cast<int>(i), sig.name, static_cast<int>(args[i].dtype),
                  static_cast<int>(args[i].ndim), static_cast<int>(sig.dtype),
                  static_cast<int>(sig.ndim));
    }
  }
  for (int32_t a = 0; a < plan.num_axes; ++a) {
    const AxisSource& src = plan.axes[a];
    if (src.tensor < 0) {
      axes->value[a] = src.constant;
      continue;
    }
    if (src.tensor >= nargs || src.dim < 0 || src.dim >= args[src.tensor].ndim) {
      return Fail(error, "axis '%s': tensor %d has no dimension %d", src.name,
                  static_cast<int>(src.tensor), static_cast<int>(src.dim));
    }
    axes->value[a] = args[src.tensor].shape[src.dim];
  }
  return true;
}

// Global sizes, and group size and count when the plan fixes the local size. The global size of
// each dimension is rounded up to a whole number of groups (kernels guard their tail).
inline bool ComputeGeometry(const Plan& plan, const AxisValues& axes, Geometry* geometry,
                            Error* error) {
  if (plan.dims < 1 || plan.dims > kMaxDims) return Fail(error, "%d dimensions", plan.dims);
  geometry->dims = static_cast<uint32_t>(plan.dims);
  for (int32_t d = 0; d < plan.dims; ++d) {
    int64_t global = 0;
    if (!Evaluate(plan.global[d], axes, plan.num_axes, &global, error)) return false;
    if (global < 1) {
      return Fail(error, "global[%d] = '%s' is %lld; it must be at least 1", static_cast<int>(d),
                  plan.global[d].text, static_cast<long long>(global));
    }
    geometry->global[d] = static_cast<uint64_t>(global);
    geometry->group_size[d] = 0;
    if (!plan.has_local) continue;
    int64_t local = 0;
    if (!Evaluate(plan.local[d], axes, plan.num_axes, &local, error)) return false;
    if (local < 1 || local > UINT32_MAX) {
      return Fail(error, "local[%d] = '%s' is %lld; it must be in 1..2^32-1", static_cast<int>(d),
                  plan.local[d].text, static_cast<long long>(local));
    }
    uint64_t count = (static_cast<uint64_t>(global) + local - 1) / static_cast<uint64_t>(local);
    if (count > UINT32_MAX) {
      return Fail(error, "global[%d] / local[%d] = %llu groups, more than 2^32-1",
                  static_cast<int>(d), static_cast<int>(d), static_cast<unsigned long long>(count));
    }
    geometry->group_size[d] = static_cast<uint32_t>(local);
    geometry->group_count[d] = static_cast<uint32_t>(count);
  }
  return true;
}

// Bytes of one element of a scalar of `dtype` as a kernel argument; 0 when it cannot be one.
inline int32_t ScalarArgBytes(int32_t dtype) {
  switch (dtype) {
    case KILN_FLOAT32:
    case KILN_INT32:
      return 4;
    case KILN_FLOAT64:
    case KILN_INT64:
      return 8;
    case KILN_FLOAT16:
    case KILN_BFLOAT16:
    case KILN_INT16:
      return 2;
    case KILN_INT8:
    case KILN_BOOL:
    case KILN_FLOAT8_E4M3FN:
    case KILN_FLOAT8_E5M2:
      return 1;
    default:
      return 0;
  }
}

// Fills out[0..plan.num_args) with the kernel's arguments. The KernelArgs point into args (for
// buffers) or into their own storage, so they stay valid while args and out do.
inline bool BindArguments(const Plan& plan, const kiln_tensor* args, const AxisValues& axes,
                          KernelArg* out, Error* error) {
  for (int32_t i = 0; i < plan.num_args; ++i) {
    const ArgBinding& b = plan.args[i];
    KernelArg& arg = out[i];
    arg = KernelArg{};
    if (b.kind == kBuffer || b.kind == kScalar) {
      if (b.tensor < 0 || b.tensor >= plan.num_tensors) {
        return Fail(error, "args[%d]: tensor %d out of range", static_cast<int>(i), b.tensor);
      }
      const kiln_tensor& t = args[b.tensor];
      if (b.kind == kBuffer) {
        arg.size = sizeof(void*);
        arg.value = &t.data;
        continue;
      }
      int32_t bytes = ScalarArgBytes(t.dtype);
      if (bytes == 0 || t.data == nullptr) {
        return Fail(error, "args[%d]: scalar '%s' cannot be passed by value", static_cast<int>(i),
                    plan.tensors[b.tensor].name);
      }
      std::memcpy(arg.storage, t.data, static_cast<size_t>(bytes));
      arg.size = static_cast<uint64_t>(bytes);
      arg.value = arg.storage;
      continue;
    }
    int64_t v = 0;
    if (!Evaluate(b.expr, axes, plan.num_axes, &v, error)) return false;
    if (b.kind == kLocalBytes) {
      if (v < 1)
        return Fail(error, "args[%d]: local buffer of %lld bytes", static_cast<int>(i),
                    static_cast<long long>(v));
      arg.size = static_cast<uint64_t>(v);
      arg.value = nullptr;
      continue;
    }
    if (b.kind != kValue || (b.bytes != 4 && b.bytes != 8)) {
      return Fail(error, "args[%d]: unknown binding", static_cast<int>(i));
    }
    if (b.bytes == 4) {
      bool fits = b.is_signed ? (v >= INT32_MIN && v <= INT32_MAX) : (v >= 0 && v <= UINT32_MAX);
      if (!fits) {
        return Fail(error, "args[%d] = '%s' is %lld, which does not fit its 32-bit type",
                    static_cast<int>(i), b.expr.text, static_cast<long long>(v));
      }
      uint32_t narrow = static_cast<uint32_t>(v);
      std::memcpy(arg.storage, &narrow, 4);
    } else {
      if (!b.is_signed && v < 0) {
        return Fail(error, "args[%d] = '%s' is negative but its type is unsigned",
                    static_cast<int>(i), b.expr.text);
      }
      std::memcpy(arg.storage, &v, 8);
    }
    arg.size = static_cast<uint64_t>(b.bytes);
    arg.value = arg.storage;
  }
  return true;
}

}  // namespace kiln_launch

#endif  // KILN_HARNESS_MODEL_LAUNCH_PLAN_H_
