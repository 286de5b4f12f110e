/* Scalar conversions for host-backend solutions: bfloat16 and float16 stored as uint16_t.
 * Round-to-nearest-even, NaN preserved; the same rules the harness uses. Header-only, C and C++. */
#ifndef KILN_HOST_TYPES_H_
#define KILN_HOST_TYPES_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline float kiln_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t kiln_float_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40u); /* quiet NaN */
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

static inline float kiln_f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t kiln_float_to_f16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t absb = bits & 0x7fffffffu;
  if (absb > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);       /* NaN */
  if (absb >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);      /* overflow -> inf */
  if (absb < 0x38800000u) {                                        /* subnormal or zero */
    if (absb < 0x33000000u) return sign;                            /* < half of min subnormal */
    uint32_t e = absb >> 23;
    uint32_t man = (absb & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* 14 + (112 - e) + ... : shift into 10-bit subnormal */
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t r = absb + 0xfffu + ((absb >> 13) & 1u); /* round mantissa to 10 bits */
  return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

#ifdef __cplusplus
}
#endif

#endif /* KILN_HOST_TYPES_H_ */
