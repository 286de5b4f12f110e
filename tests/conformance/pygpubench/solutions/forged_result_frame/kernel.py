"""Port of pygpubench's "FD overwrite" (exploits/submission_fd_overwrite.py) to kiln's channel.

The original enumerated its file descriptors, wrote a fake timing table into every pipe (the one
its parent read results from among them) and called os._exit(0) before the benchmark ran. kiln's
worker reports to the harness on a pipe too, in length-prefixed protobuf frames
(proto/kiln/v1/worker.proto, WorkerEvent). On its first call this port writes, into every pipe it
can write, a well-formed frame: WorkerEvent.result = WorkerResult{status: PASSED, timing:
{mode: official, trials: 3, latency 0.0001 ms}}, then exits at once with status 0, so that
nothing kiln's worker would have checked or written ever happens.
"""
import os
import stat
import struct


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _len(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


def _double(field, value):
    return _key(field, 1) + struct.pack("<d", value)


def _forged_event():
    latency = 0.0001
    timing = (_len(1, b"official") + _len(2, b"host") + _key(4, 0) + _varint(3) +
              _key(5, 0) + _varint(10) + _key(6, 0) + _varint(50) +
              _len(7, struct.pack("<3d", latency, latency, latency)) +
              b"".join(_double(f, latency) for f in range(8, 18)) +
              _key(18, 0) + _varint(150))
    result = _key(1, 0) + _varint(1) + _len(4, timing)  # status PASSED, timing
    body = _len(2, result)                               # WorkerEvent.result
    return struct.pack("<I", len(body)) + body


def run(a, b, c):
    frame = _forged_event()
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, frame)
        except OSError:
            continue
    os._exit(0)
