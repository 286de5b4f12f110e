#include <kiln/abi.h>

// crashes
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3) return 1;
  volatile float* volatile nowhere = nullptr;
  *nowhere = 1.0f;
  return 0;
}
