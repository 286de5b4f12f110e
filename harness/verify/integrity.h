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

// 64-bit checksum of bytes (fast, not cryptographic: it detects accidental and deliberate
// in-place mutation of inputs by a candidate that does not know the checksum).
uint64_t Checksum64(const void* data, size_t bytes);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_INTEGRITY_H_
