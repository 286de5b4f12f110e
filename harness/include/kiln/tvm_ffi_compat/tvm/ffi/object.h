// kiln's TVM-FFI compatibility: solutions include this header for the types it brings in along
// the way; TVM-FFI's object system (Object, ObjectRef, make_object) is not provided.
#ifndef TVM_FFI_OBJECT_H_
#define TVM_FFI_OBJECT_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/error.h>

#endif  // TVM_FFI_OBJECT_H_
