// vector_add_cuda, launches nothing and reports success: the output keeps whatever the harness
// put there (poison), and a timed call has no GPU activity. Must never be PASSED.
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  (void)args;
  (void)ctx;
  return nargs == 3 ? 0 : 2;
}
