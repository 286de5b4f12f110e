#!/usr/bin/env python3
"""What writing one output tensor from the GPU into a file on a tmpfs costs, by method, on this
node: the figures behind how kiln's workers write the outputs the judge reads.

Methods, each on SIZES (MiB), REPEAT times, medians reported:
  chunked      kiln's path below 256 MiB: the device copies 64 MiB at a time into one reused
               pageable buffer, write() appends it to a new file (then renamed into place)
  mapped_new   a new file, ftruncate'd and mapped shared; its pages made by THREADS threads
               (MADV_POPULATE_WRITE), then the device copies straight into the mapping
  mapped_reuse the same file mapped again (its pages already there), the device copies into it
  populate     mapped_new's page-making alone, and unlink: what a new file's pages cost to make
               and to give back

  python3 tests/perf/gpu_output_write.py OUT_DIR [--dir /dev/shm] [--sizes 118,1024]
      [--repeat 5] [--threads 1,8]

Needs torch with CUDA. OUT_DIR gets report.md and results.json.
"""
import argparse
import ctypes
import json
import mmap
import os
import statistics
import threading
import time

MADV_POPULATE_WRITE = 23
libc = ctypes.CDLL("libc.so.6", use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def populate(addr, size, threads):
    """MADV_POPULATE_WRITE over [addr, addr + size) split over `threads` threads (ctypes drops
    the GIL during the call)."""
    page = 4096
    part = max(page, (size // threads + page - 1) // page * page)
    errors = []

    def one(t):
        begin = min(size, part * t)
        end = min(size, begin + part)
        if begin < end and libc.madvise(addr + begin, end - begin, MADV_POPULATE_WRITE) != 0:
            errors.append(ctypes.get_errno())

    pool = [threading.Thread(target=one, args=(t,)) for t in range(1, threads)]
    for th in pool:
        th.start()
    one(0)
    for th in pool:
        th.join()
    if errors:
        raise OSError(errors[0], os.strerror(errors[0]))


def mapped(path, size, create):
    fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_TRUNC if create else 0), 0o644)
    if create:
        os.ftruncate(fd, size)
    m = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    os.close(fd)
    return m


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--dir", default="/dev/shm")
    parser.add_argument("--sizes", default="118,1024")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", default="1,8")
    parser.add_argument("--device", default="cuda", help="cpu: the script's own check")
    opts = parser.parse_args()
    import numpy as np
    import torch
    os.makedirs(opts.out, exist_ok=True)
    work = os.path.join(opts.dir, f"kiln-output-write-{os.getpid()}")
    os.makedirs(work)
    chunk_bytes = 64 << 20
    chunk = torch.empty(chunk_bytes, dtype=torch.uint8)  # pageable, reused
    results = {"node": torch.cuda.get_device_name(0) if opts.device == "cuda" else "cpu", "date": time.strftime("%Y-%m-%d"),
               "dir": opts.dir, "rows": []}
    try:
        for mib in [int(s) for s in opts.sizes.split(",")]:
            size = mib << 20
            src = torch.randint(0, 255, (size,), dtype=torch.uint8, device=opts.device)
            times = {}

            def note(name, seconds):
                times.setdefault(name, []).append(seconds)

            for r in range(opts.repeat):
                # chunked: kiln's path for outputs below 256 MiB
                path = os.path.join(work, f"chunked{r}")
                t0 = time.monotonic()
                with open(path + ".tmp", "wb") as f:
                    for at in range(0, size, chunk_bytes):
                        n = min(chunk_bytes, size - at)
                        chunk[:n].copy_(src[at:at + n])
                        f.write(memoryview(chunk.numpy())[:n])
                os.rename(path + ".tmp", path)
                note("chunked", time.monotonic() - t0)
                t0 = time.monotonic()
                os.unlink(path)
                note("unlink", time.monotonic() - t0)
                for threads in [int(t) for t in opts.threads.split(",")]:
                    path = os.path.join(work, f"mapped{threads}_{r}")
                    t0 = time.monotonic()
                    m = mapped(path, size, create=True)
                    buf = np.frombuffer(m, dtype=np.uint8)
                    addr = buf.ctypes.data
                    populate(addr, size, threads)
                    t1 = time.monotonic()
                    torch.from_numpy(buf).copy_(src)
                    t2 = time.monotonic()
                    note(f"populate_{threads}t", t1 - t0)
                    note(f"mapped_new_{threads}t", t2 - t0)
                    del buf
                    m.close()
                    # mapped_reuse: the same file again, its pages already made
                    t0 = time.monotonic()
                    m = mapped(path, size, create=False)
                    buf = np.frombuffer(m, dtype=np.uint8)
                    torch.from_numpy(buf).copy_(src)
                    note("mapped_reuse", time.monotonic() - t0)
                    ok = bool(torch.equal(torch.from_numpy(buf[:1 << 20].copy()),
                                          src[:1 << 20].cpu()))
                    if opts.device == "cuda":
                        torch.cuda.synchronize()
                    del buf
                    m.close()
                    os.unlink(path)
                    if not ok:
                        raise SystemExit("the mapped file does not hold the tensor's bytes")
            row = {"mib": mib}
            for name, values in times.items():
                row[name + "_ms"] = round(statistics.median(values) * 1e3, 2)
            results["rows"].append(row)
            print(json.dumps(row), flush=True)
            del src
    finally:
        for name in os.listdir(work):
            os.unlink(os.path.join(work, name))
        os.rmdir(work)
    with open(os.path.join(opts.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    keys = sorted({k for row in results["rows"] for k in row if k != "mib"})
    lines = [f"## One output from the GPU into a file on {opts.dir} ({results['date']}, "
             f"{results['node']}), medians of {opts.repeat}", "",
             "| MiB | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys)]
    for row in results["rows"]:
        lines.append(f"| {row['mib']} | " + " | ".join(str(row.get(k)) for k in keys) + " |")
    with open(os.path.join(opts.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
