#include "harness/model/dtype.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  int bits;
  bool is_float;
  kiln_dtype abi;
};

constexpr std::array<DTypeInfo, 12> kDTypes = {{
    {v1::DTYPE_FLOAT32, "float32", 32, true, KILN_FLOAT32},
    {v1::DTYPE_FLOAT16, "float16", 16, true, KILN_FLOAT16},
    {v1::DTYPE_BFLOAT16, "bfloat16", 16, true, KILN_BFLOAT16},
    {v1::DTYPE_FLOAT8_E4M3FN, "float8_e4m3fn", 8, true, KILN_FLOAT8_E4M3FN},
    {v1::DTYPE_FLOAT8_E5M2, "float8_e5m2", 8, true, KILN_FLOAT8_E5M2},
    {v1::DTYPE_FLOAT4_E2M1, "float4_e2m1", 4, true, KILN_FLOAT4_E2M1},
    {v1::DTYPE_INT64, "int64", 64, false, KILN_INT64},
    {v1::DTYPE_INT32, "int32", 32, false, KILN_INT32},
    {v1::DTYPE_INT16, "int16", 16, false, KILN_INT16},
    {v1::DTYPE_INT8, "int8", 8, false, KILN_INT8},
    {v1::DTYPE_BOOL, "bool", 8, false, KILN_BOOL},
    {v1::DTYPE_FLOAT64, "float64", 64, true, KILN_FLOAT64},
}};

const DTypeInfo* Find(DType t) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.type == t) return &info;
  }
  return nullptr;
}

uint32_t FloatBits(float f) { return std::bit_cast<uint32_t>(f); }
float BitsFloat(uint32_t b) { return std::bit_cast<float>(b); }

// A "minifloat" is an IEEE-style binary format with `man_bits` stored mantissa bits and exponent
// bias `bias`. RoundToMinifloat rounds the non-negative finite float with bits `a` to nearest
// even and returns the unsigned code (exponent field << man_bits | mantissa). The code may exceed
// the format's largest finite value; each caller applies its own overflow rule.
uint32_t RoundToMinifloat(uint32_t a, int man_bits, int bias) {
  int exp_field = static_cast<int>(a >> 23);
  uint32_t sig = a & 0x7fffffu;
  if (exp_field == 0) {
    exp_field = 1;  // float subnormal: same scale as the smallest normal, no implicit bit
  } else {
    sig |= 0x800000u;
  }
  const int e = exp_field - 127;        // value = sig * 2^(e - 23)
  const int t = std::max(e, 1 - bias);  // exponent of the target's quantum (subnormals pinned)
  const int shift = 23 - man_bits + (t - e);
  if (shift >= 25) return 0;  // below half the smallest subnormal (sig < 2^24)
  // Round half to even without a data-dependent branch: adding half - 1, plus one more when the
  // kept part is odd, carries into the kept part exactly when rounding up (sig < 2^24, so the
  // sum cannot overflow).
  const uint32_t odd = (sig >> shift) & 1u;
  const uint32_t q = (sig + (1u << (shift - 1)) - 1u + odd) >> shift;
  // Normal: (t + bias - 1) << m plus q in [2^m, 2^(m+1)] carries the implicit bit into the
  // exponent field; subnormal: t + bias - 1 == 0 and q < 2^m (or == 2^m, the smallest normal).
  return (static_cast<uint32_t>(t + bias - 1) << man_bits) + q;
}

// Decodes a finite unsigned minifloat code exactly: placing the code at the top of a float's
// mantissa/exponent fields and scaling by 2^(127 - bias) handles normals and subnormals alike.
float MinifloatToFloat(uint32_t code, int man_bits, int bias) {
  const float scaled = BitsFloat(code << (23 - man_bits));
  return scaled * BitsFloat(static_cast<uint32_t>(254 - bias) << 23);
}

// The 2^kBits decoded values of a narrow format, built once.
template <int kBits, float (*kDecode)(uint32_t)>
const std::array<float, (1 << kBits)>& DecodeTable() {
  static const std::array<float, (1 << kBits)> table = [] {
    std::array<float, (1 << kBits)> t{};
    for (uint32_t c = 0; c < (1u << kBits); ++c) t[c] = kDecode(c);
    return t;
  }();
  return table;
}

float DecodeE4m3(uint32_t v) {
  const float sign = (v & 0x80u) ? -1.0f : 1.0f;
  const uint32_t code = v & 0x7fu;
  if (code == 0x7fu) return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  return sign * MinifloatToFloat(code, 3, 7);
}

float DecodeE5m2(uint32_t v) {
  const float sign = (v & 0x80u) ? -1.0f : 1.0f;
  const uint32_t code = v & 0x7fu;
  if (code == 0x7cu) return sign * std::numeric_limits<float>::infinity();
  if (code > 0x7cu) return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  return sign * MinifloatToFloat(code, 2, 15);
}

float DecodeE2m1(uint32_t v) {
  const float sign = (v & 0x8u) ? -1.0f : 1.0f;
  return sign * MinifloatToFloat(v & 0x7u, 1, 1);
}

// Double to float rounding to odd: the float keeps a sticky low bit when the double was not
// exactly representable, so a second rounding (to a format at least two bits narrower) gives the
// correctly rounded result of the double.
float DoubleToFloatRoundToOdd(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(v) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) {
    f = std::nextafter(f, 0.0f);  // truncate toward zero
  }
  return BitsFloat(FloatBits(f) | 1u);
}

template <typename Int>
Int SaturateToInt(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kMin = static_cast<double>(std::numeric_limits<Int>::min());
  // -min == 2^digits is exact in double; anything at or above it saturates.
  constexpr double kLimit = -kMin;
  if (v <= kMin) return std::numeric_limits<Int>::min();
  if (v >= kLimit) return std::numeric_limits<Int>::max();
  return static_cast<Int>(v);  // truncates toward zero
}

template <typename T>
T LoadElement(const void* base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + i * static_cast<int64_t>(sizeof(T)), sizeof v);
  return v;
}

template <typename T>
void StoreElement(void* base, int64_t i, T v) {
  std::memcpy(static_cast<char*>(base) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof v);
}

}  // namespace

std::string_view DTypeName(DType t) {
  const DTypeInfo* info = Find(t);
  return info ? info->name : "unknown";
}

absl::StatusOr<DType> ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", std::string(name), "'"));
}

int DTypeBits(DType t) {
  const DTypeInfo* info = Find(t);
  return info ? info->bits : 0;
}

int64_t DTypeStorageBytes(DType t, int64_t numel) { return (numel * DTypeBits(t) + 7) / 8; }

bool DTypeIsFloat(DType t) {
  const DTypeInfo* info = Find(t);
  return info && info->is_float;
}

// DTYPE_UNSPECIFIED has no ABI value; validated definitions never carry it.
kiln_dtype ToAbiDType(DType t) {
  const DTypeInfo* info = Find(t);
  return info ? info->abi : KILN_FLOAT32;
}

float Bf16ToFloat(uint16_t v) { return BitsFloat(static_cast<uint32_t>(v) << 16); }

uint16_t FloatToBf16(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet, keep payload
  if (a == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7f80u);
  const uint32_t code = std::min(RoundToMinifloat(a, 7, 127), 0x7f80u);
  return static_cast<uint16_t>(sign | code);
}

float F16ToFloat(uint16_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x8000u) << 16;
  const uint32_t code = v & 0x7fffu;
  if (code >= 0x7c00u) return BitsFloat(sign | 0x7f800000u | ((code & 0x3ffu) << 13));
  return BitsFloat(sign | FloatBits(MinifloatToFloat(code, 10, 15)));
}

uint16_t FloatToF16(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const uint32_t code = std::min(RoundToMinifloat(a, 10, 15), 0x7c00u);  // overflow -> inf
  return static_cast<uint16_t>(sign | code);
}

float Fp8E4m3ToFloat(uint8_t v) { return DecodeTable<8, DecodeE4m3>()[v]; }

// As torch's cast: NaN, infinity and anything that rounds above 448 (i.e. |f| > 464) become NaN.
uint8_t FloatToFp8E4m3(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
  const uint32_t code = RoundToMinifloat(a, 3, 7);
  return static_cast<uint8_t>(sign | std::min(code, 0x7fu));
}

float Fp8E5m2ToFloat(uint8_t v) { return DecodeTable<8, DecodeE5m2>()[v]; }

// As torch's cast: values that round above 57344 become infinity; NaN stays NaN.
uint8_t FloatToFp8E5m2(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
  if (a == 0x7f800000u) return static_cast<uint8_t>(sign | 0x7cu);
  const uint32_t code = std::min(RoundToMinifloat(a, 2, 15), 0x7cu);
  return static_cast<uint8_t>(sign | code);
}

float Fp4E2m1ToFloat(uint8_t nibble) { return DecodeTable<4, DecodeE2m1>()[nibble & 0xfu]; }

// Saturating: infinities and NaN (which the format cannot hold) go to +-6 by their sign bit.
uint8_t FloatToFp4E2m1(float f) {
  const uint32_t bits = FloatBits(f);
  const uint32_t sign = (bits >> 28) & 0x8u;
  const uint32_t a = bits & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint8_t>(sign | 0x7u);
  const uint32_t code = std::min(RoundToMinifloat(a, 1, 1), 0x7u);
  return static_cast<uint8_t>(sign | code);
}

double LoadAsDouble(DType t, const void* base, int64_t i) {
  switch (t) {
    case v1::DTYPE_FLOAT32:
      return LoadElement<float>(base, i);
    case v1::DTYPE_FLOAT64:
      return LoadElement<double>(base, i);
    case v1::DTYPE_FLOAT16:
      return F16ToFloat(LoadElement<uint16_t>(base, i));
    case v1::DTYPE_BFLOAT16:
      return Bf16ToFloat(LoadElement<uint16_t>(base, i));
    case v1::DTYPE_FLOAT8_E4M3FN:
      return Fp8E4m3ToFloat(LoadElement<uint8_t>(base, i));
    case v1::DTYPE_FLOAT8_E5M2:
      return Fp8E5m2ToFloat(LoadElement<uint8_t>(base, i));
    case v1::DTYPE_FLOAT4_E2M1: {
      const uint8_t byte = static_cast<const uint8_t*>(base)[i / 2];
      return Fp4E2m1ToFloat(i % 2 == 0 ? (byte & 0xfu) : (byte >> 4));
    }
    case v1::DTYPE_INT64:
      return static_cast<double>(LoadElement<int64_t>(base, i));
    case v1::DTYPE_INT32:
      return LoadElement<int32_t>(base, i);
    case v1::DTYPE_INT16:
      return LoadElement<int16_t>(base, i);
    case v1::DTYPE_INT8:
      return LoadElement<int8_t>(base, i);
    case v1::DTYPE_BOOL:
      return LoadElement<uint8_t>(base, i) != 0 ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

void StoreFromDouble(DType t, void* base, int64_t i, double v) {
  switch (t) {
    case v1::DTYPE_FLOAT32:
      return StoreElement<float>(base, i, static_cast<float>(v));
    case v1::DTYPE_FLOAT64:
      return StoreElement<double>(base, i, v);
    case v1::DTYPE_FLOAT16:
      return StoreElement<uint16_t>(base, i, FloatToF16(DoubleToFloatRoundToOdd(v)));
    case v1::DTYPE_BFLOAT16:
      return StoreElement<uint16_t>(base, i, FloatToBf16(DoubleToFloatRoundToOdd(v)));
    case v1::DTYPE_FLOAT8_E4M3FN:
      return StoreElement<uint8_t>(base, i, FloatToFp8E4m3(DoubleToFloatRoundToOdd(v)));
    case v1::DTYPE_FLOAT8_E5M2:
      return StoreElement<uint8_t>(base, i, FloatToFp8E5m2(DoubleToFloatRoundToOdd(v)));
    case v1::DTYPE_FLOAT4_E2M1: {
      uint8_t& byte = static_cast<uint8_t*>(base)[i / 2];
      const uint8_t nibble = FloatToFp4E2m1(DoubleToFloatRoundToOdd(v));
      byte = i % 2 == 0 ? static_cast<uint8_t>((byte & 0xf0u) | nibble)
                        : static_cast<uint8_t>((byte & 0x0fu) | (nibble << 4));
      return;
    }
    case v1::DTYPE_INT64:
      return StoreElement<int64_t>(base, i, SaturateToInt<int64_t>(v));
    case v1::DTYPE_INT32:
      return StoreElement<int32_t>(base, i, SaturateToInt<int32_t>(v));
    case v1::DTYPE_INT16:
      return StoreElement<int16_t>(base, i, SaturateToInt<int16_t>(v));
    case v1::DTYPE_INT8:
      return StoreElement<int8_t>(base, i, SaturateToInt<int8_t>(v));
    case v1::DTYPE_BOOL:
      return StoreElement<uint8_t>(base, i, v != 0.0 ? 1 : 0);
    default:
      return;
  }
}

}  // namespace kiln
