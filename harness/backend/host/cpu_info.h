// What the host backend reports about the machine it runs on, read from /sys and /proc.
#ifndef KILN_HARNESS_BACKEND_HOST_CPU_INFO_H_
#define KILN_HARNESS_BACKEND_HOST_CPU_INFO_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// Size in bytes of the highest-level cache of cpu0
// (/sys/devices/system/cpu/cpu0/cache/index*/{level,size}); 0 when it cannot be read.
int64_t LastLevelCacheBytes(const std::string& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// Parses a sysfs cache size ("32768K", "1M", "512"); -1 when malformed.
int64_t ParseCacheSize(std::string_view text);

// The "model name" of the first processor in /proc/cpuinfo, or the machine name from uname
// when there is none (some ARM kernels), e.g. "AMD EPYC 9654 96-Core Processor".
std::string CpuModelName();

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_HOST_CPU_INFO_H_
