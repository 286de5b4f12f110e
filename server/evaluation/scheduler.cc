#include "server/evaluation/scheduler.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/log_line.h"
#include "server/thread_nice.h"

namespace kiln {

Scheduler::Scheduler(int compile_threads, int max_queue, const std::vector<NodeBackend>& backends,
                     Metrics* metrics, int compile_nice)
    : max_queue_(std::max(1, max_queue)), metrics_(metrics) {
  for (const NodeBackend& b : backends) {
    backend_names_.push_back(b.name);
    busy_.emplace_back(b.devices.size(), false);
  }
  device_queues_.resize(backends.size());
  for (int i = 0; i < std::max(1, compile_threads); ++i) {
    threads_.emplace_back([this, compile_nice] { CompileLoop(compile_nice); });
  }
  for (size_t b = 0; b < backends.size(); ++b) {
    for (size_t d = 0; d < backends[b].devices.size(); ++d) {
      threads_.emplace_back([this, b, d] { DeviceLoop(b, static_cast<int>(d)); });
    }
  }
}

Scheduler::~Scheduler() { Stop(); }

absl::Status Scheduler::Reserve() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!admitting_) return absl::UnavailableError("draining");
  if (reserved_ >= max_queue_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the queue is full (", max_queue_,
                     " runs admitted and unfinished, the limit (--max-queue))"));
  }
  Tick();
  ++reserved_;
  return absl::OkStatus();
}

void Scheduler::Release() { Done(); }

void Scheduler::Done() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Tick();
    --reserved_;
  }
  idle_.notify_all();
}

void Scheduler::Submit(std::shared_ptr<ScheduledRun> run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    compile_queue_.push_back(std::move(run));
  }
  work_.notify_all();
}

void Scheduler::StopAdmitting() {
  std::lock_guard<std::mutex> lock(mu_);
  admitting_ = false;
}

bool Scheduler::admitting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admitting_;
}

void Scheduler::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return reserved_ == 0; });
}

void Scheduler::Stop() {
  StopAdmitting();
  WaitUntilIdle();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Scheduler::CompileLoop(int nice) {
  // The compilers this thread starts inherit its nice value.
  if (nice > 0) {
    if (const int error = NiceThisThread(nice); error != 0) {
      LogEvent(false, "compile_nice_not_set",
               {{"nice", std::to_string(nice)}, {"error", std::strerror(error)}});
    }
  }
  for (;;) {
    std::shared_ptr<ScheduledRun> run;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return stopping_ || !compile_queue_.empty(); });
      if (compile_queue_.empty()) return;
      run = std::move(compile_queue_.front());
      compile_queue_.pop_front();
      ++compiling_;
    }
    run->Compile();
    if (run->NeedsDevice()) {
      auto it = std::find(backend_names_.begin(), backend_names_.end(), run->backend());
      {
        std::lock_guard<std::mutex> lock(mu_);
        --compiling_;
        // Admission only accepts the node's backends, so the queue exists.
        device_queues_[static_cast<size_t>(it - backend_names_.begin())].push_back(std::move(run));
      }
      work_.notify_all();
      continue;
    }
    run->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --compiling_;
    }
    Done();
  }
}

void Scheduler::DeviceLoop(size_t backend, int device) {
  for (;;) {
    std::shared_ptr<ScheduledRun> run;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto& queue = device_queues_[backend];
      work_.wait(lock, [&] {
        return (stopping_ && queue.empty()) || (!queue.empty() && FirstFreeSlot(backend, device));
      });
      if (queue.empty()) return;
      run = std::move(queue.front());
      queue.pop_front();
      Tick();
      busy_[backend][device] = true;
    }
    // The next free slot may take the next queued run now.
    work_.notify_all();
    const absl::Time held_since = absl::Now();
    run->RunOnDevice(device);
    metrics_->DeviceBusy(backend_names_[backend], device,
                         absl::ToDoubleSeconds(absl::Now() - held_since), run->GpuWorkSeconds());
    {
      std::lock_guard<std::mutex> lock(mu_);
      Tick();
      busy_[backend][device] = false;
    }
    // The verdict, its archive record and the answer to the client need no device: the next
    // queued run takes the slot meanwhile.
    work_.notify_all();
    run->Finish();
    run.reset();
    Done();
  }
}

bool Scheduler::FirstFreeSlot(size_t backend, int device) const {
  const std::vector<bool>& busy = busy_[backend];
  for (int d = 0; d < device; ++d) {
    if (!busy[static_cast<size_t>(d)]) return false;
  }
  return true;
}

void Scheduler::Tick() const {
  const absl::Time now = absl::Now();
  const double dt = absl::ToDoubleSeconds(now - last_tick_);
  last_tick_ = now;
  if (reserved_ <= 0 || dt <= 0) return;
  pending_s_ += dt;
  for (const auto& devices : busy_) {
    held_while_pending_slot_s_ += dt * static_cast<double>(
                                           std::count(devices.begin(), devices.end(), true));
  }
}

NodeLoad Scheduler::Load() const {
  std::lock_guard<std::mutex> lock(mu_);
  Tick();
  NodeLoad load;
  load.pending_s = pending_s_;
  load.held_while_pending_slot_s = held_while_pending_slot_s_;
  for (const auto& devices : busy_) load.slots += static_cast<int>(devices.size());
  int on_device = 0;
  for (const auto& devices : busy_) {
    on_device += static_cast<int>(std::count(devices.begin(), devices.end(), true));
  }
  load.running = compiling_ + on_device;
  load.queue_depth = std::max(0, reserved_ - load.running);
  load.busy = busy_;
  return load;
}

}  // namespace kiln
