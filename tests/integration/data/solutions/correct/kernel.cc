#include <kiln/abi.h>

// out = a * 2 + b
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3) return 1;
  const float* a = static_cast<const float*>(args[0].data);
  const float* b = static_cast<const float*>(args[1].data);
  float* out = static_cast<float*>(args[2].data);
  for (int64_t i = 0; i < args[0].shape[0]; ++i) out[i] = a[i] * 2.0f + b[i];
  return 0;
}
