// The harness end of the worker pipes. RunWorker's calling thread waits for the process
// (Process::Wait enforces the wall-clock limit and cancellation by killing the process group);
// a second thread writes the request and reads events without ever blocking, so neither a
// worker that stops reading or writing mid-frame nor a descendant that keeps the pipe open can
// hang the harness. on_status runs on that second thread, one call at a time.
#include "harness/worker/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/sandbox/process.h"
#include "harness/worker/utf8.h"


namespace kiln {

// One end of a pipe, closed with it.
class PipeFd {
 public:
  explicit PipeFd(int fd = -1) : fd_(fd) {}
  PipeFd(PipeFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  PipeFd& operator=(PipeFd&& o) noexcept {
    if (this != &o) {
      Close();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~PipeFd() { Close(); }
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

namespace {

constexpr size_t kLogTailBytes = 4096;
constexpr uint32_t kMaxEventBytes = 64u << 20;
// How long events still in the pipe are drained after the worker has exited.
constexpr auto kDrainGrace = std::chrono::seconds(2);
constexpr int kPollMs = 10;

void PutLe32(uint32_t v, char out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t GetLe32(const char in[4]) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}


bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}


// A close-on-exec pipe whose ends are numbered 10 or above, so that handing them to the child
// as fds 3 and 4 can never collide with their own numbers.
absl::Status MakePipe(PipeFd* read_end, PipeFd* write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", std::strerror(errno)));
  }
  for (int i = 0; i < 2; ++i) {
    int high = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
    ::close(fds[i]);
    fds[i] = high;
  }
  if (fds[0] < 0 || fds[1] < 0) {
    if (fds[0] >= 0) ::close(fds[0]);
    if (fds[1] >= 0) ::close(fds[1]);
    return absl::InternalError(absl::StrCat("fcntl(F_DUPFD_CLOEXEC): ", std::strerror(errno)));
  }
  *read_end = PipeFd(fds[0]);
  *write_end = PipeFd(fds[1]);
  return absl::OkStatus();
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The last `max_bytes` of the worker log, as valid UTF-8.
std::string LogTail(const std::string& path, size_t max_bytes) {
  PipeFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0) return "(no worker log)";
  off_t size = st.st_size;
  off_t start = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string tail(static_cast<size_t>(size - start), '\0');
  ssize_t n = ::pread(fd.get(), tail.data(), tail.size(), start);
  tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (tail.empty()) return "(worker log is empty)";
  return SanitizeUtf8(tail);
}

}  // namespace

bool AppendFramed(const google::protobuf::MessageLite& msg, std::string* out) {
  const size_t size = msg.ByteSizeLong();
  if (size > UINT32_MAX) return false;
  const size_t start = out->size();
  out->append(4, '\0');
  PutLe32(static_cast<uint32_t>(size), out->data() + start);
  if (msg.AppendToString(out)) return true;
  out->resize(start);
  return false;
}

bool WriteFramed(int fd, const google::protobuf::MessageLite& msg) {
  std::string frame;
  if (!AppendFramed(msg, &frame)) return false;
  return WriteAllToPipe(fd, frame.data(), frame.size());
}

bool ReadFramed(int fd, google::protobuf::MessageLite* msg, uint32_t max_bytes) {
  char header[4];
  if (!ReadAll(fd, header, sizeof header)) return false;
  uint32_t size = GetLe32(header);
  if (size > max_bytes) return false;
  std::string body(size, '\0');
  if (!ReadAll(fd, body.data(), body.size())) return false;
  return msg->ParseFromString(body);
}

bool ReadFramedAfter(int fd, char first, google::protobuf::MessageLite* msg, uint32_t max_bytes) {
  char header[4];
  header[0] = first;
  if (!ReadAll(fd, header + 1, 3)) return false;
  uint32_t size = GetLe32(header);
  if (size > max_bytes) return false;
  std::string body(size, '\0');
  if (!ReadAll(fd, body.data(), body.size())) return false;
  return msg->ParseFromString(body);
}

namespace {

std::string StageText(const std::optional<v1::WorkerStatus>& status) {
  if (!status) return "startup";
  return absl::StrCat(status->stage(), ", trial ", status->trial());
}

v1::WorkerResult Failure(v1::EvaluationStatus status, const std::string& error) {
  v1::WorkerResult result;
  result.set_status(status);
  result.set_error(SanitizeUtf8(error));
  return result;
}

std::string WithLogTail(const std::string& error, const WorkerLaunch& launch) {
  return absl::StrCat(error, "\nworker log (last 4 KiB):\n",
                      LogTail(launch.log_path, kLogTailBytes));
}

}  // namespace

// What one request's exchange saw.
struct WorkerSession::CallState {
  const v1::WorkerRequest* request = nullptr;
  const std::function<void(const v1::WorkerStatus&)>* on_status = nullptr;
  const GateFn* on_checked = nullptr;
  // Bytes for the request pipe: the request, then the answers at its gates.
  std::string outgoing;
  size_t sent = 0;
  GateRecord gates;
  std::optional<v1::WorkerResult> result;
  std::optional<v1::WorkerStatus> last_status;
  bool malformed = false;
  bool cancelled = false;
  bool timed_out = false;
  bool log_flooded = false;  // killed for writing more than max_log_bytes of log
};

WorkerSession::WorkerSession(WorkerLaunch launch) : launch_(std::move(launch)) {}

absl::StatusOr<std::unique_ptr<WorkerSession>> WorkerSession::Start(const WorkerLaunch& launch) {
  PipeFd request_read, request_write, event_read, event_write;
  absl::Status s = MakePipe(&request_read, &request_write);
  if (s.ok()) s = MakePipe(&event_read, &event_write);
  if (!s.ok()) return s;

  ProcessOptions opts;
  opts.argv = {launch.worker_path};
  opts.argv.insert(opts.argv.end(), launch.worker_args.begin(), launch.worker_args.end());
  opts.cwd = launch.job_dir;
  opts.stdout_path = launch.log_path;
  opts.merge_stderr = true;
  opts.timeout_s = 0;  // each request has its own limit (Call)
  opts.max_address_space = launch.max_address_space;
  opts.child_fds = {request_read.get(), event_write.get()};
  opts.sandbox = launch.sandbox;
  if (!launch.env_overrides.empty()) {
    opts.env = OverrideEnvironment(ParentEnvironment(), launch.env_overrides);
  }
  absl::StatusOr<Process> process = Process::Start(opts);
  // The child holds its own copies; ours would keep the requests open and the events from ending.
  request_read.Close();
  event_write.Close();
  if (!process.ok()) return process.status();

  std::unique_ptr<WorkerSession> session(new WorkerSession(launch));
  session->request_fd_ = std::make_unique<PipeFd>(std::move(request_write));
  session->event_fd_ = std::make_unique<PipeFd>(std::move(event_read));
  SetNonBlocking(session->request_fd_->get());
  SetNonBlocking(session->event_fd_->get());
  session->process_ = std::make_unique<Process>(*std::move(process));
  session->exit_ = std::make_unique<ProcessResult>();
  WorkerSession* raw = session.get();
  session->waiter_ = std::thread([raw] {
    *raw->exit_ = raw->process_->Wait(&raw->kill_);
    raw->done_ = true;
  });
  return session;
}

WorkerSession::~WorkerSession() {
  // End of requests: an idle worker exits on its own; one that does not is killed.
  if (request_fd_ != nullptr) request_fd_->Close();
  for (int i = 0; i < 100 && !done_.load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  kill_ = true;
  if (waiter_.joinable()) waiter_.join();
}

int WorkerSession::pid() const { return process_ != nullptr ? process_->pid() : -1; }

void WorkerSession::WatchLog(CallState& st) {
  if (launch_.max_log_bytes <= 0 || st.log_flooded || launch_.log_path.empty()) return;
  struct stat info;
  if (::stat(launch_.log_path.c_str(), &info) != 0 || info.st_size <= launch_.max_log_bytes) {
    return;
  }
  st.log_flooded = true;
  kill_ = true;
}

void WorkerSession::ReadEvents(CallState& st) {
  char chunk[1 << 16];
  // Bounded, so that a worker flooding the pipe cannot keep cancellation from being seen.
  for (int reads = 0; reads < 64 && event_fd_->get() >= 0; ++reads) {
    ssize_t n = ::read(event_fd_->get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      event_fd_->Close();  // EOF: a partial frame left in buffer_ means the worker died mid-write
      return;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    ParseFrames(st);
  }
}

void WorkerSession::ParseFrames(CallState& st) {
  size_t offset = 0;
  while (!st.malformed && buffer_.size() - offset >= 4) {
    uint32_t size = GetLe32(buffer_.data() + offset);
    v1::WorkerEvent event;
    if (size > kMaxEventBytes) {
      st.malformed = true;
      break;
    }
    if (buffer_.size() - offset - 4 < size) break;
    if (!event.ParseFromArray(buffer_.data() + offset + 4, static_cast<int>(size))) {
      st.malformed = true;
      break;
    }
    offset += 4 + size;
    if (st.result) {
      // An honest worker sends nothing after a result until it has the next request.
      st.malformed = true;
      break;
    }
    if (event.has_status()) {
      st.last_status = event.status();
      if (*st.on_status) (*st.on_status)(event.status());
    } else if (event.has_checked() || event.has_recheck()) {
      // Only a gated request's trials, in order, no more than it has, and none after a stop; a
      // trial's recheck only after its checked outputs, and before the next trial's.
      const int trials = std::max(st.request->trial_seeds_size(),
                                  st.request->measure() ? st.request->timing().trials() : 0);
      const bool recheck = event.has_recheck();
      const v1::TrialOutputs& outputs = recheck ? event.recheck() : event.checked();
      std::vector<v1::TrialOutputs>& list = recheck ? st.gates.rechecks : st.gates.reported;
      const int rechecked = static_cast<int>(st.gates.rechecks.size());
      const int checked = static_cast<int>(st.gates.reported.size());
      const bool in_order = recheck ? outputs.trial() == rechecked && rechecked < checked
                                    : outputs.trial() == checked && rechecked == checked;
      if (!st.request->gate_trials() || *st.on_checked == nullptr || st.gates.stopped ||
          !in_order || outputs.trial() >= trials) {
        st.malformed = true;
        break;
      }
      list.push_back(outputs);
      const bool go = (*st.on_checked)(list.back(), recheck);
      st.gates.stopped = !go;
      v1::WorkerGate answer;
      answer.set_go(go);
      AppendFramed(answer, &st.outgoing);
    } else if (event.has_result()) {
      st.result = std::move(*event.mutable_result());
    }
  }
  buffer_.erase(0, offset);
  if (st.malformed) {
    kill_ = true;
    event_fd_->Close();
  }
}

v1::WorkerResult WorkerSession::Call(const v1::WorkerRequest& request,
                                     const std::function<void(const v1::WorkerStatus&)>& on_status,
                                     const std::atomic<bool>* cancel, bool last,
                                     const GateFn& on_checked) {
  if (!open_) return Failure(v1::RUNTIME_ERROR, "the worker has ended: it takes no more requests");
  if (request.gate_trials() && on_checked == nullptr) {
    return Failure(v1::RUNTIME_ERROR, "a gated worker request needs a judge at its gates");
  }
  CallState st;
  st.request = &request;
  st.on_status = &on_status;
  st.on_checked = &on_checked;
  std::string& frame = st.outgoing;
  if (!AppendFramed(request, &frame)) {
    return Failure(v1::RUNTIME_ERROR, "the worker request cannot be serialized");
  }
  // The request pipe stays open after a last request that is gated, for the gates' answers.
  const bool close_after_request = last && !request.gate_trials();
  // Bytes the worker sent while it had no request are not an answer to this one.
  if (!buffer_.empty()) {
    st.malformed = true;
    kill_ = true;
  }
  // A write to a worker that has died raises SIGPIPE on this thread; keep it pending here and
  // see EPIPE instead (a pending SIGPIPE of this thread is consumed below).
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  size_t& sent = st.sent;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, launch_.timeout_s) * 1e6));
  std::optional<std::chrono::steady_clock::time_point> drain_deadline;
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (cancel != nullptr && cancel->load() && !st.cancelled) {
      st.cancelled = true;
      kill_ = true;
    }
    if (launch_.timeout_s > 0 && now >= deadline && !st.timed_out && !done_.load()) {
      st.timed_out = true;
      kill_ = true;
    }
    WatchLog(st);
    // A PASSED result of a request that others follow: the worker waits for the next one.
    // Any other result is the worker's last: its exit is awaited and judged with it.
    const bool worker_ends = last || st.malformed || (st.result && st.result->status() != v1::PASSED);
    if (st.result && !worker_ends && !kill_.load()) break;
    if (done_.load()) {
      if (event_fd_->get() < 0) break;
      if (!drain_deadline) drain_deadline = now + kDrainGrace;
      if (now >= *drain_deadline) break;
    } else if (event_fd_->get() < 0) {
      // Events are over but the worker still runs: keep enforcing the limits until it ends.
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    pollfd fds[2];
    int n = 0;
    fds[n++] = {event_fd_->get(), POLLIN, 0};
    const bool writing = request_fd_->get() >= 0 && sent < frame.size();
    if (writing) fds[n++] = {request_fd_->get(), POLLOUT, 0};
    int ready = ::poll(fds, static_cast<nfds_t>(n), kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (writing && fds[1].revents != 0) {
      while (sent < frame.size()) {
        ssize_t w = ::write(request_fd_->get(), frame.data() + sent, frame.size() - sent);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (w <= 0) {
          request_fd_->Close();  // the worker is gone; its exit tells the story
          break;
        }
        sent += static_cast<size_t>(w);
      }
      if (sent == frame.size() && close_after_request) request_fd_->Close();  // end of requests
    }
    if (fds[0].revents != 0) ReadEvents(st);
    // A last gated request: its result ends the requests.
    if (st.result && last && request_fd_->get() >= 0) request_fd_->Close();
  }
  timespec zero{};
  while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);

  const bool killed = kill_.load();
  if (st.result && !killed && !last && st.result->status() == v1::PASSED && !done_.load()) {
    absl::Status claims = CheckResultClaims(request, *st.result, st.gates);
    if (claims.ok()) return *std::move(st.result);
    open_ = false;
    kill_ = true;
    return Failure(v1::REJECTED, std::string(claims.message()));
  }
  // The worker ends with this request: wait for its exit (it was killed, or exits by itself).
  open_ = false;
  if (request_fd_->get() >= 0) request_fd_->Close();
  while (!done_.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (launch_.timeout_s > 0 && now >= deadline && !st.timed_out) {
      st.timed_out = true;
      kill_ = true;
    }
    if (cancel != nullptr && cancel->load() && !st.cancelled) {
      st.cancelled = true;
      kill_ = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  if (waiter_.joinable()) waiter_.join();
  ProcessResult process = *exit_;
  process.timed_out = st.timed_out;
  process.cancelled = exit_->cancelled && !st.timed_out;
  return Interpret(request, process, st);
}

v1::WorkerResult WorkerSession::Interpret(const v1::WorkerRequest& request,
                                          const ProcessResult& process, CallState& st) {
  const WorkerLaunch& launch = launch_;
  if (st.malformed) {
    return Failure(v1::RUNTIME_ERROR, WithLogTail("worker sent a malformed message", launch));
  }
  bool clean_exit = !process.timed_out && !process.cancelled && process.term_signal == 0 &&
                    process.exit_code == 0;
  if (st.result && clean_exit) {
    if (st.result->status() == v1::PASSED) {
      absl::Status claims = CheckResultClaims(request, *st.result, st.gates);
      if (!claims.ok()) return Failure(v1::REJECTED, std::string(claims.message()));
    }
    // A solution that returned non-zero usually printed why (the TVM-FFI entries print the
    // failed check); the verdict's log carries it.
    if (st.result->status() == v1::RUNTIME_ERROR &&
        absl::StartsWith(st.result->error(), "entry point returned ")) {
      st.result->set_error(WithLogTail(st.result->error(), launch));
    }
    return *std::move(st.result);
  }
  if (st.cancelled) return Failure(v1::CANCELLED, "cancelled");
  // A verdict against the solution that the worker sent before it ended uncleanly stands: a
  // thread the solution left behind can crash the process on its way out, which makes the
  // verdict no better. (A PASSED result needs a clean exit.)
  if (st.result && st.result->status() != v1::PASSED && !process.timed_out &&
      !process.cancelled && !st.log_flooded) {
    st.result->set_error(absl::StrCat(st.result->error(), " (sent before the worker ",
                                      process.term_signal != 0 ? "was " : "ended with ",
                                      process.Describe(), ")"));
    return *std::move(st.result);
  }
  if (st.log_flooded) {
    return Failure(v1::RUNTIME_ERROR,
                   WithLogTail(absl::StrFormat("the worker's output passed %d MiB and it was "
                                               "killed (stage: %s); print less",
                                               launch.max_log_bytes >> 20,
                                               StageText(st.last_status)),
                               launch));
  }
  if (process.timed_out) {
    return Failure(v1::TIMEOUT, absl::StrFormat("timed out after %g s (stage: %s)",
                                                launch.timeout_s, StageText(st.last_status)));
  }
  std::string what;
  if (process.term_signal != 0) {
    what = absl::StrCat("worker ", process.Describe());
  } else if (process.exit_code == 0) {
    what = "worker exited (exit code 0) without sending a result";
  } else {
    what = absl::StrCat("worker ended with ", process.Describe());
  }
  return Failure(
      v1::RUNTIME_ERROR,
      WithLogTail(absl::StrCat(what, " during ", StageText(st.last_status)), launch));
}

absl::StatusOr<v1::WorkerResult> RunWorker(
    const WorkerLaunch& launch, const v1::WorkerRequest& request,
    const std::function<void(const v1::WorkerStatus&)>& on_status,
    const std::atomic<bool>* cancel) {
  if (request.ByteSizeLong() > UINT32_MAX) {
    return absl::InvalidArgumentError("the worker request cannot be serialized");
  }
  auto session = WorkerSession::Start(launch);
  if (!session.ok()) return session.status();
  return (*session)->Call(request, on_status, cancel, /*last=*/true);
}

}  // namespace kiln
