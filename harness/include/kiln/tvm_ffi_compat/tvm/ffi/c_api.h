/* kiln's TVM-FFI compatibility: the few C-level names solutions meet (visibility macros, the
 * handle types). The TVM-FFI object system and its packed calling convention are not provided:
 * kiln calls solutions through kiln/abi.h, and TVM_FFI_DLL_EXPORT_TYPED_FUNC (tvm/ffi/function.h)
 * adapts a typed C++ function to that ABI.
 */
#ifndef TVM_FFI_C_API_H_
#define TVM_FFI_C_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#define KILN_TVM_FFI_COMPAT 1

#ifndef TVM_FFI_DLL
#define TVM_FFI_DLL __attribute__((visibility("default")))
#endif
#ifndef TVM_FFI_DLL_EXPORT
#define TVM_FFI_DLL_EXPORT __attribute__((visibility("default")))
#endif
/* Definitions the compatibility layer adds to a solution's library stay out of its exports. */
#define KILN_TVM_FFI_HIDDEN __attribute__((visibility("hidden")))

#ifndef TVM_FFI_INLINE
#define TVM_FFI_INLINE inline __attribute__((always_inline))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void* TVMFFIObjectHandle;
typedef void* TVMFFIStreamHandle;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* TVM_FFI_C_API_H_ */
