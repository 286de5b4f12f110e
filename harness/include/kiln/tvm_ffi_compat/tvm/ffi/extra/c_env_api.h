/* kiln's TVM-FFI compatibility: the environment's current stream.
 *
 *   cudaStream_t stream = static_cast<cudaStream_t>(
 *       TVMFFIEnvGetStream(x.device().device_type, x.device().device_id));
 *
 * While kiln calls an entry defined by TVM_FFI_DLL_EXPORT_TYPED_FUNC, TVMFFIEnvGetStream for the
 * call's device (that of its tensor arguments) returns kiln_context.stream, the stream kiln
 * times; for any other device it returns NULL (the legacy default stream), as TVM-FFI does for a
 * device nobody set a stream for. The state is per thread and lives in the solution's own
 * library (these definitions are hidden, not exported).
 */
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
namespace tvm {
namespace ffi {
namespace kiln_compat {

struct StreamSlot {
  int32_t device_type;
  int32_t device_id;
  TVMFFIStreamHandle stream;
};

constexpr int kStreamSlots = 8;

/* The streams set on this thread, one per device (device_type 0: unused slot). */
struct StreamTable {
  StreamSlot slots[kStreamSlots];
};

KILN_TVM_FFI_HIDDEN inline StreamTable& CurrentStreams() {
  static thread_local StreamTable table{};
  return table;
}

}  // namespace kiln_compat
}  // namespace ffi
}  // namespace tvm

extern "C" {

/* Sets the current stream of a device on this thread; 0 on success, -1 when eight devices
 * already have one. */
KILN_TVM_FFI_HIDDEN inline int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id,
                                                  TVMFFIStreamHandle stream,
                                                  TVMFFIStreamHandle* opt_out_original_stream) {
  using ::tvm::ffi::kiln_compat::CurrentStreams;
  using ::tvm::ffi::kiln_compat::kStreamSlots;
  ::tvm::ffi::kiln_compat::StreamSlot* free_slot = nullptr;
  for (auto& slot : CurrentStreams().slots) {
    if (slot.device_type == device_type && slot.device_id == device_id) {
      if (opt_out_original_stream != nullptr) *opt_out_original_stream = slot.stream;
      slot.stream = stream;
      return 0;
    }
    if (slot.device_type == 0 && free_slot == nullptr) free_slot = &slot;
  }
  if (opt_out_original_stream != nullptr) *opt_out_original_stream = nullptr;
  if (free_slot == nullptr) return -1;
  *free_slot = {device_type, device_id, stream};
  return 0;
}

/* The current stream of a device on this thread, NULL when none was set. */
KILN_TVM_FFI_HIDDEN inline TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type,
                                                                 int32_t device_id) {
  for (const auto& slot : ::tvm::ffi::kiln_compat::CurrentStreams().slots) {
    if (slot.device_type == device_type && slot.device_id == device_id) return slot.stream;
  }
  return nullptr;
}

} /* extern "C" */
#endif /* __cplusplus */

#endif /* TVM_FFI_EXTRA_C_ENV_API_H_ */
