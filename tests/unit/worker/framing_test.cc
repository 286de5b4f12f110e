// The pipe framing shared by kiln-harness and kiln-worker.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "harness/worker/worker_client.h"

namespace kiln {
namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { REQUIRE(pipe(fds) == 0); }
  ~Pipe() {
    CloseWrite();
    if (fds[0] >= 0) close(fds[0]);
  }
  void CloseWrite() {
    if (fds[1] >= 0) close(fds[1]);
    fds[1] = -1;
  }
};

TEST_CASE("framed messages round-trip through a pipe in order") {
  Pipe p;
  v1::WorkerEvent first, second;
  first.mutable_status()->set_stage("verify");
  first.mutable_status()->set_trial(2);
  second.mutable_result()->set_status(v1::REJECTED);
  second.mutable_result()->set_error("input mutation");
  REQUIRE(WriteFramed(p.fds[1], first));
  REQUIRE(WriteFramed(p.fds[1], second));
  p.CloseWrite();

  v1::WorkerEvent got;
  REQUIRE(ReadFramed(p.fds[0], &got));
  CHECK(got.status().stage() == "verify");
  CHECK(got.status().trial() == 2);
  REQUIRE(ReadFramed(p.fds[0], &got));
  CHECK(got.result().status() == v1::REJECTED);
  CHECK(got.result().error() == "input mutation");
  CHECK_FALSE(ReadFramed(p.fds[0], &got));  // end of stream
}

TEST_CASE("the frame length is four little-endian bytes") {
  Pipe p;
  v1::WorkerStatus status;
  status.set_stage("timing");
  REQUIRE(WriteFramed(p.fds[1], status));
  unsigned char header[4];
  REQUIRE(read(p.fds[0], header, 4) == 4);
  uint32_t length = header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24;
  CHECK(length == status.ByteSizeLong());
}

TEST_CASE("a frame longer than the limit is refused") {
  Pipe p;
  v1::WorkerStatus status;
  status.set_stage(std::string(1000, 'x'));
  REQUIRE(WriteFramed(p.fds[1], status));
  v1::WorkerStatus got;
  CHECK_FALSE(ReadFramed(p.fds[0], &got, 100));
}

TEST_CASE("a frame cut short by the writer is not a message") {
  Pipe p;
  const unsigned char partial[] = {50, 0, 0, 0, 0x0a, 0x02};
  REQUIRE(write(p.fds[1], partial, sizeof partial) == sizeof partial);
  p.CloseWrite();
  v1::WorkerStatus got;
  CHECK_FALSE(ReadFramed(p.fds[0], &got));
}

TEST_CASE("writing to a pipe nobody reads fails instead of killing the writer") {
  Pipe p;
  close(p.fds[0]);
  p.fds[0] = -1;
  v1::WorkerStatus status;
  status.set_stage("inputs");
  CHECK_FALSE(WriteFramed(p.fds[1], status));
}

}  // namespace
}  // namespace kiln
