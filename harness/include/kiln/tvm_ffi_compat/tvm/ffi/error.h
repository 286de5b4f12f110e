// kiln's TVM-FFI compatibility: errors and checks.
//
//   TVM_FFI_THROW(ValueError) << "x must be 2-D, got " << x.ndim();
//   TVM_FFI_ICHECK(x.IsContiguous()) << "x must be contiguous";
//   TVM_FFI_ICHECK_EQ(x.size(1), weight.size(0)) << "hidden sizes differ";
//
// Each throws tvm::ffi::Error (a std::exception) carrying the kind, the message and the file and
// line of the check. The entry that TVM_FFI_DLL_EXPORT_TYPED_FUNC defines catches it, prints
// "<kind>: <message>" with the place to stderr (kiln's worker log) and returns non-zero, which
// kiln reports as RUNTIME_ERROR.
#ifndef TVM_FFI_ERROR_H_
#define TVM_FFI_ERROR_H_

#include <tvm/ffi/c_api.h>

#include <exception>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {

class Error : public std::exception {
 public:
  Error(std::string kind, std::string message, std::string backtrace = "")
      : kind_(std::move(kind)), message_(std::move(message)), backtrace_(std::move(backtrace)) {
    what_ = kind_ + ": " + message_;
  }

  const std::string& kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // "file:line" of the throw when it came from TVM_FFI_THROW or a check (no stack trace).
  const std::string& backtrace() const { return backtrace_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string kind_;
  std::string message_;
  std::string backtrace_;
  std::string what_;
};

namespace details {

// The streamed message of a throw or failed check.
class ErrorMessage {
 public:
  template <typename T>
  ErrorMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  ErrorMessage& operator<<(std::ostream& (*manipulator)(std::ostream&)) {
    stream_ << manipulator;
    return *this;
  }
  std::string str() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
};

// Where and what kind; `thrower & message` throws. The operator is [[noreturn]], so a function
// that ends in TVM_FFI_THROW needs no return statement after it.
struct ErrorThrower {
  const char* kind;
  const char* file;
  int line;
};

[[noreturn]] inline void operator&(const ErrorThrower& where, const ErrorMessage& message) {
  throw Error(where.kind, message.str(),
              std::string(where.file) + ":" + std::to_string(where.line));
}

// Formats " (x vs. y)" when the comparison fails, else returns null. Comparisons of mixed
// signedness are the caller's (the checks compare what the solution wrote).
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#define KILN_TVM_FFI_DEFINE_CHECK(name, op)                                 \
  template <typename X, typename Y>                                         \
  inline std::unique_ptr<std::string> Check##name(const X& x, const Y& y) { \
    if (x op y) return nullptr;                                             \
    std::ostringstream os;                                                  \
    os << " (" << x << " vs. " << y << ")";                                 \
    return std::make_unique<std::string>(os.str());                         \
  }
KILN_TVM_FFI_DEFINE_CHECK(_EQ, ==)
KILN_TVM_FFI_DEFINE_CHECK(_NE, !=)
KILN_TVM_FFI_DEFINE_CHECK(_LT, <)
KILN_TVM_FFI_DEFINE_CHECK(_LE, <=)
KILN_TVM_FFI_DEFINE_CHECK(_GT, >)
KILN_TVM_FFI_DEFINE_CHECK(_GE, >=)
#undef KILN_TVM_FFI_DEFINE_CHECK
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <typename T>
T CheckNotNull(T&& value, const char* expression, const char* file, int line) {
  if (value == nullptr) {
    ErrorThrower{"InternalError", file, line} & ErrorMessage() << "Check not null: " << expression;
  }
  return std::forward<T>(value);
}

}  // namespace details
}  // namespace ffi
}  // namespace tvm

#pragma GCC visibility pop

// Throws tvm::ffi::Error of kind ErrorKind (ValueError, TypeError, RuntimeError, ...); stream the
// message into it.
#define TVM_FFI_THROW(ErrorKind)                                      \
  ::tvm::ffi::details::ErrorThrower{#ErrorKind, __FILE__, __LINE__} & \
      ::tvm::ffi::details::ErrorMessage()

#define TVM_FFI_LOG_AND_THROW(ErrorKind) TVM_FFI_THROW(ErrorKind)

// `if (ok) {} else` keeps a following `else` of the caller bound to the caller's own `if`.
#define TVM_FFI_CHECK(cond, ErrorKind) \
  if (cond) {                          \
  } else                               \
    TVM_FFI_THROW(ErrorKind) << "Check failed: (" #cond ") is false: "

#define TVM_FFI_ICHECK(x) TVM_FFI_CHECK(x, InternalError)

#define KILN_TVM_FFI_ICHECK_BINARY(name, op, x, y)                                  \
  if (auto kiln_tvm_ffi_check_failure = ::tvm::ffi::details::Check##name((x), (y)); \
      !kiln_tvm_ffi_check_failure) {                                                \
  } else                                                                            \
    TVM_FFI_THROW(InternalError) << "Check failed: " #x " " #op " " #y              \
                                 << *kiln_tvm_ffi_check_failure << ": "

#define TVM_FFI_ICHECK_EQ(x, y) KILN_TVM_FFI_ICHECK_BINARY(_EQ, ==, x, y)
#define TVM_FFI_ICHECK_NE(x, y) KILN_TVM_FFI_ICHECK_BINARY(_NE, !=, x, y)
#define TVM_FFI_ICHECK_LT(x, y) KILN_TVM_FFI_ICHECK_BINARY(_LT, <, x, y)
#define TVM_FFI_ICHECK_LE(x, y) KILN_TVM_FFI_ICHECK_BINARY(_LE, <=, x, y)
#define TVM_FFI_ICHECK_GT(x, y) KILN_TVM_FFI_ICHECK_BINARY(_GT, >, x, y)
#define TVM_FFI_ICHECK_GE(x, y) KILN_TVM_FFI_ICHECK_BINARY(_GE, >=, x, y)
#define TVM_FFI_ICHECK_NOTNULL(x) ::tvm::ffi::details::CheckNotNull((x), #x, __FILE__, __LINE__)

#endif  // TVM_FFI_ERROR_H_
