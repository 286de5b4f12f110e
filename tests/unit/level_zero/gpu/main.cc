// unit_level_zero_gpu: the Level Zero backend end to end ([level_zero]). Needs a Level Zero
// driver and an Intel GPU; elsewhere it prints why it skipped and exits 77, which ctest reports
// as "Skipped".
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "harness/backend/level_zero/ze_devices.h"

int main(int argc, char** argv) {
  absl::StatusOr<std::vector<kiln::ZeDeviceInfo>> devices = kiln::ListLevelZeroDevices();
  if (!devices.ok()) {
    std::printf("SKIPPED unit_level_zero_gpu [level_zero]: %s\n",
                std::string(devices.status().message()).c_str());
    return 77;
  }
  for (const kiln::ZeDeviceInfo& d : *devices) {
    std::printf("Level Zero GPU: %s, %s\n", d.name.c_str(), d.timer.Describe().c_str());
  }
  return Catch::Session().run(argc, argv);
}
