#include "server/evaluation/folder_reaper.h"

#include <chrono>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/common/files.h"
#include "server/log_line.h"
#include "server/thread_nice.h"

namespace kiln {

FolderReaper::FolderReaper(bool log) : log_(log), thread_([this] { Loop(); }) {}

FolderReaper::~FolderReaper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

void FolderReaper::Discard(const std::string& path, std::function<void()> then) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string target = path;
  if (!fs::exists(fs::symlink_status(path, ec))) {
    target.clear();  // nothing to remove; `then` still runs in order
  } else {
    const fs::path p(path);
    int64_t n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = next_++;
    }
    const std::string hidden =
        (p.parent_path() / absl::StrCat(".discarded-", n, "-", p.filename().string())).string();
    fs::rename(p, hidden, ec);
    if (!ec) target = hidden;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(std::move(target), std::move(then));
  }
  work_.notify_all();
}

bool FolderReaper::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (queue_.empty() && !removing_) return false;
  idle_.wait(lock, [this] { return queue_.empty() && !removing_; });
  return true;
}

int64_t FolderReaper::removed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return removed_;
}

void FolderReaper::Loop() {
  // Removal is housekeeping: the runs' own threads and workers come first.
  (void)NiceThisThread(10);
  for (;;) {
    std::pair<std::string, std::function<void()>> item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is removed
      item = std::move(queue_.front());
      queue_.pop_front();
      removing_ = true;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!item.first.empty()) {
      if (absl::Status s = RemoveTree(item.first); !s.ok()) {
        LogEvent(false, "discarded_folder_not_removed",
                 {{"path", item.first}, {"error", std::string(s.message())}});
      }
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (log_ && !item.first.empty() && s >= 0.01) {
      LogEvent(false, "folder_removed",
               {{"path", item.first}, {"seconds", absl::StrFormat("%.3f", s)}});
    }
    if (item.second) item.second();
    {
      std::lock_guard<std::mutex> lock(mu_);
      removing_ = false;
      if (!item.first.empty()) ++removed_;
    }
    idle_.notify_all();
  }
}

void DiscardFolder(FolderReaper* reaper, const std::string& path, std::function<void()> then) {
  if (reaper != nullptr) {
    reaper->Discard(path, std::move(then));
    return;
  }
  (void)RemoveTree(path);
  if (then) then();
}

}  // namespace kiln
