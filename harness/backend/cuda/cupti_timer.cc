#include "harness/backend/cuda/cupti_timer.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/backend/cuda/activity_span.h"

namespace kiln {
namespace {

// Activity buffers are 1 MiB (CUPTI recommends 1 to 10 MB; one timed call's records fill a few
// KB) and reused: every flush (after each trial's timed calls, and after each call timed at once)
// hands the current buffer back, and CUPTI asks for a new one at the next CUDA call. With a fresh 8 MiB buffer each time that next
// call took about 0.4 ms on an H200 (docs/verdict-time.md).
constexpr size_t kBufferBytes = size_t{1} << 20;
constexpr size_t kBufferAlignment = 8;  // CUPTI's requirement for activity buffers
constexpr size_t kPooledBuffers = 16;   // buffers kept for reuse; more are freed

// Records CUPTI hands back (on its own thread, or inside cuptiActivityFlushAll). They are kept
// only while a call is being timed; the rest of the worker's CUDA work is traced too and
// dropped here.
struct ActivityLog {
  std::mutex mu;
  const CuptiApi* api = nullptr;
  bool collecting = false;
  std::vector<ApiRecord> api_records;
  std::vector<GpuRecord> gpu_records;
  size_t dropped = 0;
};

ActivityLog& Log() {
  static ActivityLog* log = new ActivityLog();  // CUPTI may call back until the process ends
  return *log;
}

// Buffers CUPTI handed back, for its next requests (it calls from its own threads too).
struct BufferPool {
  std::mutex mu;
  std::vector<uint8_t*> free;
};

BufferPool& Pool() {
  static BufferPool* pool = new BufferPool();
  return *pool;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* reused = nullptr;
  {
    BufferPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (!pool.free.empty()) {
      reused = pool.free.back();
      pool.free.pop_back();
    }
  }
  *buffer = reused != nullptr
                ? reused
                : static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void ReleaseBuffer(uint8_t* buffer) {
  if (buffer == nullptr) return;
  {
    BufferPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.free.size() < kPooledBuffers) {
      pool.free.push_back(buffer);
      return;
    }
  }
  std::free(buffer);
}

void Append(const CUpti_Activity* record, ActivityLog& log) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      log.gpu_records.push_back({absl::StrCat("kernel ", k->name != nullptr ? k->name : "?"),
                                 k->start, k->end, k->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      log.gpu_records.push_back(
          {absl::StrCat("memcpy kind ", static_cast<int>(m->copyKind), " ", m->bytes, " B"),
           m->start, m->end, m->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      log.gpu_records.push_back({absl::StrCat("memset value ", m->value, " ", m->bytes, " B"),
                                 m->start, m->end, m->correlationId});
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      log.api_records.push_back({a->start, a->correlationId});
      break;
    }
    default:
      break;
  }
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                              size_t /*size*/, size_t valid_size) {
  ActivityLog& log = Log();
  {
    std::lock_guard<std::mutex> lock(log.mu);
    if (log.api != nullptr) {
      if (log.collecting) {
        CUpti_Activity* record = nullptr;
        while (log.api->ActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
          Append(record, log);
        }
      }
      // Read (which resets the count) even when not collecting, so that only drops during a
      // timed call are charged to it.
      size_t dropped = 0;
      if (log.api->ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
          log.collecting) {
        log.dropped += dropped;
      }
    }
  }
  ReleaseBuffer(buffer);
}

absl::Status Check(const CuptiApi& api, CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat(call, ": ", CuptiResultText(api, result)));
}

// Registers the buffer callbacks and enables the activity kinds flashinfer-bench records. Once
// per process; the outcome is remembered.
absl::Status EnableTracing(const CuptiApi& api) {
  static const absl::Status* enabled = new absl::Status([&api]() -> absl::Status {
    Log().api = &api;
    absl::Status s = Check(api, api.ActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                           "cuptiActivityRegisterCallbacks");
    const std::pair<CUpti_ActivityKind, const char*> kinds[] = {
        {CUPTI_ACTIVITY_KIND_RUNTIME, "cuptiActivityEnable(RUNTIME)"},
        {CUPTI_ACTIVITY_KIND_DRIVER, "cuptiActivityEnable(DRIVER)"},
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)"},
        {CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(MEMCPY)"},
        {CUPTI_ACTIVITY_KIND_MEMSET, "cuptiActivityEnable(MEMSET)"},
    };
    for (const auto& [kind, call] : kinds) {
      if (s.ok()) s = Check(api, api.ActivityEnable(kind), call);
    }
    return s;
  }());
  return *enabled;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CuptiTimer>> CuptiTimer::Create(const std::string& cudart_dir) {
  absl::StatusOr<const CuptiApi*> api = LoadCupti(cudart_dir);
  if (!api.ok()) return api.status();
  if (absl::Status s = EnableTracing(**api); !s.ok()) return s;
  return std::unique_ptr<CuptiTimer>(new CuptiTimer(**api));
}

void CuptiTimer::StartCollecting() {
  ActivityLog& log = Log();
  std::lock_guard<std::mutex> lock(log.mu);
  log.collecting = true;
  log.api_records.clear();
  log.gpu_records.clear();
  log.dropped = 0;
}

absl::StatusOr<CuptiTimer::Window> CuptiTimer::RunCall(
    const std::function<absl::Status()>& call,
    const std::function<absl::Status()>& synchronize_stream,
    const std::function<absl::Status()>& synchronize) {
  Window w;
  CUptiResult before = api_.GetTimestamp(&w.t0);
  absl::Status status = call();
  absl::Status synced = synchronize_stream();
  w.idle_known = api_.GetTimestamp(&w.stream_idle) == CUPTI_SUCCESS;
  if (synced.ok()) synced = synchronize();
  CUptiResult after = api_.GetTimestamp(&w.t1);
  if (!status.ok()) return status;
  if (!synced.ok()) return synced;
  if (absl::Status s = Check(api_, before, "cuptiGetTimestamp"); !s.ok()) return s;
  if (absl::Status s = Check(api_, after, "cuptiGetTimestamp"); !s.ok()) return s;
  return w;
}

absl::StatusOr<std::vector<CuptiTimer::Sample>> CuptiTimer::Spans(
    const std::vector<Window>& windows) {
  ActivityLog& log = Log();
  // After the synchronize every record of the calls is complete, so a normal flush delivers
  // them; a forced one is the fallback for a buffer that also holds an unfinished record.
  CUptiResult flushed = api_.ActivityFlushAll(0);
  std::vector<CallSpan> spans;
  const auto compute = [&] {
    spans.clear();
    std::lock_guard<std::mutex> lock(log.mu);
    for (const Window& w : windows) {
      spans.push_back(SpanOfCall(log.api_records, log.gpu_records, w.t0, w.t1));
    }
  };
  compute();
  const bool incomplete = std::any_of(spans.begin(), spans.end(),
                                      [](const CallSpan& span) { return span.records == 0; });
  if (incomplete && flushed == CUPTI_SUCCESS) {
    flushed = api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    compute();
  }
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(log.mu);
    log.collecting = false;
    dropped = log.dropped;
    log.api_records.clear();
    log.gpu_records.clear();
  }
  if (absl::Status s = Check(api_, flushed, "cuptiActivityFlushAll"); !s.ok()) return s;
  if (dropped > 0) {
    return absl::InternalError(absl::StrCat(
        "CUPTI dropped ", dropped, " activity records while timing the call; its span is unknown"));
  }
  std::vector<Sample> samples;
  samples.reserve(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    const CallSpan& span = spans[i];
    absl::StatusOr<double> ms = SpanMilliseconds(span);
    if (!ms.ok()) return ms.status();
    Sample sample;
    sample.ms = *ms;
    const Window& w = windows[i];
    sample.unjoined_ns = w.idle_known && span.last_end > w.stream_idle
                             ? static_cast<int64_t>(span.last_end - w.stream_idle)
                             : 0;
    if (i > 0 && spans[i - 1].last_end != 0 && span.first_start >= spans[i - 1].last_end) {
      sample.gap_before_ns = static_cast<int64_t>(span.first_start - spans[i - 1].last_end);
    }
    if (!first_work_.has_value()) {
      first_work_ = span.signatures;
    } else if (absl::Status s = CheckSameWork(*first_work_, span.signatures); !s.ok()) {
      return s;
    }
    for (const auto& [signature, time] : span.work) {
      WorkTime& total = work_[signature];
      total.ns += time.ns;
      total.records += time.records;
    }
    samples.push_back(sample);
  }
  return samples;
}

absl::StatusOr<double> CuptiTimer::TimeCall(
    const std::function<absl::Status()>& call,
    const std::function<absl::Status()>& synchronize_stream,
    const std::function<absl::Status()>& synchronize, int64_t* unjoined_ns) {
  if (unjoined_ns != nullptr) *unjoined_ns = 0;
  deferred_.clear();
  StartCollecting();
  absl::StatusOr<Window> window = RunCall(call, synchronize_stream, synchronize);
  // The records are read (and collecting stops) whatever the call did.
  absl::StatusOr<std::vector<Sample>> samples =
      Spans(window.ok() ? std::vector<Window>{*window} : std::vector<Window>{});
  if (!window.ok()) return window.status();
  if (!samples.ok()) return samples.status();
  if (unjoined_ns != nullptr) *unjoined_ns = samples->front().unjoined_ns;
  return samples->front().ms;
}

absl::Status CuptiTimer::TimeCallDeferred(
    const std::function<absl::Status()>& call,
    const std::function<absl::Status()>& synchronize_stream,
    const std::function<absl::Status()>& synchronize) {
  if (deferred_.empty()) StartCollecting();
  absl::StatusOr<Window> window = RunCall(call, synchronize_stream, synchronize);
  if (!window.ok()) {
    deferred_.clear();
    (void)Spans({});  // stop collecting
    return window.status();
  }
  deferred_.push_back(*window);
  return absl::OkStatus();
}

void CuptiTimer::StartInputSet() {
  first_work_.reset();
  if (deferred_.empty()) return;
  deferred_.clear();
  (void)Spans({});  // stops collecting and drops the records
}

absl::StatusOr<std::vector<CuptiTimer::Sample>> CuptiTimer::TakeDeferred() {
  std::vector<Window> windows;
  windows.swap(deferred_);
  return Spans(windows);
}

std::map<std::string, WorkTime> CuptiTimer::TakeWork() {
  std::map<std::string, WorkTime> work;
  work.swap(work_);
  return work;
}

}  // namespace kiln
