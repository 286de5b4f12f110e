// kiln's TVM-FFI compatibility: Optional<T>, with std::optional's interface (has_value(),
// value(), value_or(), *, ->, comparison with std::nullopt).
//
// kiln passes every argument of the definition, so an Optional<TensorView> or Optional<int64_t>
// parameter of an exported function always holds a value.
#ifndef TVM_FFI_OPTIONAL_H_
#define TVM_FFI_OPTIONAL_H_

#include <tvm/ffi/c_api.h>

#include <optional>
#include <utility>

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {

template <typename T>
class Optional : public std::optional<T> {
 public:
  using std::optional<T>::optional;
  using std::optional<T>::operator=;
  bool defined() const { return this->has_value(); }
};

}  // namespace ffi
}  // namespace tvm

#pragma GCC visibility pop

#endif  // TVM_FFI_OPTIONAL_H_
