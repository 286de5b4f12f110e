// Per-call integrity helpers run by the worker: output poisoning and input checksums.
#ifndef KILN_HARNESS_VERIFY_INTEGRITY_H_
#define KILN_HARNESS_VERIFY_INTEGRITY_H_

#include <cstddef>
#include <cstdint>

#include "kiln/v1/types.pb.h"

namespace kiln {

// Fills a host buffer with a poison pattern: quiet NaN for float types (all-ones exponent), 0xA5
// bytes for integer and bool types, so an unwritten output can never match a reference.
void PoisonHost(v1::DType dtype, void* data, size_t bytes);
// The byte the poison of `dtype` uses when it is a repeated byte (0xFF for the float types whose
// all-ones pattern is NaN; 0xA5 otherwise). Device backends fill with this byte.
uint8_t PoisonByte(v1::DType dtype);

// The first element of `got` (numel elements of `dtype`) that still holds the poison of its
// dtype where `expected` holds something else, or -1. Such an element was never written: for the
// float types the poison is a NaN no computation produces; for integer types (where 0xA5.. is a
// valid value) only elements that also differ from the reference count. float4_e2m1 is judged a
// byte (two elements) at a time and reports the byte's first element.
int64_t FirstPoisonedElement(v1::DType dtype, const void* got, const void* expected,
                             int64_t numel);

// The first element of `got` (numel elements of `dtype`) that holds the poison of its dtype, or
// -1: with no reference at hand, an element the call most likely never wrote (for integer types
// 0xA5.. is also a value a computation can produce; for the float types it is a NaN none does).
int64_t FirstPoisonElement(v1::DType dtype, const void* got, int64_t numel);

// 64-bit checksum of bytes (fast, not cryptographic: it detects accidental and deliberate
// in-place mutation of inputs by a candidate that does not know the checksum).
uint64_t Checksum64(const void* data, size_t bytes);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_INTEGRITY_H_
