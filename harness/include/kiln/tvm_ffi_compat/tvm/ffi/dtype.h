// kiln's TVM-FFI compatibility: comparing and printing DLDataType and DLDevice.
//
//   TVM_FFI_ICHECK_EQ(x.dtype(), (DLDataType{kDLBfloat, 16, 1}));
//   TVM_FFI_ICHECK(x.dtype() == tvm::ffi::StringToDLDataType("bfloat16"));
//
// Names follow DLPack and torch: float32, bfloat16, float8_e4m3fn, float4_e2m1fn, int64, bool,
// with "x<lanes>" appended for vector types.
#ifndef TVM_FFI_DTYPE_H_
#define TVM_FFI_DTYPE_H_

#include <tvm/ffi/error.h>

#include <cstring>
#include <ostream>
#include <string>

#pragma GCC visibility push(hidden)

namespace tvm {
namespace ffi {
namespace details {

struct NamedDataType {
  const char* name;
  uint8_t code;
  uint8_t bits;
};

inline const NamedDataType* NamedDataTypes(size_t* count) {
  static const NamedDataType kTypes[] = {
      {"float32", kDLFloat, 32},
      {"float16", kDLFloat, 16},
      {"float64", kDLFloat, 64},
      {"bfloat16", kDLBfloat, 16},
      {"float8_e3m4", kDLFloat8_e3m4, 8},
      {"float8_e4m3", kDLFloat8_e4m3, 8},
      {"float8_e4m3b11fnuz", kDLFloat8_e4m3b11fnuz, 8},
      {"float8_e4m3fn", kDLFloat8_e4m3fn, 8},
      {"float8_e4m3fnuz", kDLFloat8_e4m3fnuz, 8},
      {"float8_e5m2", kDLFloat8_e5m2, 8},
      {"float8_e5m2fnuz", kDLFloat8_e5m2fnuz, 8},
      {"float8_e8m0fnu", kDLFloat8_e8m0fnu, 8},
      {"float6_e2m3fn", kDLFloat6_e2m3fn, 6},
      {"float6_e3m2fn", kDLFloat6_e3m2fn, 6},
      {"float4_e2m1fn", kDLFloat4_e2m1fn, 4},
      {"int64", kDLInt, 64},
      {"int32", kDLInt, 32},
      {"int16", kDLInt, 16},
      {"int8", kDLInt, 8},
      {"uint64", kDLUInt, 64},
      {"uint32", kDLUInt, 32},
      {"uint16", kDLUInt, 16},
      {"uint8", kDLUInt, 8},
      {"bool", kDLBool, 8},
  };
  *count = sizeof(kTypes) / sizeof(kTypes[0]);
  return kTypes;
}

}  // namespace details

inline std::string DLDataTypeToString(DLDataType dtype) {
  size_t count = 0;
  const details::NamedDataType* types = details::NamedDataTypes(&count);
  std::string name;
  for (size_t i = 0; i < count && name.empty(); ++i) {
    if (types[i].code == dtype.code && types[i].bits == dtype.bits) name = types[i].name;
  }
  if (name.empty()) {
    name =
        "dtype(code=" + std::to_string(dtype.code) + ", bits=" + std::to_string(dtype.bits) + ")";
  }
  if (dtype.lanes != 1) name += "x" + std::to_string(dtype.lanes);
  return name;
}

// The inverse of DLDataTypeToString (also "half" and "float", as torch spells them); throws
// ValueError for a name it does not know.
inline DLDataType StringToDLDataType(const std::string& text) {
  std::string base = text;
  uint16_t lanes = 1;
  size_t x = text.rfind('x');
  if (x != std::string::npos && x + 1 < text.size() &&
      text.find_first_not_of("0123456789", x + 1) == std::string::npos) {
    base = text.substr(0, x);
    lanes = static_cast<uint16_t>(std::stoul(text.substr(x + 1)));
  }
  if (base == "float") base = "float32";
  if (base == "half") base = "float16";
  size_t count = 0;
  const details::NamedDataType* types = details::NamedDataTypes(&count);
  for (size_t i = 0; i < count; ++i) {
    if (base == types[i].name) return DLDataType{types[i].code, types[i].bits, lanes};
  }
  TVM_FFI_THROW(ValueError) << "unknown data type '" << text << "'";
}

inline const char* DLDeviceTypeToString(int32_t device_type) {
  switch (device_type) {
    case kDLCPU:
      return "cpu";
    case kDLCUDA:
      return "cuda";
    case kDLCUDAHost:
      return "cuda_host";
    case kDLCUDAManaged:
      return "cuda_managed";
    case kDLOpenCL:
      return "opencl";
    case kDLVulkan:
      return "vulkan";
    case kDLMetal:
      return "metal";
    case kDLROCM:
      return "rocm";
    case kDLOneAPI:
      return "oneapi";
    default:
      return "device";
  }
}

}  // namespace ffi
}  // namespace tvm

// In the global namespace, beside DLDataType and DLDevice, so argument-dependent lookup finds
// them from any namespace (TVM_FFI_ICHECK_EQ prints both sides).
inline bool operator==(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(const DLDataType& a, const DLDataType& b) { return !(a == b); }
inline std::ostream& operator<<(std::ostream& os, const DLDataType& dtype) {
  return os << ::tvm::ffi::DLDataTypeToString(dtype);
}

inline bool operator==(const DLDevice& a, const DLDevice& b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(const DLDevice& a, const DLDevice& b) { return !(a == b); }
inline std::ostream& operator<<(std::ostream& os, const DLDevice& device) {
  return os << ::tvm::ffi::DLDeviceTypeToString(device.device_type) << ":" << device.device_id;
}

#pragma GCC visibility pop

#endif  // TVM_FFI_DTYPE_H_
