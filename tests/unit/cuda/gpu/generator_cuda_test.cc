// kiln's random inputs generated on the GPU (kiln_fill_random, device_kernels.h) against the host
// generator (FillRandom), bit for bit, for every dtype the device generates: the reference may run
// on another backend than the candidate, and `kiln inputs` reproduces inputs on any machine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "harness/backend/cuda/cuda_device.h"
#include "harness/model/dtype.h"
#include "harness/verify/input_generator.h"
#include "harness/worker/tensor_set.h"

namespace kiln {
namespace {

TEST_CASE("inputs generated on the GPU are the host generator's, bit for bit", "[cuda]") {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  REQUIRE(device.ok());
  // Long enough for float16 subnormals (|z| < 6.1e-5: about 5 in 10^5 elements) and fp8 values
  // at the clamp; odd, so the last Philox block is partial.
  const int64_t numel = (int64_t{1} << 22) + 3;
  for (v1::DType t : {v1::DTYPE_FLOAT32, v1::DTYPE_FLOAT64, v1::DTYPE_BFLOAT16,
                      v1::DTYPE_FLOAT16, v1::DTYPE_FLOAT8_E4M3FN, v1::DTYPE_FLOAT8_E5M2,
                      v1::DTYPE_INT8, v1::DTYPE_INT16, v1::DTYPE_INT32, v1::DTYPE_INT64,
                      v1::DTYPE_BOOL}) {
    for (uint64_t seed : {uint64_t{1}, uint64_t{0xfedcba9876543210ull}}) {
      INFO(DTypeName(t) << ", seed " << seed);
      const int64_t bytes = DTypeStorageBytes(t, numel);
      std::vector<uint8_t> host(static_cast<size_t>(bytes));
      FillRandom(t, numel, seed, 3, host.data());
      absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(**device, bytes + 64);
      REQUIRE(buffer.ok());
      // A guard after the tensor: the kernel writes nothing past numel.
      REQUIRE((*device)->Fill(buffer->data(), 0x5a, bytes + 64).ok());
      absl::Status s = (*device)->FillRandomOnDevice(buffer->data(), ToAbiDType(t), numel, seed, 3);
      REQUIRE(s.ok());
      std::vector<uint8_t> got(static_cast<size_t>(bytes + 64));
      REQUIRE((*device)->CopyToHost(got.data(), buffer->data(), bytes + 64).ok());
      int64_t differing = 0, first = -1;
      for (int64_t i = 0; i < bytes; ++i) {
        if (got[i] != host[i]) {
          if (first < 0) first = i;
          ++differing;
        }
      }
      INFO("first differing byte " << first);
      CHECK(differing == 0);
      CHECK(std::vector<uint8_t>(got.begin() + bytes, got.end()) == std::vector<uint8_t>(64, 0x5a));
    }
  }
  // float4 has no device generator: the caller falls back to the host.
  CHECK(absl::IsUnimplemented((*device)->FillRandomOnDevice(nullptr, KILN_FLOAT4_E2M1, 8, 1, 0)));
}

TEST_CASE("the flush's fill kernel zeroes every byte it is given and nothing after", "[cuda]") {
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  REQUIRE(device.ok());
  // 16-byte words plus a tail the kernel's last thread writes alone.
  for (int64_t bytes : {int64_t{1} << 24, (int64_t{1} << 20) + 13, int64_t{7}}) {
    INFO(bytes << " bytes");
    absl::StatusOr<DeviceBuffer> buffer = DeviceBuffer::Allocate(**device, bytes + 64);
    REQUIRE(buffer.ok());
    REQUIRE((*device)->Fill(buffer->data(), 0x5a, bytes + 64).ok());
    REQUIRE((*device)->ZeroOnDevice(buffer->data(), bytes).ok());
    std::vector<uint8_t> got(static_cast<size_t>(bytes + 64));
    REQUIRE((*device)->CopyToHost(got.data(), buffer->data(), bytes + 64).ok());
    CHECK(std::vector<uint8_t>(got.begin(), got.begin() + bytes) ==
          std::vector<uint8_t>(static_cast<size_t>(bytes), 0));
    CHECK(std::vector<uint8_t>(got.begin() + bytes, got.end()) == std::vector<uint8_t>(64, 0x5a));
  }
}

TEST_CASE("queued checksums are of the memory as it was when they were queued", "[cuda]") {
  // The worker queues a timed call's checksums, then the next call's output poison and flush
  // behind them, and reads the sums once the flush has left the device idle.
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  REQUIRE(device.ok());
  const int64_t bytes = (int64_t{1} << 24) + 24;
  absl::StatusOr<DeviceBuffer> a = DeviceBuffer::Allocate(**device, bytes);
  absl::StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(**device, 4096);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*device)->FillRandomOnDevice(a->data(), KILN_FLOAT32, bytes / 4, 7, 0).ok());
  REQUIRE((*device)->Fill(b->data(), 0x11, 4096).ok());
  const std::vector<MemoryRegion> regions = {{a->data(), bytes, 0}, {b->data(), 4096, 1}};
  absl::StatusOr<std::vector<uint64_t>> direct = (*device)->ChecksumOnDevice(regions);
  REQUIRE(direct.ok());
  CHECK(absl::IsInternal((*device)->TakeQueuedChecksums().status()));  // nothing queued
  REQUIRE((*device)->QueueChecksums(regions).ok());
  // Queued behind the checksums: the last byte of `a` changes, then a flush.
  REQUIRE((*device)->QueueFill(static_cast<uint8_t*>(a->data()) + bytes - 1, 0xee, 1).ok());
  REQUIRE((*device)->Flush(int64_t{1} << 26).ok());
  absl::StatusOr<std::vector<uint64_t>> queued = (*device)->TakeQueuedChecksums();
  REQUIRE(queued.ok());
  CHECK(*queued == *direct);
  absl::StatusOr<std::vector<uint64_t>> after = (*device)->ChecksumOnDevice(regions);
  REQUIRE(after.ok());
  CHECK((*after)[0] != (*direct)[0]);  // one byte changed: the sum sees it
  CHECK((*after)[1] == (*direct)[1]);
  // Taken once; a queue that is never taken is dropped by the next one.
  CHECK(absl::IsInternal((*device)->TakeQueuedChecksums().status()));
  REQUIRE((*device)->QueueChecksums(regions).ok());
  REQUIRE((*device)->QueueChecksums({regions[1]}).ok());
  queued = (*device)->TakeQueuedChecksums();
  REQUIRE(queued.ok());
  CHECK(*queued == std::vector<uint64_t>{(*direct)[1]});
}

TEST_CASE("the device checksum depends on the bytes, not on their address or the grid", "[cuda]") {
  // kiln_checksum64 reads 16-byte pairs when the region is 16-byte aligned and single words
  // otherwise; the sum is the same either way, and any changed word or tail byte changes it.
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(0);
  REQUIRE(device.ok());
  for (int64_t bytes : {int64_t{0}, int64_t{5}, int64_t{8}, int64_t{24}, int64_t{4096 + 8},
                        (int64_t{1} << 26) + 8 * 7 + 3}) {
    INFO(bytes << " bytes");
    absl::StatusOr<DeviceBuffer> a = DeviceBuffer::Allocate(**device, bytes + 64);
    absl::StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(**device, bytes + 64);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    std::vector<uint8_t> host(static_cast<size_t>(bytes));
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>((i * 131) ^ (i >> 9));
    uint8_t* aligned = static_cast<uint8_t*>(a->data());   // 16-byte aligned (cudaMalloc)
    uint8_t* offset = static_cast<uint8_t*>(b->data()) + 8;  // 8-byte aligned only
    REQUIRE((*device)->CopyToDevice(aligned, host.data(), bytes).ok());
    REQUIRE((*device)->CopyToDevice(offset, host.data(), bytes).ok());
    absl::StatusOr<std::vector<uint64_t>> sums =
        (*device)->ChecksumOnDevice({{aligned, bytes, 3}, {offset, bytes, 3}});
    REQUIRE(sums.ok());
    CHECK((*sums)[0] == (*sums)[1]);
    if (bytes == 0) continue;
    // One byte changed at the first word, the middle, the last word, the tail.
    for (int64_t at : {int64_t{0}, bytes / 2, (bytes / 8) * 8 - 1, bytes - 1}) {
      if (at < 0) continue;
      std::vector<uint8_t> changed = host;
      changed[static_cast<size_t>(at)] ^= 0x40;
      REQUIRE((*device)->CopyToDevice(offset, changed.data(), bytes).ok());
      absl::StatusOr<std::vector<uint64_t>> other =
          (*device)->ChecksumOnDevice({{offset, bytes, 3}});
      REQUIRE(other.ok());
      CHECK((*other)[0] != (*sums)[0]);
    }
    if (bytes >= 16) {  // two words swapped
      std::vector<uint8_t> swapped = host;
      std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
      if (swapped != host) {
        REQUIRE((*device)->CopyToDevice(aligned, swapped.data(), bytes).ok());
        absl::StatusOr<std::vector<uint64_t>> other =
            (*device)->ChecksumOnDevice({{aligned, bytes, 3}});
        REQUIRE(other.ok());
        CHECK((*other)[0] != (*sums)[0]);
      }
    }
  }
}

}  // namespace
}  // namespace kiln
