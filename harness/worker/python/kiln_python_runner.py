"""kiln's Python runner: a kiln worker whose solution is Python code run in-process.

kiln-harness starts it instead of kiln-worker for two kinds of solution:

  a definition's `reference` (flashinfer-bench's `run(...)`, value-returning):
    python3 -B kiln_python_runner.py --core LIB --baseline reference|torch_eager|torch_compile

  a Python or Triton candidate (spec.language "python" | "triton"), from the package the compile
  stage checked (PKG_ROOT/kiln_solution/<the solution's sources>):
    python3 -B kiln_python_runner.py --core LIB --solution PKG_ROOT --entry FILE.py::FUNCTION
                                     --style dps|value

with [--sys-path DIR]... in both, a framed WorkerRequest on fd 3 and WorkerEvents expected on
fd 4, exactly like kiln-worker. LIB (libkiln_worker_python.so) is kiln's worker core: it reads the
request, allocates and fills the inputs on the device, flushes the cache, times every call with
the CUPTI span (the host clock on the host backend), runs every integrity check, computes the
statistic and sends the result. This script only turns kiln's buffers into torch tensors (no
copy: the tensors alias kiln's memory), calls the function on kiln's stream, and hands outputs
back. Timing is never done here.

The compile stage runs the same script without the core:
    python3 -B kiln_python_runner.py --check --solution PKG_ROOT --entry FILE.py::FUNCTION
                                     [--arity N]
which byte-compiles every source (a syntax error names file and line), imports the entry module
(a missing module is named) and checks the entry function.

Calling conventions (flashinfer-bench's):
  dps    fn(*inputs, *outputs): outputs are kiln's buffers, written in place; the return value
         is ignored.
  value  fn(*inputs) returns the outputs: a tensor, or a tuple/list in definition order. kiln
         collects them after every call, outside the timed window: it checks count, shape and
         dtype, refuses a returned tensor that shares memory with kiln's buffers, copies it into
         kiln's (poisoned) output buffer, and then overwrites the returned memory with its
         bitwise complement, so a later call that returns it again without computing it is seen.
Scalars arrive as Python numbers, tensors on the node's device (cpu on the host backend).

The runner itself is the package kiln_runner beside this script, one module per concept: abi
(what the core and the runner share), tensors (kiln's buffers as torch tensors), runner (the
calling conventions), guard and own_work (the integrity guards), kernelbench (KernelBench
problems), extension_sources, load_inline and extension_build (torch's load_inline served by
kiln), solution and frames (importing a solution, naming its lines), check (the compile stage)
and main (the worker's loop).
"""
import os
import sys

# This script's folder holds the package (python3 puts it first on sys.path; said here too, so
# that no earlier folder can supply a kiln_runner of its own).
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

# The classes the guard watches stay where a solution found them before the runner was a package
# (__main__.Runner, ...): the same objects as kiln_runner.runner.Runner and the others.
from kiln_runner.guard import Guard, OverridesOff  # noqa: E402,F401
from kiln_runner.main import main  # noqa: E402
from kiln_runner.own_work import OwnWork  # noqa: E402,F401
from kiln_runner.runner import Runner  # noqa: E402,F401

if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # As kiln-worker: no interpreter teardown after the result is sent (CUDA, torch threads).
    os._exit(code if isinstance(code, int) else 1)
