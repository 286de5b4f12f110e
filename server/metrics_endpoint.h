// A minimal HTTP/1.0 listener for Prometheus scrapes: GET /metrics answers 200 with the text
// `render` returns, GET /healthz answers "ok", anything else 404. One request at a time on one
// thread, each with a 2 s read timeout, so a stuck client delays scrapes but never the harness.
#ifndef KILN_SERVER_METRICS_ENDPOINT_H_
#define KILN_SERVER_METRICS_ENDPOINT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace kiln {

class MetricsEndpoint {
 public:
  // Binds `listen` ("HOST:PORT"; IPv4 address or "localhost"; port 0 picks one) and serves until
  // destroyed. UNAVAILABLE names the address when binding fails.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& listen, std::function<std::string()> render);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // "HOST:PORT" actually bound.
  const std::string& address() const { return address_; }

 private:
  MetricsEndpoint(int fd, std::string address, std::function<std::string()> render);
  void Serve();
  void Answer(int client);

  int fd_;
  std::string address_;
  std::function<std::string()> render_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace kiln

#endif  // KILN_SERVER_METRICS_ENDPOINT_H_
