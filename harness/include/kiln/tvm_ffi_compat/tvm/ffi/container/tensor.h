// kiln's TVM-FFI compatibility: TensorView and Tensor.
//
//   void run(tvm::ffi::TensorView x, tvm::ffi::TensorView out) {
//     TVM_FFI_ICHECK_EQ(x.ndim(), 2);
//     auto* p = static_cast<float*>(x.data_ptr());
//     int64_t rows = x.size(0), cols = x.size(-1);
//     ...
//   }
//
// kiln hands every argument of an exported function over as a view of its own kiln_tensor:
// data is device memory on the CUDA backend (device {kDLCUDA, ordinal}) and host memory on the
// host backend ({kDLCPU, 0}); strides are given (compact row-major, in elements); byte_offset is
// 0. Scalars (ndim 0) are host values. A Tensor passed by kiln does not own its memory; one made
// with Tensor::FromNDAlloc owns what its allocator gave it.
#ifndef TVM_FFI_CONTAINER_TENSOR_H_
#define TVM_FFI_CONTAINER_TENSOR_H_

#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {

// True when the strides are compact row-major (extents of 1 may carry any stride) or absent.
inline bool IsContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline bool IsAligned(const DLTensor& t, size_t alignment) {
  const auto address =
      reinterpret_cast<uintptr_t>(static_cast<const char*>(t.data) + t.byte_offset);
  return alignment == 0 || address % alignment == 0;
}

// Bytes of `numel` packed elements (sub-byte types round up to whole bytes).
inline size_t GetDataSize(size_t numel, DLDataType dtype) {
  return (numel * dtype.bits * dtype.lanes + 7) / 8;
}
inline size_t GetDataSize(const DLTensor& t) {
  size_t numel = 1;
  for (int32_t i = 0; i < t.ndim; ++i) numel *= static_cast<size_t>(t.shape[i]);
  return GetDataSize(numel, t.dtype);
}

namespace details {
// The accessors TensorView and Tensor share, over a DLTensor that `Derived::dl()` returns.
template <typename Derived>
class TensorAccessors {
 public:
  void* data_ptr() const { return t().data; }
  DLDevice device() const { return t().device; }
  int32_t ndim() const { return t().ndim; }
  int32_t dim() const { return t().ndim; }
  DLDataType dtype() const { return t().dtype; }
  ShapeView shape() const { return ShapeView(t().shape, static_cast<size_t>(t().ndim)); }
  ShapeView sizes() const { return shape(); }
  ShapeView strides() const {
    TVM_FFI_ICHECK(t().strides != nullptr || t().ndim == 0) << "the tensor has no strides";
    return ShapeView(t().strides, static_cast<size_t>(t().ndim));
  }
  // Extent of dimension idx; a negative idx counts from the last dimension.
  int64_t size(int64_t idx) const { return t().shape[Dim(idx)]; }
  int64_t stride(int64_t idx) const { return t().strides[Dim(idx)]; }
  int64_t numel() const { return shape().Product(); }
  uint64_t byte_offset() const { return t().byte_offset; }
  bool IsContiguous() const { return ::tvm::ffi::IsContiguous(t()); }
  bool is_contiguous() const { return IsContiguous(); }
  bool IsAligned(size_t alignment) const { return ::tvm::ffi::IsAligned(t(), alignment); }
  const DLTensor* GetDLTensorPtr() const { return &t(); }
  const DLTensor* operator->() const { return &t(); }

 private:
  const DLTensor& t() const { return static_cast<const Derived*>(this)->dl(); }
  int64_t Dim(int64_t idx) const {
    const int64_t dim = idx >= 0 ? idx : t().ndim + idx;
    if (dim < 0 || dim >= t().ndim) {
      TVM_FFI_THROW(IndexError) << "dimension " << idx << " out of range for a tensor of "
                                << t().ndim << " dimensions";
    }
    return dim;
  }
};
}  // namespace details

class TensorView;

// A tensor handle. Copies share the same storage; the last copy of one made by FromNDAlloc
// frees it through the allocator's FreeData.
class Tensor : public details::TensorAccessors<Tensor> {
 public:
  Tensor() = default;

  bool defined() const { return state_ != nullptr; }
  bool has_value() const { return defined(); }
  const DLTensor& dl() const {
    TVM_FFI_ICHECK(state_ != nullptr) << "the Tensor is undefined";
    return state_->tensor;
  }

  // A tensor of `shape` (compact row-major) whose memory `alloc.AllocData(DLTensor*)` provides
  // and `alloc.FreeData(DLTensor*)` returns.
  template <typename Alloc, typename... ExtraArgs>
  static Tensor FromNDAlloc(Alloc alloc, ShapeView shape, DLDataType dtype, DLDevice device,
                            ExtraArgs&&... extra_args) {
    auto state = std::shared_ptr<State>(new State(), [alloc](State* s) mutable {
      if (s->allocated) alloc.FreeData(&s->tensor);
      delete s;
    });
    state->Describe(shape, dtype, device);
    alloc.AllocData(&state->tensor, std::forward<ExtraArgs>(extra_args)...);
    state->allocated = true;
    Tensor out;
    out.state_ = std::move(state);
    return out;
  }

  // A non-owning Tensor over `view` (kiln's arguments; the caller keeps the memory alive).
  static Tensor FromView(const DLTensor& view) {
    auto state = std::make_shared<State>();
    state->tensor = view;
    Tensor out;
    out.state_ = std::move(state);
    return out;
  }

 private:
  struct State {
    DLTensor tensor{};
    std::vector<int64_t> extents;  // shape then strides, for tensors this class laid out
    bool allocated = false;

    void Describe(ShapeView shape, DLDataType dtype, DLDevice device) {
      const size_t n = shape.size();
      extents.assign(shape.begin(), shape.end());
      extents.resize(2 * n);
      details::FillStridesFromShape(shape, extents.data() + n);
      tensor.data = nullptr;
      tensor.device = device;
      tensor.ndim = static_cast<int32_t>(n);
      tensor.dtype = dtype;
      tensor.shape = extents.data();
      tensor.strides = extents.data() + n;
      tensor.byte_offset = 0;
    }
  };
  std::shared_ptr<State> state_;
};

// A non-owning view of a tensor: a copy of its DLTensor. The memory it points to (data, shape,
// strides) must outlive the view; for kiln's arguments that is the duration of the call.
class TensorView : public details::TensorAccessors<TensorView> {
 public:
  TensorView(const DLTensor* tensor) {  // NOLINT(google-explicit-constructor)
    TVM_FFI_ICHECK(tensor != nullptr) << "TensorView of a null DLTensor";
    tensor_ = *tensor;
  }
  TensorView(const Tensor& tensor) : tensor_(tensor.dl()) {}  // NOLINT
  TensorView(Tensor&& tensor) = delete;                       // a view of a temporary would dangle
  TensorView(const TensorView&) = default;
  TensorView& operator=(const TensorView&) = default;
  TensorView& operator=(const Tensor& tensor) {
    tensor_ = tensor.dl();
    return *this;
  }

  const DLTensor& dl() const { return tensor_; }

 private:
  DLTensor tensor_;
};

inline size_t GetDataSize(const TensorView& t) { return GetDataSize(*t.GetDLTensorPtr()); }
inline size_t GetDataSize(const Tensor& t) { return GetDataSize(*t.GetDLTensorPtr()); }

}  // namespace ffi
}  // namespace tvm

#pragma GCC visibility pop

#endif  // TVM_FFI_CONTAINER_TENSOR_H_
