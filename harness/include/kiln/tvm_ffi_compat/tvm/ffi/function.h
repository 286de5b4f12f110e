// kiln's TVM-FFI compatibility: TVM_FFI_DLL_EXPORT_TYPED_FUNC.
//
//   void RmsNorm(tvm::ffi::TensorView x, tvm::ffi::TensorView w, tvm::ffi::TensorView out) {...}
//   TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, RmsNorm);     // spec.entry_point "kernel.cu::run"
//
// TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, function) defines the kiln entry point
//
//   extern "C" int name(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx);
//
// (kiln/abi.h), so spec.entry_point "file::name" resolves exactly as flashinfer-bench resolves
// it for a TVM-FFI module (the export name, not the C++ function's name). The entry
//   - checks that nargs equals the function's parameter count (the definition's inputs, then
//     its outputs);
//   - converts each kiln_tensor to the parameter's type, deduced from `function`: TensorView or
//     Tensor (a view; dtype per DLPack, device {kDLCUDA, ordinal} on the CUDA backend and
//     {kDLCPU, 0} on the host backend), Optional<...> of those, or an arithmetic type (int64_t,
//     int, double, float, bool, ...) read from a scalar (ndim 0) argument;
//   - makes TVMFFIEnvGetStream return ctx->stream for the call's device while `function` runs;
//   - returns 0, or, when the function throws (TVM_FFI_THROW, a failed TVM_FFI_ICHECK, any
//     std::exception), prints the error to stderr (the worker log) and returns 1; a mismatch of
//     the arguments returns 2 after printing what was expected and what came.
// `function` returns void (destination-passing style): kiln allocates the outputs.
#ifndef TVM_FFI_FUNCTION_H_
#define TVM_FFI_FUNCTION_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/optional.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../../../abi.h"

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {
namespace kiln_compat {

// What every argument of one call shares.
struct CallContext {
  DLDevice device;  // of the tensor arguments
};

inline DLDevice DeviceOf(const kiln_context* ctx) {
  if (ctx != nullptr && ctx->backend == KILN_BACKEND_CUDA) {
    const int ordinal = ctx->device != nullptr ? *static_cast<const int*>(ctx->device) : 0;
    return DLDevice{kDLCUDA, ordinal};
  }
  if (ctx != nullptr && ctx->backend == KILN_BACKEND_LEVEL_ZERO) return DLDevice{kDLOneAPI, 0};
  return DLDevice{kDLCPU, 0};
}

// An error in what kiln passed, reported without a place (it is not the solution's line).
[[noreturn]] inline void ArgumentError(const char* kind, const std::string& message) {
  throw Error(kind, message);
}

// kiln's element types as DLPack data types.
inline DLDataType ToDLDataType(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_FLOAT32:
      return DLDataType{kDLFloat, 32, 1};
    case KILN_FLOAT16:
      return DLDataType{kDLFloat, 16, 1};
    case KILN_BFLOAT16:
      return DLDataType{kDLBfloat, 16, 1};
    case KILN_FLOAT8_E4M3FN:
      return DLDataType{kDLFloat8_e4m3fn, 8, 1};
    case KILN_FLOAT8_E5M2:
      return DLDataType{kDLFloat8_e5m2, 8, 1};
    case KILN_FLOAT4_E2M1:
      return DLDataType{kDLFloat4_e2m1fn, 4, 1};
    case KILN_INT64:
      return DLDataType{kDLInt, 64, 1};
    case KILN_INT32:
      return DLDataType{kDLInt, 32, 1};
    case KILN_INT16:
      return DLDataType{kDLInt, 16, 1};
    case KILN_INT8:
      return DLDataType{kDLInt, 8, 1};
    case KILN_BOOL:
      return DLDataType{kDLBool, 8, 1};
    case KILN_FLOAT64:
      return DLDataType{kDLFloat, 64, 1};
  }
  ArgumentError("TypeError",
                "kiln dtype " + std::to_string(static_cast<int>(dtype)) + " has no DLPack type");
}

// A view of argument `t`; scalars (ndim 0) are host values whatever the backend.
inline DLTensor ToDLTensor(const kiln_tensor& t, const CallContext& call) {
  DLTensor dl{};
  dl.data = t.data;
  dl.device = t.ndim == 0 ? DLDevice{kDLCPU, 0} : call.device;
  dl.ndim = t.ndim;
  dl.dtype = ToDLDataType(t.dtype);
  dl.shape = const_cast<int64_t*>(t.shape);
  dl.strides = const_cast<int64_t*>(t.strides);
  dl.byte_offset = 0;
  return dl;
}

inline uint16_t HalfBits(const void* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return bits;
}

inline double Float16ToDouble(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double value;
  if (exponent == 0) {
    value = mantissa * (1.0 / (1 << 24));
  } else if (exponent == 31) {
    value = mantissa ? __builtin_nan("") : __builtin_inf();
  } else {
    value = (1.0 + mantissa / 1024.0) * static_cast<double>(int64_t{1} << exponent) / (1 << 15);
  }
  return (h & 0x8000) ? -value : value;
}

inline double Bfloat16ToDouble(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
T Load(const void* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Reads scalar argument `index` as a `Target` (an arithmetic type). Integral and bool targets
// take integer or bool scalars; floating targets take any numeric scalar.
template <typename Target>
Target ReadScalar(const kiln_tensor& t, int index) {
  if (t.ndim != 0) {
    ArgumentError("TypeError", "argument " + std::to_string(index) + " is a tensor of " +
                                   std::to_string(t.ndim) + " dimensions, but parameter " +
                                   std::to_string(index) +
                                   " of the function is a scalar (take it as TensorView)");
  }
  if (t.data == nullptr) {
    ArgumentError("ValueError", "scalar argument " + std::to_string(index) + " has no value");
  }
  const bool integral_target = std::is_integral<Target>::value;
  switch (t.dtype) {
    case KILN_INT64:
      return static_cast<Target>(Load<int64_t>(t.data));
    case KILN_INT32:
      return static_cast<Target>(Load<int32_t>(t.data));
    case KILN_INT16:
      return static_cast<Target>(Load<int16_t>(t.data));
    case KILN_INT8:
      return static_cast<Target>(Load<int8_t>(t.data));
    case KILN_BOOL:
      return static_cast<Target>(Load<uint8_t>(t.data) != 0);
    default:
      break;
  }
  if (!integral_target) {
    switch (t.dtype) {
      case KILN_FLOAT64:
        return static_cast<Target>(Load<double>(t.data));
      case KILN_FLOAT32:
        return static_cast<Target>(Load<float>(t.data));
      case KILN_FLOAT16:
        return static_cast<Target>(Float16ToDouble(HalfBits(t.data)));
      case KILN_BFLOAT16:
        return static_cast<Target>(Bfloat16ToDouble(HalfBits(t.data)));
      default:
        break;
    }
  }
  ArgumentError("TypeError",
                "scalar argument " + std::to_string(index) + " of type " +
                    DLDataTypeToString(ToDLDataType(t.dtype)) + " does not convert to parameter " +
                    std::to_string(index) + " of the function (" +
                    (integral_target ? "an integer" : "a floating-point number") + ")");
}

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<Optional<T>> : std::true_type {};

template <typename T>
struct DependentFalse : std::false_type {};

// The C++ type of one parameter, from a kiln_tensor.
template <typename T>
struct ArgConverter {
  static T Convert(const kiln_tensor& t, const CallContext& call, int index) {
    if constexpr (std::is_same<T, TensorView>::value) {
      const DLTensor dl = ToDLTensor(t, call);
      return TensorView(&dl);
    } else if constexpr (std::is_same<T, Tensor>::value) {
      return Tensor::FromView(ToDLTensor(t, call));
    } else if constexpr (std::is_same<T, DLTensor*>::value ||
                         std::is_same<T, const DLTensor*>::value) {
      static_assert(DependentFalse<T>::value,
                    "take tensors as tvm::ffi::TensorView, not DLTensor*: kiln's views live only "
                    "for the call");
    } else if constexpr (IsOptional<T>::value) {
      return T(ArgConverter<typename T::value_type>::Convert(t, call, index));
    } else if constexpr (std::is_arithmetic<T>::value) {
      return ReadScalar<T>(t, index);
    } else {
      static_assert(DependentFalse<T>::value,
                    "kiln's TVM-FFI compatibility passes parameters of type TensorView, Tensor, "
                    "Optional<...> of those, or an arithmetic scalar (int64_t, int, double, "
                    "float, bool); this parameter type is not supported");
    }
  }
};

// Names of parameter types, for the arity message.
template <typename T>
std::string TypeName() {
  if constexpr (std::is_same<T, TensorView>::value)
    return "TensorView";
  else if constexpr (std::is_same<T, Tensor>::value)
    return "Tensor";
  else if constexpr (IsOptional<T>::value)
    return "Optional<" + TypeName<typename T::value_type>() + ">";
  else if constexpr (std::is_same<T, bool>::value)
    return "bool";
  else if constexpr (std::is_floating_point<T>::value)
    return sizeof(T) == 8 ? "double" : "float";
  else if constexpr (std::is_integral<T>::value)
    return "int" + std::to_string(8 * sizeof(T)) + "_t";
  else
    return "?";
}

template <typename T>
using Param = std::remove_cv_t<std::remove_reference_t<T>>;

// The signature of a function, function pointer or callable object.
template <typename F>
struct Signature : Signature<decltype(&F::operator())> {};
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
};
template <typename R, typename... A>
struct Signature<R (*)(A...) noexcept> : Signature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...)> : Signature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const> : Signature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) noexcept> : Signature<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const noexcept> : Signature<R (*)(A...)> {};

template <typename... A>
std::string ParameterList(std::tuple<A...>*) {
  std::string out;
  ((out += (out.empty() ? "" : ", ") + TypeName<Param<A>>()), ...);
  return out;
}

template <typename F, typename... A, size_t... I>
void Invoke(F& function, const kiln_tensor* args, const CallContext& call, std::tuple<A...>*,
            std::index_sequence<I...>) {
  // Braces: the arguments convert left to right, so an error names the first bad one.
  std::tuple<Param<A>...> converted{
      ArgConverter<Param<A>>::Convert(args[I], call, static_cast<int>(I))...};
  function(std::forward<A>(std::get<I>(converted))...);
}

// Makes TVMFFIEnvGetStream(device) return `stream` until the scope ends.
class StreamScope {
 public:
  StreamScope(DLDevice device, TVMFFIStreamHandle stream) : device_(device) {
    set_ = TVMFFIEnvSetStream(device.device_type, device.device_id, stream, &previous_) == 0;
  }
  ~StreamScope() {
    if (set_) TVMFFIEnvSetStream(device_.device_type, device_.device_id, previous_, nullptr);
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  DLDevice device_;
  TVMFFIStreamHandle previous_ = nullptr;
  bool set_ = false;
};

inline void Report(const char* name, const std::string& what) {
  std::fprintf(stderr, "kiln: TVM-FFI function '%s' failed: %s\n", name, what.c_str());
  std::fflush(stderr);
}

// The body of every entry TVM_FFI_DLL_EXPORT_TYPED_FUNC defines.
template <typename F>
int CallTyped(const char* name, F& function, const kiln_tensor* args, int32_t nargs,
              const kiln_context* ctx) {
  using Sig = Signature<std::decay_t<F>>;
  using Args = typename Sig::Args;
  constexpr size_t kArity = std::tuple_size<Args>::value;
  static_assert(std::is_void<typename Sig::Return>::value,
                "kiln runs destination-passing-style solutions: the exported function must "
                "return void and write its results into the output TensorViews");
  if (nargs > 0 && args == nullptr) {
    std::fprintf(stderr, "kiln: TVM-FFI function '%s' called with %d arguments and no array\n",
                 name, static_cast<int>(nargs));
    std::fflush(stderr);
    return 2;
  }
  if (nargs != static_cast<int32_t>(kArity)) {
    std::fprintf(stderr,
                 "kiln: TVM-FFI function '%s' takes %zu parameter%s (%s), but the definition "
                 "passes %d argument%s (its inputs, then its outputs)\n",
                 name, kArity, kArity == 1 ? "" : "s",
                 ParameterList(static_cast<Args*>(nullptr)).c_str(), static_cast<int>(nargs),
                 nargs == 1 ? "" : "s");
    std::fflush(stderr);
    return 2;
  }
  try {
    const CallContext call{DeviceOf(ctx)};
    StreamScope stream(call.device, ctx != nullptr ? ctx->stream : nullptr);
    Invoke(function, args, call, static_cast<Args*>(nullptr), std::make_index_sequence<kArity>{});
    return 0;
  } catch (const Error& e) {
    Report(name,
           e.backtrace().empty() ? e.what() : e.what() + std::string(" [") + e.backtrace() + "]");
  } catch (const std::exception& e) {
    Report(name, e.what());
  } catch (...) {
    Report(name, "an exception that is not a std::exception");
  }
  return 1;
}

}  // namespace kiln_compat
}  // namespace ffi
}  // namespace tvm

#pragma GCC visibility pop

// Defines the kiln entry point `ExportName` (extern "C", exported) calling `Function`. The
// function is captured under a separate name first, so ExportName may equal Function's own name
// (TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run)): the entry then overloads it with C linkage.
#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                    \
  static auto kiln_tvm_ffi_function_##ExportName = (Function);                                 \
  extern "C" __attribute__((visibility("default"))) int ExportName(                            \
      const kiln_tensor* kiln_args, int32_t kiln_nargs, const kiln_context* kiln_ctx) {        \
    return ::tvm::ffi::kiln_compat::CallTyped(#ExportName, kiln_tvm_ffi_function_##ExportName, \
                                              kiln_args, kiln_nargs, kiln_ctx);                \
  }

#endif  // TVM_FFI_FUNCTION_H_
