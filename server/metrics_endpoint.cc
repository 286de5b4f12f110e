#include "server/metrics_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln {

namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kPollMs = 200;

absl::StatusOr<sockaddr_in> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen: '", listen, "' is not HOST:PORT"));
  }
  std::string host = listen.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) host = "0.0.0.0";
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen: '", host, "' is not an IPv4 address"));
  }
  return addr;
}

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string Response(const std::string& status, const std::string& type, const std::string& body) {
  return absl::StrCat("HTTP/1.0 ", status, "\r\nContent-Type: ", type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& listen, std::function<std::string()> render) {
  absl::StatusOr<sockaddr_in> addr = ParseListen(listen);
  if (!addr.ok()) return addr.status();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("metrics: cannot create a socket");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 ||
      ::listen(fd, 16) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("metrics: cannot listen on ", listen, ": ", std::strerror(err)));
  }
  sockaddr_in bound = {};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  char host[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &bound.sin_addr, host, sizeof(host));
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(fd, absl::StrCat(host, ":", ntohs(bound.sin_port)), std::move(render)));
}

MetricsEndpoint::MetricsEndpoint(int fd, std::string address, std::function<std::string()> render)
    : fd_(fd), address_(std::move(address)), render_(std::move(render)) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  stopping_ = true;
  thread_.join();
  ::close(fd_);
}

void MetricsEndpoint::Serve() {
  while (!stopping_) {
    pollfd p = {fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    timeval timeout = {2, 0};
    ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    Answer(client);
    ::close(client);
  }
}

void MetricsEndpoint::Answer(int client) {
  std::string request;
  char buffer[1024];
  while (request.size() < kMaxRequestBytes && request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos) {
    ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<size_t>(n));
  }
  const std::string line = request.substr(0, request.find_first_of("\r\n"));
  if (absl::StartsWith(line, "GET /metrics ") || line == "GET /metrics") {
    WriteAll(client, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", render_()));
  } else if (absl::StartsWith(line, "GET /healthz")) {
    WriteAll(client, Response("200 OK", "text/plain", "ok\n"));
  } else {
    WriteAll(client, Response("404 Not Found", "text/plain", "not found: GET /metrics\n"));
  }
}

}  // namespace kiln
