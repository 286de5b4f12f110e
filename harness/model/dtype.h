// Element types of kiln tensors: names as flashinfer-bench spells them, storage sizes, and exact
// conversions between the narrow float formats and float/double.
#ifndef KILN_HARNESS_MODEL_DTYPE_H_
#define KILN_HARNESS_MODEL_DTYPE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "kiln/abi.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

using v1::DType;

// "float32", "bfloat16", ... ; "unknown" for DTYPE_UNSPECIFIED.
std::string_view DTypeName(DType t);
// Accepts the flashinfer-bench names (and "float64"). The error names the offending string.
absl::StatusOr<DType> ParseDType(std::string_view name);
// Bits per element: 4 for float4_e2m1, 8 for bool and int8, ...
int DTypeBits(DType t);
// Bytes of storage for numel elements (float4_e2m1 packs two per byte, rounded up).
int64_t DTypeStorageBytes(DType t, int64_t numel);
bool DTypeIsFloat(DType t);
kiln_dtype ToAbiDType(DType t);

// Conversions. Narrowing conversions round to nearest even; NaN stays NaN. float8_e4m3fn has no
// infinity: values beyond +-448 become NaN, as torch's non-saturating cast does. float4_e2m1
// saturates to +-6 (it has neither infinity nor NaN).
float Bf16ToFloat(uint16_t v);
uint16_t FloatToBf16(float f);
float F16ToFloat(uint16_t v);
uint16_t FloatToF16(float f);
float Fp8E4m3ToFloat(uint8_t v);
uint8_t FloatToFp8E4m3(float f);
float Fp8E5m2ToFloat(uint8_t v);
uint8_t FloatToFp8E5m2(float f);
float Fp4E2m1ToFloat(uint8_t nibble);  // low 4 bits
uint8_t FloatToFp4E2m1(float f);       // returns a nibble

// Element i of a buffer of type t, widened to double (bool -> 0/1; fp4: element i is nibble
// i%2 of byte i/2, low nibble first).
double LoadAsDouble(DType t, const void* base, int64_t i);
// Stores v into element i, converting as above (ints truncate toward zero and saturate).
void StoreFromDouble(DType t, void* base, int64_t i, double v);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_DTYPE_H_
