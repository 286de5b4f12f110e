"""Where in the solution's own files something happened."""

import os
import sys
import traceback

from kiln_runner.abi import PACKAGE


def _in_solution(filename):
    """`filename` as the solution names it ("kernel.py") when it is one of the solution's own
    files (its package, wherever it lies: the compile cache, or a worker's writable copy), else
    None."""
    marker = os.sep + PACKAGE + os.sep
    at = filename.rfind(marker)
    return filename[at + len(marker):] if at >= 0 else None


def _calling_line():
    """The innermost frame of the current stack in the solution's own files, as
    'file.py:LINE (in f())', or None."""
    frame = sys._getframe(1)
    while frame is not None:
        rel = _in_solution(frame.f_code.co_filename)
        if rel is not None:
            return f"{rel}:{frame.f_lineno} (in {frame.f_code.co_name}())"
        frame = frame.f_back
    return None


def _solution_frame(tb):
    """The innermost traceback frame in the solution's own files, as 'file.py:LINE', or None."""
    where = None
    for frame in traceback.extract_tb(tb):
        rel = _in_solution(frame.filename)
        if rel is not None:
            where = f"{rel}:{frame.lineno}"
    return where
