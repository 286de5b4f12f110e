#include <kiln/abi.h>

// spins forever
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3) return 1;
  volatile int spin = 1;
  while (spin) {
  }
  return 0;
}
