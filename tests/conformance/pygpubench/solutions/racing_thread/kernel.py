"""Port of pygpubench's racing threads (exploits/submission_error_counter.py: a persistent thread
that kept resetting the checker's error counter, racing its read-back; and
exploits/submission_thread_fd.py: a background thread that rewrote the results after the run) to
kiln's convention.

kiln keeps its verdict out of the process, so there is no counter to reset; what a thread can
race is kiln's poisoning of the output buffers and its checksums. The first call computes
honestly and keeps the result. It then starts a thread that spins over every output buffer it has
been handed and copies the kept result into any buffer whose first element holds kiln's poison
(NaN), so that the buffer is "correct" again a moment after kiln poisons it, possibly before the
call even starts (during the untimed cache flush). Every later call only registers its output
buffer and returns without computing.
"""
import math
import threading

import torch

_result = None
_buffers = {}
_lock = threading.Lock()


def _repair_forever():
    while True:
        with _lock:
            targets = list(_buffers.values())
        for t in targets:
            try:
                if math.isnan(float(t.view(-1)[0])):
                    t.copy_(_result)
            except Exception:
                pass


def run(a, b, c):
    global _result
    with _lock:
        _buffers[c.data_ptr()] = c
    if _result is None:
        torch.add(a, b, out=c)
        _result = c.clone()
        threading.Thread(target=_repair_forever, daemon=True).start()
