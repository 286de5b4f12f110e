// Device-side integrity kernels of the CUDA backend, compiled by nvcc at build time into a
// fatbin that is embedded in kiln-worker and loaded with cudaLibraryLoadData (no nvcc or
// libcuda link needed at run time).
//
// kiln_checksum64: a keyed, position-dependent 64-bit checksum of `bytes` bytes at `data`,
// added into *out (which the caller zeroes). Each 8-byte word contributes Mix(word ^ Mix(index
// ^ key)), so reordering, flipping or rewriting any word changes the sum; the key is random per
// worker process, so a collision cannot be prepared offline. It reads the buffer once at
// memory bandwidth, so checking the inputs after every timed call keeps the GPU busy for
// microseconds instead of copying them to the host.

__device__ __forceinline__ unsigned long long Mix(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

extern "C" __global__ void kiln_checksum64(const unsigned char* data, unsigned long long bytes,
                                           unsigned long long key, unsigned long long* out) {
  const unsigned long long words = bytes / 8;
  const unsigned long long* w = reinterpret_cast<const unsigned long long*>(data);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  for (unsigned long long i = first; i < words; i += stride) acc += Mix(w[i] ^ Mix(i ^ key));
  if (first == 0) {
    unsigned long long tail = 0;
    for (unsigned long long b = words * 8; b < bytes; ++b) {
      tail |= static_cast<unsigned long long>(data[b]) << (8 * (b - words * 8));
    }
    acc += Mix(tail ^ Mix(words ^ key)) + Mix(bytes ^ key);
  }
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
