#include "harness/common/files.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kiln {

namespace {
absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::Status(absl::StatusCode::kInternal,
                      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}
}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("no such file: ", path));
    return Errno("cannot open", path);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return Errno("cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

namespace {

// Writes the parts to `fd` from its current offset; an error closes nothing.
absl::Status WriteParts(int fd, const std::string& name,
                        const std::function<absl::StatusOr<std::string_view>()>& next_part,
                        int64_t* written) {
  *written = 0;
  for (;;) {
    absl::StatusOr<std::string_view> part = next_part();
    if (!part.ok()) return part.status();
    if (part->empty()) return absl::OkStatus();
    size_t off = 0;
    while (off < part->size()) {
      ssize_t n = ::write(fd, part->data() + off, part->size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("cannot write", name);
      }
      off += static_cast<size_t>(n);
    }
    *written += static_cast<int64_t>(part->size());
  }
}

}  // namespace

absl::Status WriteFileInParts(const std::string& path,
                              const std::function<absl::StatusOr<std::string_view>()>& next_part,
                              bool durable) {
  std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp);
  auto fail = [&](absl::Status status) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return status;
  };
  int64_t written = 0;
  if (absl::Status s = WriteParts(fd, tmp, next_part, &written); !s.ok()) return fail(s);
  if (durable && ::fsync(fd) != 0) return fail(Errno("cannot fsync", tmp));
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Errno("cannot rename to", path);
  }
  return absl::OkStatus();
}

int OpenForReuse(const std::string& reuse) {
  if (reuse.empty()) return -1;
  const int fd = ::open(reuse.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

absl::Status WriteFileOver(const std::string& path, const std::string& reuse,
                           const std::function<absl::StatusOr<std::string_view>()>& next_part) {
  const int fd = OpenForReuse(reuse);
  if (fd < 0) return WriteFileInParts(path, next_part);
  auto fail = [&](absl::Status status) {
    ::close(fd);
    ::unlink(reuse.c_str());
    return status;
  };
  int64_t written = 0;
  if (absl::Status s = WriteParts(fd, reuse, next_part, &written); !s.ok()) return fail(s);
  if (::ftruncate(fd, static_cast<off_t>(written)) != 0) {
    return fail(Errno("cannot truncate", reuse));
  }
  ::close(fd);
  if (::rename(reuse.c_str(), path.c_str()) != 0) {
    const absl::Status s = Errno("cannot rename to", path);
    ::unlink(reuse.c_str());
    return s;
  }
  return absl::OkStatus();
}

std::function<absl::StatusOr<std::string_view>()> OnePart(std::string_view content) {
  return [content, given = false]() mutable -> absl::StatusOr<std::string_view> {
    if (std::exchange(given, true)) return std::string_view();
    return content;
  };
}

absl::Status WriteFile(const std::string& path, std::string_view content, bool durable) {
  return WriteFileInParts(path, OnePart(content), durable);
}

bool RamBacked(const std::string& dir) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) return false;
  return fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
}

int64_t FileSystemFreeBytes(const std::string& dir) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return -1;
  return static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
}

absl::Status MakeDirs(const std::string& path, int mode) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", path, ": ", ec.message()));
  ::chmod(path.c_str(), static_cast<mode_t>(mode));
  return absl::OkStatus();
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

namespace {

bool PlainName(const std::string& name) {
  return !name.empty() && name.find('/') == std::string::npos && name != "." && name != "..";
}

// The folder `root`/`folders...`, every folder below `root` opened without following a link;
// -1 when one is missing, a link or not a plain name.
int OpenBeneath(const std::string& root, const std::vector<std::string>& folders) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (const std::string& folder : folders) {
    if (fd < 0) return -1;
    const int next = PlainName(folder) ? ::openat(fd, folder.c_str(),
                                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                       : -1;
    ::close(fd);
    fd = next;
  }
  return fd;
}

}  // namespace

int UnlinkBeneath(const std::string& root, const std::vector<std::string>& folders,
                  const std::vector<std::string>& names) {
  const int fd = OpenBeneath(root, folders);
  if (fd < 0) return 0;
  int removed = 0;
  for (const std::string& name : names) {
    if (PlainName(name) && ::unlinkat(fd, name.c_str(), 0) == 0) ++removed;
  }
  ::close(fd);
  return removed;
}

std::vector<std::string> RenameBeneath(
    const std::string& root, const std::vector<std::string>& folders,
    const std::vector<std::pair<std::string, std::string>>& renames) {
  std::vector<std::string> left;
  const int fd = OpenBeneath(root, folders);
  for (const auto& [from, to] : renames) {
    if (fd < 0 || !PlainName(from) || !PlainName(to) ||
        ::renameat(fd, from.c_str(), fd, to.c_str()) != 0) {
      left.push_back(from);
    }
  }
  if (fd >= 0) ::close(fd);
  return left;
}

absl::StatusOr<int64_t> CopyPlainTree(const std::string& from, const std::string& to,
                                      bool overwrite, int64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(from, ec))) return int64_t{0};
  int64_t copied = 0;
  fs::recursive_directory_iterator it(from, fs::directory_options::none, ec), end;
  if (ec) return absl::InternalError(absl::StrCat("cannot read ", from, ": ", ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) return absl::InternalError(absl::StrCat("cannot read ", from, ": ", ec.message()));
    const fs::path rel = fs::relative(it->path(), from, ec);
    if (ec) continue;
    const std::string target = (fs::path(to) / rel).string();
    const fs::file_status st = it->symlink_status(ec);
    if (ec) continue;
    if (fs::is_directory(st)) {
      if (absl::Status s = MakeDirs(target); !s.ok()) return s;
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    if (!overwrite && fs::exists(fs::symlink_status(target, ec))) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat info;
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_nlink != 1 ||
        copied + info.st_size > max_bytes) {
      ::close(fd);
      continue;
    }
    std::string content(static_cast<size_t>(info.st_size), '\0');
    size_t off = 0;
    while (off < content.size()) {
      ssize_t n = ::pread(fd, content.data() + off, content.size() - off, static_cast<off_t>(off));
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fd);
    if (off != content.size()) continue;
    if (absl::Status s = MakeDirs(fs::path(target).parent_path().string()); !s.ok()) return s;
    const std::string temp = absl::StrCat(target, ".partial.", ::getpid());
    if (absl::Status s = WriteFile(temp, content); !s.ok()) return s;
    fs::rename(temp, target, ec);
    if (ec) {
      fs::remove(temp, ec);
      continue;
    }
    copied += info.st_size;
  }
  return copied;
}

absl::StatusOr<std::string> MakeTempDir(const std::string& parent, const std::string& prefix) {
  std::string base = parent;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = (t && *t) ? t : "/tmp";
  }
  std::string templ = absl::StrCat(base, "/", prefix, "-XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) return Errno("cannot create temp dir in", base);
  return templ;
}

std::string ExecutableDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

}  // namespace kiln
