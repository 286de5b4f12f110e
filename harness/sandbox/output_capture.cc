#include "harness/sandbox/output_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace kiln {

bool OutputCapture::ReadOnce(int fd) {
  char buf[1 << 16];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  Append(buf, static_cast<size_t>(n));
  return true;
}

void OutputCapture::Drain(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    Append(buf, static_cast<size_t>(n));
  }
}

std::string OutputCapture::Finish() {
  std::string out = std::move(text_);
  text_.clear();
  if (dropped_ > 0) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    absl::StrAppend(&out, "[kiln: ", dropped_, " more bytes of output dropped]\n");
  }
  return out;
}

void OutputCapture::Append(const char* data, size_t n) {
  int64_t room = max_bytes_ - static_cast<int64_t>(text_.size());
  size_t keep = static_cast<size_t>(std::clamp<int64_t>(room, 0, static_cast<int64_t>(n)));
  text_.append(data, keep);
  dropped_ += static_cast<int64_t>(n - keep);
}

}  // namespace kiln
