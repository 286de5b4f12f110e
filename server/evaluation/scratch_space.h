// Where workers' folders live, and so where the outputs they write for the judge land. Every
// checked call's outputs (and each recheck's) are written to a file by the reference's and the
// candidate's workers and read back by the harness: for a KernelBench problem with a 6 GiB
// output that is tens of GiB a verdict. On the data dir's file system those writes go through
// the page cache's write-back, which throttles writers once dirty pages pass the kernel's limit;
// on a RAM-backed file system (tmpfs, /dev/shm by default) they are memory copies.
//
// RAM is not disk: a run goes to the RAM-backed folder only when its outputs fit in half of what
// the folder and the machine's memory have free (runs in flight included), and, where the
// sandbox caps each worker's memory (tmpfs pages count against the writer's cgroup), in half of
// that cap. A run that does not fit uses the data dir's folder, with workers of its own (warm
// and spare workers live in the RAM-backed folder).
#ifndef KILN_SERVER_EVALUATION_SCRATCH_SPACE_H_
#define KILN_SERVER_EVALUATION_SCRATCH_SPACE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"

namespace kiln {

class ScratchSpace {
 public:
  // Bytes the RAM-backed folder can still take: the smaller of its file system's free space
  // and the machine's available memory (MemAvailable).
  using FreeBytesFn = std::function<int64_t()>;

  // `fast_dir`: job folders on a RAM-backed file system ("" : none, every run uses `disk_dir`).
  // `worker_cap_bytes`: the memory one sandboxed worker may use, when the sandbox enforces it
  // (0: not enforced). `free_bytes` null: measured (statvfs of fast_dir, /proc/meminfo).
  // `disk_free_bytes` null: statvfs of disk_dir.
  ScratchSpace(std::string fast_dir, std::string disk_dir, int64_t worker_cap_bytes,
               FreeBytesFn free_bytes = nullptr, FreeBytesFn disk_free_bytes = nullptr);

  // The folder warm and spare workers and runs that fit live in (disk_dir when there is none).
  const std::string& jobs_dir() const { return fast_dir_.empty() ? disk_dir_ : fast_dir_; }
  const std::string& disk_dir() const { return disk_dir_; }
  bool has_fast_dir() const { return !fast_dir_.empty(); }

  // Whether a run whose workers write `total_bytes` of outputs in all, `per_worker_bytes` at
  // most by one worker, goes to the RAM-backed folder; if so its bytes are reserved until
  // Release. `why` (false): the figures that decided it.
  bool Reserve(int64_t total_bytes, int64_t per_worker_bytes, std::string* why);
  void Release(int64_t total_bytes);
  // Whether `total_bytes` of outputs fit in the data dir's free space (true when it cannot be
  // read: the write then says what failed). `why` (false): the figures.
  bool FitsDisk(int64_t total_bytes, std::string* why) const;

 private:
  const std::string fast_dir_;
  const std::string disk_dir_;
  const int64_t worker_cap_bytes_;
  FreeBytesFn free_bytes_;
  FreeBytesFn disk_free_bytes_;
  std::mutex mu_;
  int64_t reserved_ = 0;  // guarded by mu_
};

// A node's RAM-backed folder, held while this object lives (an flock on its `lock` file, which
// the kernel lets go of however the process ends) and removed with it.
class ScratchFolder {
 public:
  ScratchFolder(std::string folder, int lock_fd);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  // FOLDER/jobs: where the node's job folders go.
  std::string jobs() const { return folder_ + "/jobs"; }

 private:
  const std::string folder_;
  const int lock_fd_;
};

// The RAM-backed folder for a node whose data dir is `data_dir`, from --scratch-dir:
//   "auto"  /dev/shm when it is a tmpfs this process can write to, else none (null)
//   ""      none (null): job folders stay in the data dir
//   DIR     DIR (an error when it cannot be written)
// The folder is DIR/kiln-jobs-<16 hex digits of the data dir's path hash>, created 0700 and owned
// by this user (a folder of that name owned by someone else, or a link, is an error; one held by
// a running harness on the same data dir too), emptied of what a previous process left. Folders
// beside it that this user's harnesses left when they were killed (their lock free, older than a
// minute) are removed. `note` gets one line for the start log.
absl::StatusOr<std::unique_ptr<ScratchFolder>> PrepareScratchDir(const std::string& flag,
                                                                 const std::string& data_dir,
                                                                 std::string* note);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_SCRATCH_SPACE_H_
