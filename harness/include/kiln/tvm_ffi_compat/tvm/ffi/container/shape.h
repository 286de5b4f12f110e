// kiln's TVM-FFI compatibility: ShapeView (a non-owning list of int64 extents, what
// TensorView::shape() and strides() return) and Shape (an owning one).
//
//   ShapeView s = x.shape();
//   int64_t rows = s[0], cols = s.back(), n = s.Product();
//   for (int64_t extent : s) ...
#ifndef TVM_FFI_CONTAINER_SHAPE_H_
#define TVM_FFI_CONTAINER_SHAPE_H_

#include <tvm/ffi/error.h>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {

class ShapeView {
 public:
  ShapeView() = default;
  ShapeView(const int64_t* data, size_t size) : data_(data), size_(size) {}

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data_[i]; }
  // Bounds-checked; throws IndexError.
  int64_t at(size_t i) const {
    if (i >= size_) {
      TVM_FFI_THROW(IndexError) << "index " << i << " out of range for a shape of " << size_
                                << " dimensions";
    }
    return data_[i];
  }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(size_ - 1); }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  // The number of elements: the product of the extents (1 for no dimensions).
  int64_t Product() const {
    int64_t product = 1;
    for (size_t i = 0; i < size_; ++i) product *= data_[i];
    return product;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> values) : values_(values) {}
  Shape(std::vector<int64_t> values) : values_(std::move(values)) {}  // NOLINT
  Shape(ShapeView view) : values_(view.begin(), view.end()) {}        // NOLINT
  template <typename It>
  Shape(It first, It last) : values_(first, last) {}

  operator ShapeView() const { return ShapeView(values_.data(), values_.size()); }  // NOLINT
  const int64_t* data() const { return values_.data(); }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  int64_t operator[](size_t i) const { return values_[i]; }
  int64_t at(size_t i) const { return ShapeView(*this).at(i); }
  int64_t front() const { return ShapeView(*this).front(); }
  int64_t back() const { return ShapeView(*this).back(); }
  const int64_t* begin() const { return values_.data(); }
  const int64_t* end() const { return values_.data() + values_.size(); }
  int64_t Product() const { return ShapeView(*this).Product(); }

 private:
  std::vector<int64_t> values_;
};

// Shapes compare through ShapeView (a Shape converts to one).
inline bool operator==(ShapeView a, ShapeView b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
inline bool operator!=(ShapeView a, ShapeView b) { return !(a == b); }

inline std::ostream& operator<<(std::ostream& os, ShapeView shape) {
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << "]";
}
inline std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  return os << ShapeView(shape);
}

namespace details {
// Compact row-major strides (in elements) of `shape`, written to `strides`.
inline void FillStridesFromShape(ShapeView shape, int64_t* strides) {
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
}
}  // namespace details

}  // namespace ffi
}  // namespace tvm

#pragma GCC visibility pop

#endif  // TVM_FFI_CONTAINER_SHAPE_H_
