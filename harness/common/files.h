// Small file-system helpers with absl::Status errors that name the path.
#ifndef KILN_HARNESS_COMMON_FILES_H_
#define KILN_HARNESS_COMMON_FILES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kiln {

absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes atomically: a temporary file in the same folder, fsync'd when `durable`, then renamed.
absl::Status WriteFile(const std::string& path, std::string_view content, bool durable = false);
// The same, the content written part by part: `next_part` gives each part in turn, then an empty
// one; an error it returns ends the write (the temporary file removed) with that error.
absl::Status WriteFileInParts(const std::string& path,
                              const std::function<absl::StatusOr<std::string_view>()>& next_part,
                              bool durable = false);
// The same, written over the file `reuse` when it is a plain file (opened without following a
// link), which is then renamed to `path`: its pages are overwritten in place instead of new ones
// made (on a tmpfs, where making a page costs more than writing it). Its old content is cut to
// what was written. When `reuse` cannot be opened so, as WriteFileInParts.
absl::Status WriteFileOver(const std::string& path, const std::string& reuse,
                           const std::function<absl::StatusOr<std::string_view>()>& next_part);
// `content` as the parts of WriteFileInParts or WriteFileOver: itself, then an empty part. The
// bytes are not copied: they must outlive the write.
std::function<absl::StatusOr<std::string_view>()> OnePart(std::string_view content);
// Opens `reuse` for writing in place as WriteFileOver does: a plain file, no link followed, not
// truncated. -1 when it is missing or not a plain file.
int OpenForReuse(const std::string& reuse);
absl::Status MakeDirs(const std::string& path, int mode = 0755);
// Whether `dir` lies on a tmpfs or ramfs (its files are memory; nothing is written back).
bool RamBacked(const std::string& dir);
// Bytes an unprivileged writer may still put on the file system holding `dir`; -1 when unread.
int64_t FileSystemFreeBytes(const std::string& dir);
// Removes a tree; missing paths are not an error.
absl::Status RemoveTree(const std::string& path);
// Unlinks each of `names` (plain names, no '/') in the folder `root`/`folders...`, where every
// folder below `root` is opened without following a link: in a folder that someone else can
// write (a worker's), a folder replaced by a link to elsewhere is not entered and nothing is
// removed. Missing files are skipped. Returns how many were removed.
int UnlinkBeneath(const std::string& root, const std::vector<std::string>& folders,
                  const std::vector<std::string>& names);
// Renames each (from, to) pair of plain names within the same folder, reached as UnlinkBeneath
// reaches it; a `to` there is replaced. Returns the `from` names that were not renamed (missing,
// not plain names, or the folder not reached).
std::vector<std::string> RenameBeneath(
    const std::string& root, const std::vector<std::string>& folders,
    const std::vector<std::pair<std::string, std::string>>& renames);
// Copies the plain files and folders under `from` into `to` (made as needed), never following a
// link: links, devices, sockets and files with more than one link are left out, as is
// everything past `max_bytes` in all. A file already in `to` is kept unless `overwrite`. Each
// file is written under a temporary name and renamed, so a reader never sees half of one.
// Returns the bytes copied. A missing `from` copies nothing.
absl::StatusOr<int64_t> CopyPlainTree(const std::string& from, const std::string& to,
                                      bool overwrite, int64_t max_bytes);
// A fresh private folder under `parent` (or $TMPDIR) named prefix-XXXXXX.
absl::StatusOr<std::string> MakeTempDir(const std::string& parent, const std::string& prefix);
// The folder holding the running executable (via /proc/self/exe).
std::string ExecutableDir();

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_FILES_H_
