#include "harness/backend/level_zero/level_zero_device.h"

#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/common/embedded_file.h"

namespace kiln {

extern const EmbeddedFile kZeBuiltinKernels[];
extern const int kZeBuiltinKernels_count;

namespace {

constexpr int64_t kFallbackCacheBytes = int64_t{64} << 20;  // when the device reports none
constexpr uint32_t kFlushGroupSize = 256;
constexpr int64_t kFlushElementBytes = 16;  // one uint4

int64_t RoundUpToAlignment(int64_t bytes) {
  int64_t a = Device::kAlignment;
  return bytes <= 0 ? a : (bytes + a - 1) / a * a;
}

absl::Status NoDevice(absl::string_view reason) {
  return absl::FailedPreconditionError(absl::StrCat("no Level Zero device: ", reason));
}

}  // namespace

absl::string_view BuiltinKernelsSpirv() {
  if (kZeBuiltinKernels_count < 1) return {};
  return absl::string_view(kZeBuiltinKernels[0].data, kZeBuiltinKernels[0].size);
}

absl::StatusOr<std::unique_ptr<LevelZeroDevice>> LevelZeroDevice::Open(int index, const ZeApi* ze) {
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("request.device_index: ", index, " is not a GPU index"));
  }
  if (ze == nullptr) {
    absl::StatusOr<const ZeApi*> loaded = LoadZeApi();
    if (!loaded.ok()) return NoDevice(loaded.status().message());
    ze = *loaded;
  }
  absl::StatusOr<std::vector<ZeDeviceInfo>> devices = ListLevelZeroDevices(ze);
  if (!devices.ok()) return devices.status();
  if (index >= static_cast<int>(devices->size())) {
    return absl::InvalidArgumentError(absl::StrCat("request.device_index: GPU ", index,
                                                   " does not exist (this node has ",
                                                   devices->size(), ")"));
  }
  std::unique_ptr<LevelZeroDevice> device(new LevelZeroDevice(*ze, (*devices)[index]));
  if (absl::Status s = device->Initialize(); !s.ok()) return NoDevice(s.message());
  std::fprintf(
      stderr, "kiln-worker: Level Zero device %d: %s, cache %lld MiB, %s, API %u.%u, driver %s\n",
      index, device->info_.name.c_str(), static_cast<long long>(device->info_.cache_bytes >> 20),
      device->info_.timer.Describe().c_str(), ZE_MAJOR_VERSION(device->info_.api_version),
      ZE_MINOR_VERSION(device->info_.api_version), device->info_.driver_version.c_str());
  return device;
}

absl::Status LevelZeroDevice::Initialize() {
  ze_context_desc_t context_desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  if (absl::Status s =
          Check(ze_.ContextCreate(info_.driver, &context_desc, &context_), "zeContextCreate");
      !s.ok()) {
    return s;
  }
  ze_command_queue_desc_t queue_desc{};
  queue_desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  queue_desc.ordinal = 0;  // the compute group: on Intel GPUs, ordinal 0 computes and copies
  queue_desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  queue_desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  if (absl::Status s =
          Check(ze_.CommandListCreateImmediate(context_, info_.device, &queue_desc, &list_),
                "zeCommandListCreateImmediate");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CreateEvents(); !s.ok()) return s;
  return CreateBuiltinKernels();
}

absl::Status LevelZeroDevice::CreateEvents() {
  ze_event_pool_desc_t timestamps{
      ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
      ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 2};
  ze_event_pool_desc_t sync{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                            ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_device_handle_t device = info_.device;
  absl::Status s = Check(ze_.EventPoolCreate(context_, &timestamps, 1, &device, &timestamp_pool_),
                         "zeEventPoolCreate(kernel timestamps)");
  if (s.ok()) {
    s = Check(ze_.EventPoolCreate(context_, &sync, 1, &device, &sync_pool_), "zeEventPoolCreate");
  }
  auto create = [&](ze_event_pool_handle_t pool, uint32_t index, ze_event_handle_t* event) {
    ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, index, ZE_EVENT_SCOPE_FLAG_HOST,
                         ZE_EVENT_SCOPE_FLAG_HOST};
    if (s.ok()) s = Check(ze_.EventCreate(pool, &desc, event), "zeEventCreate");
  };
  create(timestamp_pool_, 0, &start_);
  create(timestamp_pool_, 1, &end_);
  create(sync_pool_, 0, &sync_);
  return s;
}

absl::Status LevelZeroDevice::CreateBuiltinKernels() {
  absl::string_view spirv = BuiltinKernelsSpirv();
  if (spirv.empty()) return absl::InternalError("kiln was built without its Level Zero kernels");
  ze_module_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  desc.inputSize = spirv.size();
  desc.pInputModule = reinterpret_cast<const uint8_t*>(spirv.data());
  absl::Status s = Check(ze_.ModuleCreate(context_, info_.device, &desc, &module_, nullptr),
                         "zeModuleCreate(kiln built-in kernels)");
  auto create = [&](const char* name, ze_kernel_handle_t* kernel) {
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
    if (s.ok())
      s = Check(ze_.KernelCreate(module_, &kdesc, kernel),
                absl::StrCat("zeKernelCreate(", name, ")"));
  };
  create("kiln_flush", &flush_kernel_);
  create("kiln_marker", &marker_kernel_);
  if (s.ok())
    s = Check(ze_.KernelSetGroupSize(flush_kernel_, kFlushGroupSize, 1, 1),
              "zeKernelSetGroupSize(kiln_flush)");
  if (s.ok())
    s = Check(ze_.KernelSetGroupSize(marker_kernel_, 1, 1, 1), "zeKernelSetGroupSize(kiln_marker)");
  return s;
}

LevelZeroDevice::~LevelZeroDevice() {
  if (!failure_.ok()) return;  // a lost device may hang any call; the process is exiting
  flush_buffer_ = DeviceBuffer();
  if (flush_kernel_ != nullptr) ze_.KernelDestroy(flush_kernel_);
  if (marker_kernel_ != nullptr) ze_.KernelDestroy(marker_kernel_);
  if (module_ != nullptr) ze_.ModuleDestroy(module_);
  for (ze_event_handle_t event : {start_, end_, sync_}) {
    if (event != nullptr) ze_.EventDestroy(event);
  }
  if (timestamp_pool_ != nullptr) ze_.EventPoolDestroy(timestamp_pool_);
  if (sync_pool_ != nullptr) ze_.EventPoolDestroy(sync_pool_);
  if (list_ != nullptr) ze_.CommandListDestroy(list_);
  if (context_ != nullptr) ze_.ContextDestroy(context_);
}

absl::Status LevelZeroDevice::Check(ze_result_t result, absl::string_view call) {
  if (result == ZE_RESULT_SUCCESS) return absl::OkStatus();
  absl::Status status = ZeCallStatus(result, call);
  if (result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY) return status;  // not sticky
  if (failure_.ok()) failure_ = status;
  return status;
}

absl::StatusOr<void*> LevelZeroDevice::Allocate(int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative allocation ", bytes));
  ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
  void* ptr = nullptr;
  absl::Status s =
      Check(ze_.MemAllocDevice(context_, &desc, static_cast<size_t>(RoundUpToAlignment(bytes)),
                               kAlignment, info_.device, &ptr),
            absl::StrCat("zeMemAllocDevice(", bytes, " bytes)"));
  if (!s.ok()) return s;
  return ptr;
}

void LevelZeroDevice::Free(void* ptr) {
  if (ptr == nullptr || !failure_.ok()) return;
  absl::Status s = Check(ze_.MemFree(context_, ptr), "zeMemFree");
  if (!s.ok()) std::fprintf(stderr, "kiln-worker: %s\n", s.ToString().c_str());
}

absl::Status LevelZeroDevice::Synchronize() {
  if (!failure_.ok()) return failure_;
  absl::Status s =
      Check(ze_.CommandListAppendBarrier(list_, sync_, 0, nullptr), "zeCommandListAppendBarrier");
  if (s.ok()) s = Check(ze_.EventHostSynchronize(sync_, UINT64_MAX), "zeEventHostSynchronize");
  if (s.ok()) s = Check(ze_.EventHostReset(sync_), "zeEventHostReset");
  return s;
}

absl::Status LevelZeroDevice::CopyToDevice(void* dst, const void* src, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s = Check(ze_.CommandListAppendMemoryCopy(
                             list_, dst, src, static_cast<size_t>(bytes), nullptr, 0, nullptr),
                         "zeCommandListAppendMemoryCopy(host to device)");
  return s.ok() ? Synchronize() : s;
}

absl::Status LevelZeroDevice::CopyToHost(void* dst, const void* src, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s = Check(ze_.CommandListAppendMemoryCopy(
                             list_, dst, src, static_cast<size_t>(bytes), nullptr, 0, nullptr),
                         "zeCommandListAppendMemoryCopy(device to host)");
  return s.ok() ? Synchronize() : s;
}

absl::Status LevelZeroDevice::Fill(void* dst, uint8_t value, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s =
      Check(ze_.CommandListAppendMemoryFill(list_, dst, &value, 1, static_cast<size_t>(bytes),
                                            nullptr, 0, nullptr),
            "zeCommandListAppendMemoryFill");
  return s.ok() ? Synchronize() : s;
}

kiln_context LevelZeroDevice::Context() const {
  kiln_context ctx{};
  ctx.abi_version = KILN_ABI_VERSION;
  ctx.backend = KILN_BACKEND_LEVEL_ZERO;
  ctx.stream = list_;
  ctx.device = info_.device;
  ctx.context = context_;
  return ctx;
}

int64_t LevelZeroDevice::DefaultFlushBytes() const {
  return 2 * (info_.cache_bytes > 0 ? info_.cache_bytes : kFallbackCacheBytes);
}

absl::Status LevelZeroDevice::Flush(int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes > 0) {
    if (absl::Status s = GrowBuffer(*this, flush_buffer_, bytes); !s.ok()) return s;
    void* flush_data = flush_buffer_.data();
    uint64_t n = static_cast<uint64_t>(bytes / kFlushElementBytes);
    if (n == 0) n = 1;
    ze_group_count_t groups{static_cast<uint32_t>((n + kFlushGroupSize - 1) / kFlushGroupSize), 1,
                            1};
    absl::Status s =
        Check(ze_.KernelSetArgumentValue(flush_kernel_, 0, sizeof(void*), &flush_data),
              "zeKernelSetArgumentValue(kiln_flush, 0)");
    if (s.ok()) {
      s = Check(ze_.KernelSetArgumentValue(flush_kernel_, 1, sizeof n, &n),
                "zeKernelSetArgumentValue(kiln_flush, 1)");
    }
    if (s.ok()) {
      s = Check(
          ze_.CommandListAppendLaunchKernel(list_, flush_kernel_, &groups, nullptr, 0, nullptr),
          "zeCommandListAppendLaunchKernel(kiln_flush)");
    }
    if (!s.ok()) return s;
  }
  return Synchronize();
}

absl::Status LevelZeroDevice::AppendMarker(ze_event_handle_t event) {
  ze_group_count_t one{1, 1, 1};
  absl::Status s =
      Check(ze_.CommandListAppendBarrier(list_, nullptr, 0, nullptr), "zeCommandListAppendBarrier");
  if (s.ok()) {
    s = Check(ze_.CommandListAppendLaunchKernel(list_, marker_kernel_, &one, event, 0, nullptr),
              "zeCommandListAppendLaunchKernel(kiln_marker)");
  }
  if (s.ok()) {
    s = Check(ze_.CommandListAppendBarrier(list_, nullptr, 0, nullptr),
              "zeCommandListAppendBarrier");
  }
  return s;
}

absl::Status LevelZeroDevice::ReadSpan(double* ms) {
  ze_kernel_timestamp_result_t start{}, end{};
  absl::Status s =
      Check(ze_.EventQueryKernelTimestamp(start_, &start), "zeEventQueryKernelTimestamp(start)");
  if (s.ok()) {
    s = Check(ze_.EventQueryKernelTimestamp(end_, &end), "zeEventQueryKernelTimestamp(end)");
  }
  if (s.ok()) s = Check(ze_.EventHostReset(start_), "zeEventHostReset");
  if (s.ok()) s = Check(ze_.EventHostReset(end_), "zeEventHostReset");
  if (!s.ok()) return s;
  absl::StatusOr<double> span =
      SpanMilliseconds(start.global.kernelEnd, end.global.kernelStart, info_.timer);
  if (!span.ok()) return span.status();
  *ms = *span;
  return absl::OkStatus();
}

absl::StatusOr<double> LevelZeroDevice::TimeCall(const std::function<absl::Status()>& call,
                                                 bool* throttled) {
  if (throttled != nullptr) *throttled = false;
  if (!failure_.ok()) return failure_;
  if (absl::Status s = AppendMarker(start_); !s.ok()) return s;
  if (absl::Status s = call(); !s.ok()) return s;
  if (absl::Status s = AppendMarker(end_); !s.ok()) return s;
  if (absl::Status s = Synchronize(); !s.ok()) return s;
  double ms = 0;
  if (absl::Status s = ReadSpan(&ms); !s.ok()) return s;
  return ms;
}

}  // namespace kiln
