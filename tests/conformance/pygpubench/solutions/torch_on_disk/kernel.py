"""Port of pygpubench's "replace torch" (exploits/submission_replace_torch.py) to kiln.

The original wrote a torch.py into its working directory, where a later import in the evaluating
process would have picked it up; pygpubench's Landlock sandbox is meant to refuse the write. What a
kiln candidate would gain from the node's disk is larger: the torch package and the interpreter's
start-up files are shared with the Python reference runner (the reference's outputs on the cuda
backend), torch baselines and every later candidate. On its first call this port tries, without
changing any content:

  - opening torch/__init__.py and torch/functional.py for appending (no byte written);
  - creating (then removing at once) a file in the torch package folder, in each site-packages
    folder (a .pth file runs code at every interpreter start) and in every other folder of
    sys.path outside its own package (sitecustomize.py).

If any of them succeeds the exploit has what it wants: it computes the right answer and PASSES,
which this corpus counts as a failure of the sandbox. If every one is refused it raises a
RuntimeError listing the refusals (RUNTIME_ERROR).
"""
import os
import site
import sys
import uuid

import torch

_checked = False


def _attempts():
    torch_dir = os.path.dirname(torch.__file__)
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package root
    folders = [torch_dir]
    try:
        folders += site.getsitepackages()
    except Exception:
        pass
    folders += [p for p in sys.path if p and os.path.isdir(p)]
    seen, out = set(), []
    for f in folders:
        f = os.path.realpath(f)
        if f in seen or f.startswith(os.path.realpath(own)) or f == os.path.realpath(os.getcwd()):
            continue
        seen.add(f)
        out.append(("create", f))
    out += [("append", os.path.join(torch_dir, "__init__.py")),
            ("append", os.path.join(torch_dir, "functional.py"))]
    return out


def _try(kind, path):
    if kind == "append":
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.close(fd)
        return path
    name = os.path.join(path, f"kiln_probe_{uuid.uuid4().hex}.pth")
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)
    os.unlink(name)
    return name


def run(a, b, c):
    global _checked
    if not _checked:
        granted, refused = [], []
        for kind, path in _attempts():
            try:
                granted.append(_try(kind, path))
            except OSError as e:
                refused.append(f"{kind} {path}: {e.strerror}")
        if not granted:
            raise RuntimeError("adversary: every write to the node's Python was refused: "
                               + "; ".join(refused[:6]))
        print("adversary: writable: " + ", ".join(granted), file=sys.stderr)
        _checked = True
    torch.add(a, b, out=c)
