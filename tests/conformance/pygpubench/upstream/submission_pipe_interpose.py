"""
Pipe Interposition (dup2 + background thread)
==============================================

Instead of redirecting the pipe (like FD overwrite), this exploit interposes
a filter thread between the harness's fprintf output and the parent process.
Uses dup2() to reroute the output pipe through a background thread that
modifies timing values in real-time while passing all other data through.

Uses Python stack frame inspection to find the exact output pipe FD from
the _do_bench_impl caller frame.

"""
import os
import sys
import threading

_filter_thread = None


def _find_output_fd():
    """Walk Python stack frames to find the out_fd parameter."""
    frame = sys._getframe()
    while frame is not None:
        if 'out_fd' in frame.f_locals:
            obj = frame.f_locals['out_fd']
            if hasattr(obj, 'fileno'):
                return obj.fileno()
        frame = frame.f_back
    return None


def _filter_worker(read_fd, write_fd):
    """Read from read_fd, modify timing lines, write to write_fd."""
    buf = b''
    try:
        while True:
            data = os.read(read_fd, 8192)
            if not data:
                break
            buf += data
            while b'\n' in buf:
                line_bytes, buf = buf.split(b'\n', 1)
                line = line_bytes.decode('utf-8', errors='replace')
                parts = line.split('\t')
                if len(parts) == 2 and parts[0].isdigit():
                    modified = f"{parts[0]}\t1.000000\n"
                    os.write(write_fd, modified.encode())
                else:
                    os.write(write_fd, line_bytes + b'\n')
    except OSError:
        pass
    finally:
        if buf:
            try:
                os.write(write_fd, buf)
            except OSError:
                pass
        os.close(read_fd)
        os.close(write_fd)


def _init():
    global _filter_thread

    target_fd = _find_output_fd()
    if target_fd is None:
        return False

    saved_fd = os.dup(target_fd)
    filter_r, filter_w = os.pipe()
    os.dup2(filter_w, target_fd)
    os.close(filter_w)

    _filter_thread = threading.Thread(
        target=_filter_worker,
        args=(filter_r, saved_fd),
        daemon=False,
    )
    _filter_thread.start()
    return True


_count = 0

def kernel(output, inp):
    global _count
    # skip the initial compile step, when memory is unreachable for us
    if _count == 10:
        _init()
    _count += 1

    import torch
    weights = torch.tensor([0.2989, 0.5870, 0.1140],
                           device=output.device, dtype=output.dtype)
    # deliberately make the submission very slow, so that we can clearly see
    # whether the cheat was successful
    dummy = torch.empty((2048, 2048), device=output.device, dtype=torch.float32)
    dummy = dummy @ dummy
    torch.sum(inp * weights, dim=-1, out=output)
