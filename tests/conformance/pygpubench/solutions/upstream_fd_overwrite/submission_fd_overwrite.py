"""
EXPLOIT #3: File Descriptor Overwrite
======================================
Severity: CRITICAL

Strategy:
  The benchmark passes results back to the parent via a pipe fd inherited by the
  child process. The child can enumerate its own fds via os.fstat() to find the
  pipe write ends (st_mode is FIFO), write fake results into them, and exit cleanly
  before the C++ layer runs at all.

  At import time:
  1. Iterate fd numbers 0-255, use os.fstat() to find open FIFOs (S_ISFIFO)
  2. Write fake timing results into each — one will be the result pipe, the
     other the traceback pipe; writing fake results into both is harmless
  3. os._exit(0) before the benchmark runs — parent sees exit code 0 and fake data

Attack surface: inherited pipe fds are writable by the child at import time.
"""
import os
import stat

for fd_num in range(256):
    try:
        s = os.fstat(fd_num)
        if stat.S_ISFIFO(s.st_mode):
            fake = "event-overhead\t0.001 µs\n"
            for idx in range(100):
                fake += f"{idx}\t0.42\n"
            os.write(fd_num, fake.encode())
            os.close(fd_num)
    except (OSError, ValueError):
        continue

os._exit(0)
