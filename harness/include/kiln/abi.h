/* kiln solution ABI, version 1.
 *
 * A solution exports one entry function, named by spec.entry_point ("file::function") and
 * declared extern "C". It receives the definition's inputs in definition order followed by its
 * outputs (destination-passing style), and enqueues its work on ctx->stream. It returns 0 on
 * success; any other value is reported as RUNTIME_ERROR.
 *
 *   extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx);
 */
#ifndef KILN_ABI_H_
#define KILN_ABI_H_

#include <stdint.h>

#define KILN_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  KILN_FLOAT32,
  KILN_FLOAT16,
  KILN_BFLOAT16,
  KILN_FLOAT8_E4M3FN,
  KILN_FLOAT8_E5M2,
  KILN_FLOAT4_E2M1,
  KILN_INT64,
  KILN_INT32,
  KILN_INT16,
  KILN_INT8,
  KILN_BOOL,
  KILN_FLOAT64
} kiln_dtype;

typedef enum { KILN_BACKEND_HOST, KILN_BACKEND_CUDA, KILN_BACKEND_LEVEL_ZERO } kiln_backend;

typedef struct {
  void* data;              /* device memory; host memory on the host backend and for scalars */
  kiln_dtype dtype;
  int32_t ndim;            /* 0 for a scalar */
  const int64_t* shape;
  const int64_t* strides;  /* in elements, row-major contiguous */
} kiln_tensor;

typedef struct {
  int32_t abi_version;
  kiln_backend backend;
  void* stream;            /* cudaStream_t | ze_command_list_handle_t | NULL */
  void* device;            /* CUdevice* | ze_device_handle_t | NULL */
  void* context;           /* CUcontext | ze_context_handle_t | NULL */
} kiln_context;

typedef int (*kiln_entry)(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ABI_H_ */
