#include "server/evaluation/scratch_space.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/model/validate.h"

namespace kiln {
namespace {

// MemAvailable of /proc/meminfo in bytes; -1 when unread.
int64_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

constexpr char kPrefix[] = "kiln-jobs-";

// Takes `folder`/lock without waiting: its fd, or -1 when another process holds it (or it
// cannot be opened; `create`: made when missing).
int TakeLock(const std::string& folder, bool create) {
  const std::string path = absl::StrCat(folder, "/lock");
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0),
                        0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Removes the folders beside `own` that this user's harnesses left when killed: named
// kiln-jobs-*, owned by this user, their lock file free and older than a minute (a harness
// starting now may have made its lock file and not yet taken it). A folder without a lock file
// is left alone.
void RemoveAbandoned(const std::string& parent, const std::string& own) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  std::vector<std::string> abandoned;
  while (const struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    const std::string path = absl::StrCat(parent, "/", name);
    if (name.rfind(kPrefix, 0) != 0 || path == own) continue;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
      continue;
    }
    struct stat lock {};
    if (::lstat(absl::StrCat(path, "/lock").c_str(), &lock) != 0 || !S_ISREG(lock.st_mode) ||
        ::time(nullptr) - lock.st_mtime < 60) {
      continue;
    }
    const int fd = TakeLock(path, /*create=*/false);
    if (fd < 0) continue;  // its harness runs
    abandoned.push_back(path);
    ::close(fd);
  }
  ::closedir(d);
  for (const std::string& path : abandoned) (void)RemoveTree(path);
}

// Free bytes of the file system holding `dir`, capped by MemAvailable when it is RAM-backed
// (tmpfs or ramfs); -1 when it cannot be read.
int64_t ScratchFreeBytes(const std::string& dir) {
  int64_t free_bytes = FileSystemFreeBytes(dir);
  if (free_bytes < 0) return -1;
  if (RamBacked(dir)) {
    const int64_t available = MemAvailableBytes();
    if (available < 0) return -1;
    free_bytes = std::min(free_bytes, available);
  }
  return free_bytes;
}

}  // namespace

ScratchSpace::ScratchSpace(std::string fast_dir, std::string disk_dir, int64_t worker_cap_bytes,
                           FreeBytesFn free_bytes, FreeBytesFn disk_free_bytes)
    : fast_dir_(std::move(fast_dir)),
      disk_dir_(std::move(disk_dir)),
      worker_cap_bytes_(worker_cap_bytes),
      free_bytes_(std::move(free_bytes)),
      disk_free_bytes_(std::move(disk_free_bytes)) {
  if (!free_bytes_) {
    free_bytes_ = [dir = fast_dir_] { return ScratchFreeBytes(dir); };
  }
  if (!disk_free_bytes_) {
    disk_free_bytes_ = [dir = disk_dir_] { return FileSystemFreeBytes(dir); };
  }
}

bool ScratchSpace::FitsDisk(int64_t total_bytes, std::string* why) const {
  const int64_t free_bytes = disk_free_bytes_();
  if (free_bytes < 0 || total_bytes <= free_bytes) return true;
  if (why != nullptr) {
    *why = absl::StrCat("the data dir's file system has ", FormatBytes(free_bytes), " free");
  }
  return false;
}

bool ScratchSpace::Reserve(int64_t total_bytes, int64_t per_worker_bytes, std::string* why) {
  if (fast_dir_.empty()) {
    if (why != nullptr) *why = "no RAM-backed folder";
    return false;
  }
  if (worker_cap_bytes_ > 0 && per_worker_bytes > worker_cap_bytes_ / 2) {
    if (why != nullptr) {
      *why = absl::StrCat("one worker would write ", FormatBytes(per_worker_bytes),
                          " of outputs, more than half its memory limit of ",
                          FormatBytes(worker_cap_bytes_));
    }
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t free_bytes = free_bytes_();
  // What runs in flight reserved may not be written yet: it is counted against the free space
  // as if it were (a run's files are removed as its workloads end, so this errs on the safe side).
  if (free_bytes < 0 || total_bytes > LLONG_MAX / 4 ||
      reserved_ + total_bytes > free_bytes / 2) {
    if (why != nullptr) {
      *why = free_bytes < 0
                 ? absl::StrCat("the free space of ", fast_dir_, " cannot be read")
                 : absl::StrCat("the run's outputs (", FormatBytes(total_bytes),
                                ") and those of runs in flight (", FormatBytes(reserved_),
                                ") need more than half of the ", FormatBytes(free_bytes),
                                " the RAM-backed folder and memory have free");
    }
    return false;
  }
  reserved_ += total_bytes;
  return true;
}

void ScratchSpace::Release(int64_t total_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  reserved_ = std::max<int64_t>(0, reserved_ - total_bytes);
}

ScratchFolder::ScratchFolder(std::string folder, int lock_fd)
    : folder_(std::move(folder)), lock_fd_(lock_fd) {}

ScratchFolder::~ScratchFolder() {
  (void)RemoveTree(folder_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}


absl::StatusOr<std::unique_ptr<ScratchFolder>> PrepareScratchDir(const std::string& flag,
                                                                 const std::string& data_dir,
                                                                 std::string* note) {
  std::string parent = flag;
  if (flag.empty()) {
    *note = "job folders: in the data dir (--scratch-dir is empty)";
    return nullptr;
  }
  if (flag == "auto") {
    parent = "/dev/shm";
    if (::access(parent.c_str(), W_OK | X_OK) != 0 || !RamBacked(parent)) {
      *note = "job folders: in the data dir (/dev/shm is not a tmpfs this process can write to)";
      return nullptr;
    }
  } else if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--scratch-dir ", parent, ": not a folder this process can write to"));
  }
  char resolved[PATH_MAX];
  const std::string data = ::realpath(data_dir.c_str(), resolved) != nullptr ? resolved : data_dir;
  const std::string dir = absl::StrCat(parent, "/", kPrefix, Sha256Hex(data).substr(0, 16));
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("--scratch-dir: cannot create ", dir, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--scratch-dir: ", dir, " is not a folder owned by this user (a link, or another "
        "user's): remove it or give another --scratch-dir"));
  }
  if (::chmod(dir.c_str(), 0700) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--scratch-dir: cannot make ", dir, " private: ", std::strerror(errno)));
  }
  const int lock_fd = TakeLock(dir, /*create=*/true);
  if (lock_fd < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--scratch-dir: ", dir, " is held by another kiln-harness on the same data dir"));
  }
  auto folder = std::make_unique<ScratchFolder>(dir, lock_fd);
  // What a previous process of this node left belongs to runs now marked INTERRUPTED.
  const std::string jobs = folder->jobs();
  if (absl::Status s = RemoveTree(jobs); !s.ok()) return s;
  if (absl::Status s = MakeDirs(jobs, 0700); !s.ok()) return s;
  RemoveAbandoned(parent, dir);
  *note = absl::StrCat("job folders: ", jobs, RamBacked(dir) ? " (RAM-backed)" : "",
                       "; a run whose outputs do not fit uses the data dir's");
  return folder;
}

}  // namespace kiln
