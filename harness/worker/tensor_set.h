// The arguments of one solution call: the definition's inputs, then its outputs, at the
// workload's shapes, in device memory (scalars always in host memory, as the ABI says), exposed
// as the kiln_tensor array a kiln_entry takes. Every output has two buffers, freshly allocated
// for each trial; calls alternate between them (so consecutive calls never see the same output
// address) and the buffer is poisoned before every call, so an output the solution does not write
// stays poison. No memory is allocated or freed between the timed calls of a trial: a cudaFree
// there changes the memory system's state (page mappings) in a way the official protocol never
// does, and inflated the latency of large memory-bound kernels.
//
// Inputs the definition declares written in place (kiln:inplace-input:<name>) are not
// checksummed; every other input is, on every call (integrity.input_mutation).
#ifndef KILN_HARNESS_WORKER_TENSOR_SET_H_
#define KILN_HARNESS_WORKER_TENSOR_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/backend/device.h"
#include "kiln/abi.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

class TensorSet {
 public:
  // Resolves every shape and allocates the inputs (contents undefined until GenerateInputs) and
  // the outputs (poisoned). `device` must outlive the set. Errors name the offending tensor.
  static absl::StatusOr<std::unique_ptr<TensorSet>> Create(const v1::Definition& def,
                                                           const v1::Workload& workload,
                                                           Device& device);
  TensorSet(const TensorSet&) = delete;
  TensorSet& operator=(const TensorSet&) = delete;
  ~TensorSet();  // frees the staging buffers

  // Fills input i (definition order) with GenerateInput(seed, input index i): random inputs in
  // device memory on the device itself where its generator agrees with the host's
  // (Device::FillRandomOnDevice), everything else on the host and copied.
  absl::Status GenerateInputs(uint64_t seed, const std::string& blob_root);
  // Allocates both buffers of every output anew (releasing the old ones), then RenewOutputs.
  absl::Status AllocateOutputs();
  // Switches every output to its other buffer and fills it with the poison of its dtype.
  // `wait` false: the fill is only queued (Device::QueueFill); the caller synchronizes or
  // flushes before the next call.
  absl::Status RenewOutputs(bool wait = true);
  // A checksum of each input, definition order: computed on the device when the backend can
  // (Device::ChecksumOnDevice), else Checksum64 of a host copy. Values compare only with values
  // from the same TensorSet.
  absl::StatusOr<std::vector<uint64_t>> InputChecksums();
  // REJECTED "integrity.input_mutation: input 'x' was modified by the call" when an input's
  // checksum differs from `before`. `output_sums` (not null): OutputChecksums() too, computed in
  // the same pass (one wait for the device), returned there whatever the inputs held.
  absl::Status CheckInputsUnchanged(const std::vector<uint64_t>& before,
                                    std::vector<uint64_t>* output_sums = nullptr);
  // CheckInputsUnchanged in two steps, so that the device computes the checksums while the
  // host does other work: QueueInputCheck queues them (the outputs' too when `with_outputs`)
  // behind the work on the device and returns; FinishInputCheck waits for them (nothing to wait
  // for once the device was flushed or synchronized) and checks as CheckInputsUnchanged does.
  // The checksums are of the buffers current at QueueInputCheck, so RenewOutputs may come in
  // between. Where the device cannot queue them they are computed in QueueInputCheck.
  absl::Status QueueInputCheck(bool with_outputs);
  absl::Status FinishInputCheck(const std::vector<uint64_t>& before,
                                std::vector<uint64_t>* output_sums = nullptr);
  // Checksums of the current outputs, definition order, computed like InputChecksums.
  absl::StatusOr<std::vector<uint64_t>> OutputChecksums();
  // Checksums of the outputs' other buffers (those of the call before the last RenewOutputs),
  // computed like OutputChecksums; the current buffers stay current.
  absl::StatusOr<std::vector<uint64_t>> PreviousOutputChecksums();
  // The current bytes of every output (host copies), definition order.
  absl::StatusOr<std::vector<std::string>> OutputBytes();
  // Refills every random input in place (same buffers) with its trial-`seed` values except at a
  // sparse pseudo-random subset of elements (about 1 in 32, at least one), which take the values
  // of GenerateInput(perturb_seed): new values that a cache keyed by pointer, or by a
  // fingerprint of a few elements, does not notice. Scalars and safetensors inputs keep their
  // values. `intact`: the inputs still hold their trial-`seed` values (checked after every
  // call, and no output aliases an input): only the changed elements are written; otherwise
  // every input is written in full.
  absl::Status PerturbInputs(uint64_t seed, uint64_t perturb_seed, const std::string& blob_root,
                             bool intact = false);
  // Writes every output to WorkerOutputPath(dir, trial, name, recheck) (raw bytes, row-major)
  // and records it. Where the harness left a judged pass's file of that output for reuse
  // (WorkerReusePath(dir, name)), or a warm reference worker's file of the same pass from its
  // previous run (WorkerKeptPath(dir, trial, name, recheck), tried first), it is written over in
  // place and renamed: no new pages.
  absl::Status WriteOutputs(const std::string& dir, int trial, v1::TrialOutputs* record,
                            bool recheck = false);
  // Whether an output was written by threads of kiln's own since the last call (their CPU time
  // is the worker's, not the solution's: the helper-thread window starts after them).
  bool TakeUsedWriteThreads() { return std::exchange(used_write_threads_, false); }

  int num_outputs() const { return static_cast<int>(slots_.size() - num_inputs_); }
  const v1::TensorSpec& output_spec(int o) const { return slots_[num_inputs_ + o]->spec; }
  int64_t output_elements(int o) const;

  const kiln_tensor* args() const { return args_.data(); }
  int32_t nargs() const { return static_cast<int32_t>(args_.size()); }

 private:
  struct Slot {
    v1::TensorSpec spec;
    const v1::WorkloadInput* input = nullptr;  // inputs only; null for an absent optional input
    bool inplace = false;                      // inputs only: written by the call, not checksummed
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // elements, row-major
    int64_t bytes = 0;
    bool host = false;                  // data lives in host memory
    DeviceBuffer device_buffer;         // non-scalar tensors
    DeviceBuffer spare_buffer;          // outputs: the buffer of the next call
    std::vector<uint64_t> host_scalar;  // scalars (8-byte aligned)
  };

  explicit TensorSet(Device& device) : device_(device) {}
  absl::Status AddSlot(const v1::Definition& def, const v1::Workload& workload,
                       const v1::TensorSpec& spec, const v1::WorkloadInput* input,
                       const std::string& where);
  absl::Status AllocateSlot(Slot& slot);
  absl::Status Poison(Slot& slot, bool wait = true);
  // Checksums of slots [begin, end); slots without data get 0.
  absl::StatusOr<std::vector<uint64_t>> Checksums(size_t begin, size_t end);
  // Checksums [begin, end) of what only the host computes, in `sums`; the device's share is
  // left to compute: its regions and their positions in `sums`.
  absl::Status HostChecksums(size_t begin, size_t end, std::vector<uint64_t>& sums,
                             std::vector<MemoryRegion>& on_device,
                             std::vector<size_t>& device_slots);
  // The comparison of CheckInputsUnchanged, on sums of every slot.
  absl::Status CompareInputs(const std::vector<uint64_t>& after,
                             const std::vector<uint64_t>& before,
                             std::vector<uint64_t>* output_sums) const;
  // Whether the slot's random values come from the device's generator (checked once per
  // process and dtype against the host's on a sample).
  bool DeviceGenerates(const Slot& slot);
  absl::Status GenerateInto(const Slot& slot, size_t index, uint64_t seed,
                            const std::string& blob_root, std::vector<uint8_t>& out);
  // The slot's bytes readable from the host (copied into staging_ for device memory).
  absl::StatusOr<const void*> HostView(const Slot& slot);
  // Writes a device slot's bytes to `path` (through path.tmp.PID, or over the file `reuse` when
  // it is there, renamed once complete), copied from the device a chunk at a time through
  // chunk_: no copy of the whole output in the worker's memory (6 GiB for some KernelBench
  // problems) and no pass zeroing one.
  absl::Status WriteDeviceOutput(const std::string& path, const std::string& reuse,
                                 const Slot& slot);
  // The same for a large output in a folder on a tmpfs: the file is mapped and filled by
  // several threads from two page-locked staging buffers, the device copying the next chunk
  // while the threads copy this one (on an H100 node, a 6 GiB KernelBench output's checked and
  // recheck files in 4.0-4.4 s against 4.6-8.0 s with one thread). false: not written (no
  // staging memory, mapping or MADV_POPULATE_WRITE here), the plain path writes it.
  absl::StatusOr<bool> WriteDeviceOutputInParallel(const std::string& path,
                                                   const std::string& reuse, const Slot& slot);
  void FreeStages();
  void* Data(const Slot& slot) const;
  void RebuildArgs();

  Device& device_;
  size_t num_inputs_ = 0;
  std::vector<std::unique_ptr<Slot>> slots_;  // inputs, then outputs; stable addresses
  std::vector<kiln_tensor> args_;
  std::vector<uint8_t> staging_;
  std::vector<uint8_t> chunk_;  // WriteDeviceOutput's, reused
  void* stage_[2] = {nullptr, nullptr};  // WriteDeviceOutputInParallel's, page-locked
  bool used_write_threads_ = false;
  bool device_checksums_ = true;  // until the device says it cannot
  // QueueInputCheck's checksums: those known (host-side, or all where the device cannot
  // queue), and where the device's queued values go.
  struct QueuedCheck {
    bool active = false;
    std::vector<uint64_t> sums;
    std::vector<size_t> device_slots;
  } queued_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_TENSOR_SET_H_
