// kiln's own kernels on Level Zero devices, compiled to SPIR-V when kiln is built.

// Zero-fills `n` uint4s: the cache flush before every timed call.
__kernel void kiln_flush(__global uint4* buffer, ulong n) {
  size_t i = get_global_id(0);
  if (i < n) buffer[i] = (uint4)(0);
}

// Does nothing; its kernel timestamps bracket a timed call.
__kernel void kiln_marker(void) {}
