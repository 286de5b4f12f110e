"""Port of pygpubench's "pipe interposition" (exploits/submission_pipe_interpose.py) to kiln.

The original dup2()ed a pipe of its own over the benchmark's result pipe and relayed every line
through a thread that rewrote the timings, so that a correct but slow kernel reported fast times.
kiln's worker core reports to the harness on fd 4 in length-prefixed protobuf frames
(WorkerEvent, proto/kiln/v1/worker.proto). On its first call this port puts a pipe of its own on
fd 4 and relays every frame to the harness's pipe unchanged, except the final WorkerResult, whose
TimingResult doubles (trial medians, latency and every statistic, the samples) it multiplies by
0.5. The relay is a forked child process (a thread where fork is refused): the original's relay
thread would be charged to the calls by kiln's accounting of the worker's other threads, a child
process's CPU time is not the worker's. The computation is honest: only the reported latency is
forged. It should never PASS: a PASSED verdict here means the harness took a latency the
solution's process could rewrite.
"""
import os
import stat
import struct
import threading

import torch

EVENT_FD = 4
SCALE = 0.5
_relay = None


def _read_varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _fields(buf):
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _read_varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = _read_varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type")
        yield field, wire, value


def _encode(field, wire, value):
    key = _varint((field << 3) | wire)
    if wire == 0:
        return key + _varint(value)
    if wire == 2:
        return key + _varint(len(value)) + value
    return key + value


def _scaled_timing(buf):
    out = b""
    for field, wire, value in _fields(buf):
        if wire == 1 and 8 <= field <= 17:  # latency_ms .. ci95_high_ms
            value = struct.pack("<d", struct.unpack("<d", value)[0] * SCALE)
        elif wire == 2 and field in (7, 22):  # trial_medians_ms, samples_ms (packed doubles)
            n = len(value) // 8
            value = struct.pack(f"<{n}d", *(v * SCALE for v in struct.unpack(f"<{n}d", value)))
        elif wire == 1 and field in (7, 22):  # unpacked repeated double
            value = struct.pack("<d", struct.unpack("<d", value)[0] * SCALE)
        out += _encode(field, wire, value)
    return out


def _rewrite(body):
    out = b""
    for field, wire, value in _fields(body):
        if field == 2 and wire == 2:  # WorkerEvent.result
            result = b""
            for f, w, v in _fields(value):
                if f == 4 and w == 2:  # WorkerResult.timing
                    v = _scaled_timing(v)
                result += _encode(f, w, v)
            value = result
        out += _encode(field, wire, value)
    return out


def _read_exactly(fd, n):
    data = b""
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _pump(read_fd, harness_fd):
    while True:
        header = _read_exactly(read_fd, 4)
        if header is None:
            return
        body = _read_exactly(read_fd, struct.unpack("<I", header)[0])
        if body is None:
            return
        try:
            body = _rewrite(body)
        except Exception:
            pass
        os.write(harness_fd, struct.pack("<I", len(body)) + body)


def _interpose():
    if not stat.S_ISFIFO(os.fstat(EVENT_FD).st_mode):
        return None
    harness_fd = os.dup(EVENT_FD)
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        pid = None
    if pid == 0:
        # The relay runs in a child process, so that its CPU time is not the worker's.
        os.close(write_fd)
        try:
            _pump(read_fd, harness_fd)
        finally:
            os._exit(0)
    os.dup2(write_fd, EVENT_FD)
    os.close(write_fd)
    if pid is not None:
        os.close(read_fd)
        os.close(harness_fd)
        return pid
    t = threading.Thread(target=_pump, args=(read_fd, harness_fd), daemon=True)
    t.start()
    return t


def run(a, b, c):
    global _relay
    if _relay is None:
        _relay = _interpose() or False
    torch.add(a, b, out=c)
