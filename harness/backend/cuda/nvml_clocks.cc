#include "harness/backend/cuda/nvml_clocks.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "harness/backend/cuda/shared_library.h"

namespace kiln {

// The few NVML entry points used, declared here (building kiln needs no NVML header). The values
// are NVML's stable ABI: nvmlReturn_t 0 = NVML_SUCCESS, nvmlClockType_t 1 = NVML_CLOCK_SM and
// 2 = NVML_CLOCK_MEM, nvmlTemperatureSensors_t 0 = NVML_TEMPERATURE_GPU.
struct NvmlApi {
  static constexpr int kSuccess = 0;
  static constexpr int kClockSm = 1;
  static constexpr int kClockMem = 2;
  static constexpr int kTemperatureGpu = 0;
  using Device = void*;
  int (*Init)() = nullptr;  // nvmlInit_v2
  const char* (*ErrorString)(int) = nullptr;
  int (*HandleByPciBusId)(const char*, Device*) = nullptr;  // nvmlDeviceGetHandleByPciBusId_v2
  int (*ClockInfo)(Device, int, unsigned*) = nullptr;
  int (*DefaultApplicationsClock)(Device, int, unsigned*) = nullptr;
  int (*MaxClockInfo)(Device, int, unsigned*) = nullptr;
  int (*Temperature)(Device, int, unsigned*) = nullptr;  // optional
};

namespace {

constexpr char kLibrary[] = "libnvidia-ml.so.1";

std::string NvmlText(const NvmlApi& api, int result) {
  const char* text = api.ErrorString != nullptr ? api.ErrorString(result) : nullptr;
  return text != nullptr ? text : absl::StrCat("NVML error ", result);
}

absl::Status ResolveAll(void* handle, NvmlApi* api) {
  absl::Status s;
  auto resolve = [&](const char* name, auto* fn) {
    if (s.ok()) s = ResolveSymbol(handle, name, kLibrary, fn);
  };
  resolve("nvmlInit_v2", &api->Init);
  resolve("nvmlErrorString", &api->ErrorString);
  resolve("nvmlDeviceGetHandleByPciBusId_v2", &api->HandleByPciBusId);
  resolve("nvmlDeviceGetClockInfo", &api->ClockInfo);
  resolve("nvmlDeviceGetDefaultApplicationsClock", &api->DefaultApplicationsClock);
  resolve("nvmlDeviceGetMaxClockInfo", &api->MaxClockInfo);
  if (s.ok()) (void)ResolveSymbol(handle, "nvmlDeviceGetTemperature", kLibrary, &api->Temperature);
  return s;
}

// Loads and initialises NVML; kept for the life of the process.
absl::StatusOr<const NvmlApi*> LoadNvml() {
  absl::StatusOr<void*> handle = OpenSharedLibrary({kLibrary});
  if (!handle.ok()) return handle.status();
  auto* api = new NvmlApi();
  absl::Status s = ResolveAll(*handle, api);
  if (s.ok()) {
    if (int r = api->Init(); r != NvmlApi::kSuccess) {
      s = absl::UnavailableError(absl::StrCat("nvmlInit: ", NvmlText(*api, r)));
    }
  }
  if (!s.ok()) {
    delete api;
    return s;
  }
  return api;
}

}  // namespace

std::unique_ptr<NvmlClocks> NvmlClocks::Open(const std::string& pci_bus_id, std::string* why) {
  static const absl::StatusOr<const NvmlApi*>* loaded =
      new absl::StatusOr<const NvmlApi*>(LoadNvml());
  if (!loaded->ok()) {
    *why = std::string(loaded->status().message());
    return nullptr;
  }
  const NvmlApi& api = ***loaded;
  NvmlApi::Device device = nullptr;
  if (int r = api.HandleByPciBusId(pci_bus_id.c_str(), &device); r != NvmlApi::kSuccess) {
    *why = absl::StrCat("nvmlDeviceGetHandleByPciBusId(", pci_bus_id, "): ", NvmlText(api, r));
    return nullptr;
  }
  unsigned default_mhz = 0;
  if (api.DefaultApplicationsClock(device, NvmlApi::kClockSm, &default_mhz) != NvmlApi::kSuccess ||
      default_mhz == 0) {
    default_mhz = 0;
    if (api.MaxClockInfo(device, NvmlApi::kClockSm, &default_mhz) != NvmlApi::kSuccess) {
      default_mhz = 0;
    }
  }
  return std::unique_ptr<NvmlClocks>(new NvmlClocks(&api, device, default_mhz));
}

unsigned NvmlClocks::SmClockMhz() const {
  unsigned mhz = 0;
  if (api_->ClockInfo(device_, NvmlApi::kClockSm, &mhz) != NvmlApi::kSuccess) return 0;
  return mhz;
}

bool NvmlClocks::Throttled() const {
  if (default_sm_mhz_ == 0) return false;
  unsigned mhz = SmClockMhz();
  return mhz != 0 && mhz < kThrottledFraction * default_sm_mhz_;
}

std::string NvmlClocks::Describe() const {
  auto text = [](unsigned value, const char* unit) {
    return value == 0 ? std::string("?") : absl::StrCat(value, unit);
  };
  unsigned mem = 0, temperature = 0;
  if (api_->ClockInfo(device_, NvmlApi::kClockMem, &mem) != NvmlApi::kSuccess) mem = 0;
  if (api_->Temperature == nullptr ||
      api_->Temperature(device_, NvmlApi::kTemperatureGpu, &temperature) != NvmlApi::kSuccess) {
    temperature = 0;
  }
  return absl::StrCat("SM ", text(SmClockMhz(), " MHz"), " (default ",
                      text(default_sm_mhz_, " MHz"), "), memory ", text(mem, " MHz"), ", ",
                      text(temperature, " C"));
}

}  // namespace kiln
