#include "harness/worker/tensor_set.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/model/dtype.h"
#include "harness/model/validate.h"
#include "harness/verify/input_generator.h"
#include "harness/verify/integrity.h"
#include "harness/verify/integrity_policy.h"
#include "harness/worker/failure.h"
#include "harness/worker/worker_client.h"

namespace kiln {
namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

// Output names become file names; keep them to one path component.
absl::Status CheckFileName(const std::string& name, const std::string& where) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".name: '", name, "' cannot be used as a file name"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<TensorSet>> TensorSet::Create(const v1::Definition& def,
                                                             const v1::Workload& workload,
                                                             Device& device) {
  std::unique_ptr<TensorSet> set(new TensorSet(device));
  for (int i = 0; i < def.inputs_size(); ++i) {
    const v1::TensorSpec& spec = def.inputs(i);
    const v1::WorkloadInput* input = nullptr;
    for (const v1::WorkloadInput& candidate : workload.inputs()) {
      if (candidate.name() == spec.name()) input = &candidate;
    }
    if (input == nullptr && !(spec.has_optional() && spec.optional())) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload.inputs: missing input '", spec.name(), "'"));
    }
    absl::Status s =
        set->AddSlot(def, workload, spec, input, absl::StrCat("definition.inputs[", i, "]"));
    if (!s.ok()) return s;
  }
  set->num_inputs_ = set->slots_.size();
  for (const std::string& name : integrity::InplaceInputs(def)) {
    for (size_t i = 0; i < set->num_inputs_; ++i) {
      if (set->slots_[i]->spec.name() == name) set->slots_[i]->inplace = true;
    }
  }
  for (int o = 0; o < def.outputs_size(); ++o) {
    std::string where = absl::StrCat("definition.outputs[", o, "]");
    absl::Status s = CheckFileName(def.outputs(o).name(), where);
    if (s.ok()) s = set->AddSlot(def, workload, def.outputs(o), nullptr, where);
    if (!s.ok()) return s;
  }
  set->RebuildArgs();
  absl::Status s = set->AllocateOutputs();
  if (!s.ok()) return s;
  return set;
}

absl::Status TensorSet::AddSlot(const v1::Definition& def, const v1::Workload& workload,
                                const v1::TensorSpec& spec, const v1::WorkloadInput* input,
                                const std::string& where) {
  auto slot = std::make_unique<Slot>();
  slot->spec = spec;
  slot->input = input;
  absl::StatusOr<std::vector<int64_t>> shape = ResolveShape(def, spec, workload);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " ('", spec.name(), "'): ", shape.status().message()));
  }
  slot->shape = *std::move(shape);
  slot->strides = RowMajorStrides(slot->shape);
  slot->bytes = DTypeStorageBytes(spec.dtype(), NumElements(slot->shape));
  absl::Status s = AllocateSlot(*slot);
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat(where, " ('", spec.name(), "'): ", s.message()));
  slots_.push_back(std::move(slot));
  return absl::OkStatus();
}

absl::Status TensorSet::AllocateSlot(Slot& slot) {
  if (slot.spec.scalar()) {
    slot.host = true;
    slot.host_scalar.assign(static_cast<size_t>((slot.bytes + 7) / 8 + 1), 0);
    return absl::OkStatus();
  }
  slot.host = device_.HostAccessible();
  // Outputs get their memory from RenewOutputs; absent optional inputs get none.
  if (slot.input != nullptr) {
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(device_, slot.bytes);
    if (!buffer.ok()) return buffer.status();
    slot.device_buffer = *std::move(buffer);
  }
  return absl::OkStatus();
}

void* TensorSet::Data(const Slot& slot) const {
  if (slot.spec.scalar()) return const_cast<uint64_t*>(slot.host_scalar.data());
  return slot.device_buffer.data();
}

void TensorSet::RebuildArgs() {
  args_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = *slots_[i];
    kiln_tensor& t = args_[i];
    bool absent = i < num_inputs_ && slot.input == nullptr;
    t.data = absent ? nullptr : Data(slot);
    t.dtype = ToAbiDType(slot.spec.dtype());
    t.ndim = static_cast<int32_t>(slot.shape.size());
    t.shape = slot.shape.empty() ? nullptr : slot.shape.data();
    t.strides = slot.strides.empty() ? nullptr : slot.strides.data();
  }
}

bool TensorSet::DeviceGenerates(const Slot& slot) {
  if (slot.host || slot.bytes == 0 || (slot.input->kind() != v1::WorkloadInput::RANDOM &&
                                       slot.input->kind() != v1::WorkloadInput::KIND_UNSPECIFIED)) {
    return false;
  }
  const kiln_dtype dtype = ToAbiDType(slot.spec.dtype());
  // Once per process and dtype: the device's values of a sample must be the host generator's,
  // bit for bit (the reference may run on another backend, and `kiln inputs` on any machine).
  struct Agreement {
    const Device* device;
    kiln_dtype dtype;
    bool agrees;
  };
  static auto* known = new std::vector<Agreement>();
  for (const Agreement& a : *known) {
    if (a.device == &device_ && a.dtype == dtype) return a.agrees;
  }
  constexpr int64_t kSample = (int64_t{1} << 16) + 3;  // a tail shorter than a Philox block
  constexpr uint64_t kSampleSeed = 0x6b696c6e2d696e70ull;
  const int64_t bytes = DTypeStorageBytes(slot.spec.dtype(), kSample);
  std::vector<uint8_t> host(static_cast<size_t>(bytes)), device(static_cast<size_t>(bytes), 0);
  FillRandom(slot.spec.dtype(), kSample, kSampleSeed, 5, host.data(), 1);
  absl::StatusOr<DeviceBuffer> sample = DeviceBuffer::Allocate(device_, bytes);
  absl::Status s = sample.status();
  if (s.ok()) s = device_.FillRandomOnDevice(sample->data(), dtype, kSample, kSampleSeed, 5);
  if (s.ok()) s = device_.CopyToHost(device.data(), sample->data(), bytes);
  bool agrees = s.ok() && host == device;
  if (s.ok() && !agrees) {
    size_t at = 0;
    while (at < host.size() && host[at] == device[at]) ++at;
    std::fprintf(stderr,
                 "kiln-worker: note: %s inputs are generated on the host: the device's generator "
                 "differs from the host's at byte %zu of a sample\n",
                 std::string(DTypeName(slot.spec.dtype())).c_str(), at);
  } else if (!s.ok() && !absl::IsUnimplemented(s)) {
    std::fprintf(stderr, "kiln-worker: note: %s inputs are generated on the host: %s\n",
                 std::string(DTypeName(slot.spec.dtype())).c_str(), s.ToString().c_str());
  }
  known->push_back({&device_, dtype, agrees});
  return agrees;
}

absl::Status TensorSet::GenerateInputs(uint64_t seed, const std::string& blob_root) {
  for (size_t i = 0; i < num_inputs_; ++i) {
    Slot& slot = *slots_[i];
    if (slot.input == nullptr) continue;
    if (DeviceGenerates(slot)) {
      absl::Status s = device_.FillRandomOnDevice(Data(slot), ToAbiDType(slot.spec.dtype()),
                                                  NumElements(slot.shape), seed,
                                                  static_cast<int>(i));
      if (!s.ok()) {
        return absl::Status(s.code(),
                            absl::StrCat("input '", slot.spec.name(), "': ", s.message()));
      }
      continue;
    }
    void* dst = Data(slot);
    if (!slot.host) {
      staging_.resize(static_cast<size_t>(slot.bytes));
      dst = staging_.data();
    }
    absl::Status s = GenerateInput(slot.spec, *slot.input, slot.shape, seed, static_cast<int>(i),
                                   blob_root, dst);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("input '", slot.spec.name(), "': ", s.message()));
    }
    if (!slot.host) {
      s = device_.CopyToDevice(Data(slot), staging_.data(), slot.bytes);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status TensorSet::Poison(Slot& slot, bool wait) {
  if (slot.host) {
    PoisonHost(slot.spec.dtype(), Data(slot), static_cast<size_t>(slot.bytes));
    return absl::OkStatus();
  }
  const uint8_t poison = PoisonByte(slot.spec.dtype());
  return wait ? device_.Fill(Data(slot), poison, slot.bytes)
              : device_.QueueFill(Data(slot), poison, slot.bytes);
}

absl::Status TensorSet::AllocateOutputs() {
  for (size_t i = num_inputs_; i < slots_.size(); ++i) {
    Slot& slot = *slots_[i];
    if (slot.spec.scalar()) continue;
    // The new buffers are allocated before the old ones are released, so no trial's outputs
    // start at an address of the previous trial's.
    for (DeviceBuffer* buffer : {&slot.device_buffer, &slot.spare_buffer}) {
      absl::StatusOr<DeviceBuffer> fresh = DeviceBuffer::Allocate(device_, slot.bytes);
      if (!fresh.ok()) return fresh.status();
      *buffer = *std::move(fresh);
    }
  }
  return RenewOutputs();
}

absl::Status TensorSet::RenewOutputs(bool wait) {
  for (size_t i = num_inputs_; i < slots_.size(); ++i) {
    Slot& slot = *slots_[i];
    if (!slot.spec.scalar()) std::swap(slot.device_buffer, slot.spare_buffer);
    absl::Status s = Poison(slot, wait);
    if (!s.ok()) return s;
  }
  RebuildArgs();
  return absl::OkStatus();
}

absl::StatusOr<const void*> TensorSet::HostView(const Slot& slot) {
  if (slot.host) return static_cast<const void*>(Data(slot));
  staging_.resize(static_cast<size_t>(slot.bytes));
  absl::Status s = device_.CopyToHost(staging_.data(), Data(slot), slot.bytes);
  if (!s.ok()) return s;
  return static_cast<const void*>(staging_.data());
}

namespace {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif
// Outputs from this size on, in a RAM-backed folder, are written by several threads.
constexpr int64_t kParallelWriteFrom = int64_t{256} << 20;
constexpr int kWriteThreads = 8;

// Copies `n` bytes to a shared mapping of a tmpfs file, split over `threads` threads. Each part's
// pages are made first with MADV_POPULATE_WRITE, which reports a full tmpfs as an error where a
// plain store would raise SIGBUS. Returns the first error's errno, 0 when all went well.
int CopyIntoMapping(char* dst, const char* src, size_t n, int threads) {
  const size_t page = 4096;
  const size_t part = std::max(page, (n / static_cast<size_t>(threads) + page - 1) / page * page);
  std::vector<int> errors(static_cast<size_t>(threads), 0);
  auto copy = [&](int t) {
    const size_t begin = std::min(n, part * static_cast<size_t>(t));
    const size_t end = std::min(n, begin + part);
    if (begin >= end) return;
    // The mapping is page-aligned and every part but the last a whole number of pages.
    if (::madvise(dst + begin, end - begin, MADV_POPULATE_WRITE) != 0) {
      errors[static_cast<size_t>(t)] = errno;
      return;
    }
    std::memcpy(dst + begin, src + begin, end - begin);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(copy, t);
  copy(0);
  for (std::thread& th : pool) th.join();
  for (int e : errors) {
    if (e != 0) return e;
  }
  return 0;
}

}  // namespace

absl::Status TensorSet::WriteDeviceOutput(const std::string& path, const std::string& reuse,
                                          const Slot& slot) {
  const size_t slash = path.rfind('/');
  if (slot.bytes >= kParallelWriteFrom &&
      RamBacked(slash == std::string::npos ? "." : path.substr(0, slash + 1))) {
    absl::StatusOr<bool> written = WriteDeviceOutputInParallel(path, reuse, slot);
    if (!written.ok() || *written) return written.status();
  }
  constexpr int64_t kChunkBytes = int64_t{64} << 20;
  const int64_t chunk = std::min(kChunkBytes, slot.bytes);
  if (static_cast<int64_t>(chunk_.size()) < chunk) chunk_.resize(static_cast<size_t>(chunk));
  int64_t at = 0;
  return WriteFileOver(path, reuse, [&]() -> absl::StatusOr<std::string_view> {
    const int64_t n = std::min(chunk, slot.bytes - at);
    if (n <= 0) return std::string_view();
    absl::Status s =
        device_.CopyToHost(chunk_.data(), static_cast<const char*>(Data(slot)) + at, n);
    if (!s.ok()) return s;
    at += n;
    return std::string_view(reinterpret_cast<const char*>(chunk_.data()),
                            static_cast<size_t>(n));
  });
}

absl::StatusOr<bool> TensorSet::WriteDeviceOutputInParallel(const std::string& path,
                                                            const std::string& reuse,
                                                            const Slot& slot) {
  constexpr int64_t kStageBytes = int64_t{64} << 20;
  if (stage_[0] == nullptr) {
    for (void*& buffer : stage_) {
      buffer = device_.AllocateStaging(kStageBytes);
      if (buffer == nullptr) {  // no page-locked memory: the plain path
        FreeStages();
        return false;
      }
    }
  }
  // A judged pass's file left for reuse is written over: its pages are there already.
  // Either way the file is renamed to `path` once complete.
  int fd = OpenForReuse(reuse);
  const std::string target = fd >= 0 ? reuse : absl::StrCat(path, ".tmp.", ::getpid());
  if (fd < 0) fd = ::open(target.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;  // the plain path says why
  const size_t size = static_cast<size_t>(slot.bytes);
  void* mapped = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(size)) == 0) {
    mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ::close(fd);
  auto give_up = [&] {
    if (mapped != MAP_FAILED) ::munmap(mapped, size);
    ::unlink(target.c_str());
  };
  if (mapped == MAP_FAILED) {
    give_up();
    return false;
  }
  char* dst = static_cast<char*>(mapped);
  const char* src = static_cast<const char*>(Data(slot));
  const int threads = static_cast<int>(
      std::clamp<unsigned>(std::thread::hardware_concurrency() / 2, 1, kWriteThreads));
  // The device copies chunk k + 1 into one staging buffer while the threads copy chunk k out
  // of the other into the file.
  int64_t at = 0;
  int64_t n = std::min(kStageBytes, slot.bytes);
  absl::Status s = device_.CopyToHost(stage_[0], src, n);
  int current = 0;
  while (s.ok() && n > 0) {
    const int64_t next_at = at + n;
    const int64_t next_n = std::min(kStageBytes, slot.bytes - next_at);
    int copy_error = 0;
    std::thread out([&, current, at, n] {
      copy_error = CopyIntoMapping(dst + at, static_cast<const char*>(stage_[current]),
                                   static_cast<size_t>(n), threads);
    });
    if (next_n > 0) s = device_.CopyToHost(stage_[1 - current], src + next_at, next_n);
    out.join();
    used_write_threads_ = true;
    if (copy_error == EINVAL || copy_error == ENOSYS || copy_error == EPERM) {
      // No MADV_POPULATE_WRITE here (before Linux 5.14): the plain path.
      give_up();
      return false;
    }
    if (copy_error != 0) {
      give_up();
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot write output '", slot.spec.name(), "' (", FormatBytes(slot.bytes), ") to ", target,
          ": the job folder's file system could not give it pages, it is full "
          "(MADV_POPULATE_WRITE: ", std::strerror(copy_error), ")"));
    }
    at = next_at;
    n = next_n;
    current = 1 - current;
  }
  if (!s.ok()) {
    give_up();
    return s;
  }
  if (::munmap(mapped, size) != 0 || ::rename(target.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(target.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(e)));
  }
  return true;
}

TensorSet::~TensorSet() { FreeStages(); }

void TensorSet::FreeStages() {
  for (void*& buffer : stage_) {
    if (buffer != nullptr) device_.FreeStaging(buffer);
    buffer = nullptr;
  }
}

absl::StatusOr<std::vector<uint64_t>> TensorSet::InputChecksums() {
  return Checksums(0, num_inputs_);
}

absl::StatusOr<std::vector<uint64_t>> TensorSet::OutputChecksums() {
  return Checksums(num_inputs_, slots_.size());
}

absl::StatusOr<std::vector<uint64_t>> TensorSet::PreviousOutputChecksums() {
  auto swap = [this] {
    for (size_t i = num_inputs_; i < slots_.size(); ++i) {
      Slot& slot = *slots_[i];
      if (!slot.spec.scalar()) std::swap(slot.device_buffer, slot.spare_buffer);
    }
  };
  swap();
  absl::StatusOr<std::vector<uint64_t>> sums = Checksums(num_inputs_, slots_.size());
  swap();
  return sums;
}

absl::Status TensorSet::HostChecksums(size_t begin, size_t end, std::vector<uint64_t>& sums,
                                      std::vector<MemoryRegion>& on_device,
                                      std::vector<size_t>& device_slots) {
  sums.assign(end - begin, 0);
  on_device.clear();
  device_slots.clear();
  for (size_t i = begin; i < end; ++i) {
    const Slot& slot = *slots_[i];
    if (i < num_inputs_ && (slot.input == nullptr || slot.inplace)) continue;
    if (!slot.host && device_checksums_) {
      on_device.push_back({Data(slot), slot.bytes, static_cast<uint64_t>(i)});
      device_slots.push_back(i - begin);
      continue;
    }
    absl::StatusOr<const void*> view = HostView(slot);
    if (!view.ok()) return view.status();
    sums[i - begin] = Checksum64(*view, static_cast<size_t>(slot.bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint64_t>> TensorSet::Checksums(size_t begin, size_t end) {
  std::vector<uint64_t> sums;
  std::vector<MemoryRegion> on_device;
  std::vector<size_t> device_slots;
  if (absl::Status s = HostChecksums(begin, end, sums, on_device, device_slots); !s.ok()) {
    return s;
  }
  if (on_device.empty()) return sums;
  absl::StatusOr<std::vector<uint64_t>> device_sums = device_.ChecksumOnDevice(on_device);
  if (absl::IsUnimplemented(device_sums.status())) {
    device_checksums_ = false;  // from now on, always on the host (sums must stay comparable)
    return Checksums(begin, end);
  }
  if (!device_sums.ok()) return device_sums.status();
  for (size_t k = 0; k < device_slots.size(); ++k) sums[device_slots[k]] = (*device_sums)[k];
  return sums;
}

absl::Status TensorSet::QueueInputCheck(bool with_outputs) {
  queued_ = QueuedCheck();
  const size_t end = with_outputs ? slots_.size() : num_inputs_;
  std::vector<MemoryRegion> on_device;
  absl::Status s = HostChecksums(0, end, queued_.sums, on_device, queued_.device_slots);
  if (!s.ok()) return s;
  if (!on_device.empty()) {
    s = device_.QueueChecksums(on_device);
    if (absl::IsUnimplemented(s)) {
      // A device that cannot queue them: the device's share computed now and waited for, or
      // (no device checksums at all) everything on the host from now on.
      absl::StatusOr<std::vector<uint64_t>> device_sums = device_.ChecksumOnDevice(on_device);
      if (absl::IsUnimplemented(device_sums.status())) {
        device_checksums_ = false;
        return QueueInputCheck(with_outputs);
      }
      if (!device_sums.ok()) return device_sums.status();
      for (size_t k = 0; k < queued_.device_slots.size(); ++k) {
        queued_.sums[queued_.device_slots[k]] = (*device_sums)[k];
      }
      queued_.device_slots.clear();
    } else if (!s.ok()) {
      return s;
    }
  }
  queued_.active = true;
  return absl::OkStatus();
}

absl::Status TensorSet::FinishInputCheck(const std::vector<uint64_t>& before,
                                         std::vector<uint64_t>* output_sums) {
  if (!queued_.active) return absl::InternalError("no input check was queued");
  QueuedCheck queued = std::move(queued_);
  queued_ = QueuedCheck();
  if (!queued.device_slots.empty()) {
    absl::StatusOr<std::vector<uint64_t>> device_sums = device_.TakeQueuedChecksums();
    if (!device_sums.ok()) return device_sums.status();
    if (device_sums->size() != queued.device_slots.size()) {
      return absl::InternalError(absl::StrCat("the device returned ", device_sums->size(),
                                              " queued checksums for ",
                                              queued.device_slots.size(), " tensors"));
    }
    for (size_t k = 0; k < queued.device_slots.size(); ++k) {
      queued.sums[queued.device_slots[k]] = (*device_sums)[k];
    }
  }
  if (output_sums != nullptr && queued.sums.size() != slots_.size()) {
    return absl::InternalError("the queued input check has no output checksums");
  }
  return CompareInputs(queued.sums, before, output_sums);
}

absl::StatusOr<std::vector<std::string>> TensorSet::OutputBytes() {
  std::vector<std::string> bytes;
  for (size_t i = num_inputs_; i < slots_.size(); ++i) {
    absl::StatusOr<const void*> view = HostView(*slots_[i]);
    if (!view.ok()) return view.status();
    bytes.emplace_back(static_cast<const char*>(*view), static_cast<size_t>(slots_[i]->bytes));
  }
  return bytes;
}

int64_t TensorSet::output_elements(int o) const {
  return NumElements(slots_[num_inputs_ + static_cast<size_t>(o)]->shape);
}

absl::Status TensorSet::GenerateInto(const Slot& slot, size_t index, uint64_t seed,
                                     const std::string& blob_root, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(slot.bytes));
  absl::Status s = GenerateInput(slot.spec, *slot.input, slot.shape, seed,
                                 static_cast<int>(index), blob_root, out.data());
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("input '", slot.spec.name(), "': ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status TensorSet::PerturbInputs(uint64_t seed, uint64_t perturb_seed,
                                      const std::string& blob_root, bool intact) {
  std::vector<uint8_t> values, fresh;
  for (size_t i = 0; i < num_inputs_; ++i) {
    Slot& slot = *slots_[i];
    if (slot.input == nullptr || slot.spec.scalar() ||
        slot.input->kind() != v1::WorkloadInput::RANDOM || slot.bytes == 0) {
      continue;
    }
    // Not intact: the whole input is written again, from the host.
    absl::Status s = intact ? absl::OkStatus() : GenerateInto(slot, i, seed, blob_root, values);
    if (!s.ok()) return s;
    // Whole storage units (bytes for sub-byte types, else elements). Few of them: a cache keyed
    // by a fingerprint of k elements notices the change only with probability ~k*changed/units.
    const int64_t unit = std::max<int64_t>(1, DTypeBits(slot.spec.dtype()) / 8);
    const int64_t per_unit = std::max<int64_t>(1, unit * 8 / DTypeBits(slot.spec.dtype()));
    const int64_t units = slot.bytes / unit;
    const int64_t changed = std::min<int64_t>(16, 1 + units / 65536);
    uint64_t state = perturb_seed ^ (0x9e3779b97f4a7c15ull * (i + 1));
    for (int64_t k = 0; k < changed; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int64_t u = static_cast<int64_t>((state >> 11) % static_cast<uint64_t>(units));
      // The unit's elements as GenerateInput(perturb_seed) gives them, alone.
      // (The last byte of an odd-length float4 input holds one element.)
      fresh.assign(static_cast<size_t>(unit), 0);
      FillRandomSpan(slot.spec.dtype(), u * per_unit,
                     std::min(per_unit, NumElements(slot.shape) - u * per_unit), perturb_seed,
                     static_cast<int>(i), fresh.data());
      if (!intact) {
        std::memcpy(values.data() + u * unit, fresh.data(), static_cast<size_t>(unit));
        continue;
      }
      // The rest of the input already holds these values: the changed units only.
      char* at = static_cast<char*>(Data(slot)) + u * unit;
      if (slot.host) {
        std::memcpy(at, fresh.data(), static_cast<size_t>(unit));
      } else if (absl::Status c = device_.CopyToDevice(at, fresh.data(), unit); !c.ok()) {
        return c;
      }
    }
    if (intact) continue;
    if (slot.host) {
      std::memcpy(Data(slot), values.data(), values.size());
    } else if (absl::Status c = device_.CopyToDevice(Data(slot), values.data(), slot.bytes);
               !c.ok()) {
      return c;
    }
  }
  return absl::OkStatus();
}

absl::Status TensorSet::CheckInputsUnchanged(const std::vector<uint64_t>& before,
                                             std::vector<uint64_t>* output_sums) {
  absl::StatusOr<std::vector<uint64_t>> after =
      output_sums != nullptr ? Checksums(0, slots_.size()) : InputChecksums();
  if (!after.ok()) return after.status();
  return CompareInputs(*after, before, output_sums);
}

absl::Status TensorSet::CompareInputs(const std::vector<uint64_t>& after,
                                      const std::vector<uint64_t>& before,
                                      std::vector<uint64_t>* output_sums) const {
  if (output_sums != nullptr) {
    output_sums->assign(after.begin() + static_cast<std::ptrdiff_t>(num_inputs_), after.end());
  }
  for (size_t i = 0; i < num_inputs_ && i < before.size(); ++i) {
    if (after[i] != before[i]) {
      return Rejected(integrity::Reason(
          integrity::kInputMutation,
          absl::StrCat("input '", slots_[i]->spec.name(), "' was modified by the call")));
    }
  }
  return absl::OkStatus();
}

absl::Status TensorSet::WriteOutputs(const std::string& dir, int trial, v1::TrialOutputs* record,
                                     bool recheck) {
  record->set_trial(trial);
  record->clear_outputs();
  for (size_t i = num_inputs_; i < slots_.size(); ++i) {
    const Slot& slot = *slots_[i];
    std::string path = WorkerOutputPath(dir, trial, slot.spec.name(), recheck);
    std::string reuse = WorkerKeptPath(dir, trial, slot.spec.name(), recheck);
    if (struct stat info; ::lstat(reuse.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      reuse = WorkerReusePath(dir, slot.spec.name());
    }
    absl::Status s =
        slot.host ? WriteFileOver(path, reuse,
                                  OnePart(std::string_view(static_cast<const char*>(Data(slot)),
                                                           static_cast<size_t>(slot.bytes))))
                  : WriteDeviceOutput(path, reuse, slot);
    if (!s.ok()) return s;
    v1::OutputTensor* out = record->add_outputs();
    out->set_name(slot.spec.name());
    out->set_dtype(slot.spec.dtype());
    for (int64_t d : slot.shape) out->add_shape(d);
    out->set_path(path);
  }
  return absl::OkStatus();
}

}  // namespace kiln
