#!/usr/bin/env python3
"""kiln's conformance corpus: files from the wild, each judged by a real kiln-harness and
compared with the verdict it must get.

Every tests/conformance/<source>/cases.json lists cases (README.md beside this file has the
format). This script starts a kiln-harness on 127.0.0.1:0 with a temporary data dir, registers
each case's definition (`kiln defs import --format kernelbench` for problem files, `kiln defs add`
for flashinfer-bench definitions), submits each case's solution with `kiln submit --json`, and
compares the status, and the check named at the start of the reason, with the expectation.

  python3 tests/conformance/run_conformance.py --bin build/bin --backend host --needs cpu \
      --out OUT [--python python3] [--only ID] [--budget-s S] [--jobs N]

Prints one row per case and ends with `N passed, N failed, N skipped`; exits 1 if any case
failed. OUT gets results.json, summary.md (the table docs/conformance.md shows) and the CLI's
output for every step. Without a python3 that imports torch every case is skipped (exit 0).
"""
import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
KERNELBENCH_CANDIDATES = [
    os.environ.get("KILN_KERNELBENCH_DIR", ""),
    os.path.join(REPO, "..", "shared", "datasets", "kernelbench"),
    os.path.join(REPO, "shared", "datasets", "kernelbench"),
]


FLASHINFER_CANDIDATES = [
    os.environ.get("KILN_FLASHINFER_DIR", ""),
    os.path.join(REPO, "..", "shared", "datasets", "flashinfer-trace"),
    os.path.join(REPO, "shared", "datasets", "flashinfer-trace"),
]


def dataset_dir(given, candidates, marker):
    """The first of `given` and `candidates` that holds `marker`, or None."""
    for d in [given] + candidates:
        if d and os.path.isdir(os.path.join(d, marker)):
            return os.path.abspath(d)
    return None


def load_cases(root):
    """Every case of every <source>/cases.json under root, in file order, sources sorted with
    kernelbench first (its cases carry the most information per second)."""
    files = sorted(glob.glob(os.path.join(root, "*", "cases.json")),
                   key=lambda p: (os.path.basename(os.path.dirname(p)) != "kernelbench", p))
    cases = []
    for path in files:
        folder = os.path.dirname(path)
        with open(path) as f:
            doc = json.load(f)
        for case in doc.get("cases", []):
            case = dict(case)
            case["_folder"] = folder
            case["_source"] = os.path.basename(folder)
            cases.append(case)
    return cases


def expected_statuses(case):
    s = case["expected"]["status"]
    return s if isinstance(s, list) else [s]


def describe_expected(case):
    text = "|".join(expected_statuses(case))
    check = case["expected"].get("check")
    return text + (f" {check}" if check else "")


class Harness:
    """A kiln-harness on 127.0.0.1:0 with its own data dir, and the kiln CLI against it."""

    def __init__(self, bin_dir, data, logs, flags):
        self.bin = bin_dir
        self.data = data
        self.logs = logs
        self.flags = flags
        self.proc = None
        self.addr = None
        self.log_path = os.path.join(logs, "harness.log")

    def start(self, wait_s=60):
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [os.path.join(self.bin, "kiln-harness"), "--listen", "127.0.0.1:0", "--data-dir",
             self.data] + self.flags, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            with open(self.log_path, errors="replace") as f:
                for line in f:
                    if "listening on" in line:
                        self.addr = line.split("listening on")[1].split()[0]
                        return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("kiln-harness did not start:\n" + open(self.log_path).read()[-3000:])

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kiln(self, args, tag, timeout):
        """Runs the CLI; its stdout and stderr go to LOGS/TAG.{out,err}. Returns (rc, out, err)."""
        cmd = [os.path.join(self.bin, "kiln"), "--server", self.addr] + args
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            rc, out, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc, err = 124, err + f"\n[timed out after {timeout:.0f} s]"
        safe = tag.replace("/", "_")
        with open(os.path.join(self.logs, safe + ".out"), "w") as f:
            f.write(out)
        with open(os.path.join(self.logs, safe + ".err"), "w") as f:
            f.write(" ".join(cmd) + "\n" + err)
        return rc, out, err


def parse_json(text):
    try:
        return json.loads(text[text.find("{"):]) if "{" in text else None
    except ValueError:
        return None


def kernelbench_problem(case, kb_dir):
    """(path of the problem file, 'levelN/ID_NAME') for a case's kernelbench definition, or
    raises ValueError naming what is missing."""
    spec = case["definition"]["kernelbench"]
    if "dataset" in spec:
        if not kb_dir:
            raise ValueError("the KernelBench dataset was not found (set KILN_KERNELBENCH_DIR "
                             "or --kernelbench-dir)")
        path = os.path.join(kb_dir, spec["dataset"])
        as_name = spec["dataset"]
    else:
        path = os.path.join(case["_folder"], spec["file"])
        as_name = spec.get("as") or os.path.join(os.path.basename(os.path.dirname(path)),
                                                 os.path.basename(path))
    as_name = as_name[:-3] if as_name.endswith(".py") else as_name
    if not os.path.isfile(path):
        raise ValueError(f"problem file not found: {path}")
    level, stem = as_name.split("/")
    if not level.startswith("level") or "_" not in stem:
        raise ValueError(f"'{as_name}' is not levelN/ID_NAME")
    return path, as_name


def definition_name(as_name):
    level, stem = as_name.split("/")
    return f"kernelbench_l{level[len('level'):]}_{stem}"


def register(harness, cases, kb_dir, fi_dir, python, work, budget):
    """Registers every definition the cases need. Returns {case id: (definition name, error)}."""
    result = {}
    kb_dir_import = os.path.join(work, "kernelbench_import")
    kb_wanted = {}
    for case in cases:
        d = case["definition"]
        try:
            if "kernelbench" in d:
                path, as_name = kernelbench_problem(case, kb_dir)
                dst = os.path.join(kb_dir_import, as_name + ".py")
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                if os.path.exists(dst) and open(dst).read() != open(path).read():
                    raise ValueError(f"two different problem files registered as {as_name}")
                shutil.copyfile(path, dst)
                kb_wanted.setdefault(definition_name(as_name), []).append(case["id"])
                result[case["id"]] = (definition_name(as_name), None)
            elif "builtin" in d:
                result[case["id"]] = (d["builtin"], None)  # the harness ships it
            elif "file" in d or "dataset" in d:
                result[case["id"]] = (None, None)  # added below, one `defs add` each
            else:
                raise ValueError("definition has none of 'kernelbench', 'file', 'dataset', "
                                 "'builtin'")
        except (ValueError, KeyError) as e:
            result[case["id"]] = (None, f"definition: {e}")
    if kb_wanted:
        args = ["defs", "import", kb_dir_import, "--format", "kernelbench", "--python", python,
                "--json"]
        for name in sorted(kb_wanted):
            args += ["--definition", name]
        rc, out, err = harness.kiln(args, "defs_import_kernelbench",
                                    max(60, min(900, budget.left())))
        doc = parse_json(out) or {}
        status = {d.get("name"): d for d in doc.get("definitions", [])}
        for name, ids in kb_wanted.items():
            d = status.get(name)
            if d is None or d.get("status") not in ("registered", "validated", "imported"):
                why = (d or {}).get("errors") or [f"defs import exit {rc}: {err.strip()[-300:]}"]
                for cid in ids:
                    result[cid] = (None, f"definition {name} not registered: {why[0][:300]}")
    added = {}
    for case in cases:
        d = case["definition"]
        if not ("file" in d or "dataset" in d) or result[case["id"]][1]:
            continue
        if "file" in d:
            path = os.path.join(case["_folder"], d["file"])
        elif fi_dir:
            path = os.path.join(fi_dir, d["dataset"])
        else:
            result[case["id"]] = (None, "definition: the flashinfer-trace dataset was not found "
                                        "(set KILN_FLASHINFER_DIR or --flashinfer-dir)")
            continue
        key = (path, d.get("workloads"))
        if key not in added:
            try:
                with open(path) as f:
                    name = json.load(f)["name"]
            except (OSError, ValueError, KeyError) as e:
                added[key] = (None, f"definition file {path}: {e}")
            else:
                args = ["defs", "add", path]
                if d.get("workloads"):
                    args += ["--workloads", os.path.join(case["_folder"], d["workloads"])]
                rc, out, err = harness.kiln(args, "defs_add_" + name, 300)
                added[key] = (name, None) if rc == 0 else \
                    (None, f"defs add {os.path.basename(path)}: exit {rc}: {err.strip()[-300:]}")
        result[case["id"]] = added[key]
    return result


class Budget:
    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds

    def left(self):
        return self.deadline - time.monotonic()


def nvcc_found():
    return bool(shutil.which("nvcc")) or os.path.exists("/usr/local/cuda/bin/nvcc")


def judge(case, status, reason):
    """(ok, note): does (status, reason) meet the case's expectation?"""
    if status not in expected_statuses(case):
        return False, f"status {status}"
    check = case["expected"].get("check")
    if check and status == "REJECTED" and not reason.startswith(check):
        return False, f"reason does not start with {check}"
    return True, ""


def run_case(harness, case, definition, backend, budget, case_timeout):
    solution = os.path.join(case["_folder"], case["solution"])
    mode = case.get("mode", "kernelbench")
    limit = int(max(30, min(case_timeout, budget.left() - 10)))
    args = ["submit", "--definition", definition, "--solution", solution, "--mode", mode,
            "--backend", backend, "--json", "--timeout-s", str(limit)]
    start = time.monotonic()
    rc, out, err = harness.kiln(args, "submit_" + case["id"], limit + 30)
    wall = time.monotonic() - start
    doc = parse_json(out) or {}
    status = doc.get("status")
    traces = doc.get("traces") or [{}]
    reason = ((traces[0].get("kiln") or {}).get("reason") or doc.get("reason") or "")
    if not status:
        status = "TIMEOUT(client)" if rc == 124 else "REFUSED"
        reason = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}, no JSON"
    return {"status": status, "reason": reason, "wall_s": round(wall, 1), "exit": rc,
            "run_id": doc.get("run_id")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    p.add_argument("--python", default=shutil.which("python3") or "python3")
    p.add_argument("--backend", choices=["host", "cuda"], default="host")
    p.add_argument("--needs", choices=["cpu", "gpu"], default="cpu")
    p.add_argument("--only", action="append", default=[], help="ID substring (repeatable)")
    p.add_argument("--budget-s", type=float, default=1800)
    p.add_argument("--case-timeout-s", type=float, default=600)
    p.add_argument("--jobs", type=int, default=1, help="submissions in flight at once")
    p.add_argument("--kernelbench-dir", default="")
    p.add_argument("--flashinfer-dir", default="")
    p.add_argument("--corpus", default=HERE)
    p.add_argument("--out", default="")
    p.add_argument("--date", default=datetime.date.today().isoformat())
    p.add_argument("--machine", default="", help="where it ran, for the table")
    p.add_argument("--harness-flag", action="append", default=[])
    p.add_argument("--stage-datasets", metavar="DIR",
                   help="copy the dataset files the cases name into DIR/kernelbench and "
                        "DIR/flashinfer-trace (for a node without the datasets), then exit")
    opts = p.parse_args()
    if opts.stage_datasets:
        return stage_datasets(opts)
    if not opts.out:
        p.error("--out is required")
    budget = Budget(opts.budget_s)
    out = os.path.abspath(opts.out)
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)

    cases = [c for c in load_cases(opts.corpus)
             if (opts.needs == "gpu" or c.get("needs", "any") in ("cpu", "any"))
             and (not opts.only or any(s in c["id"] for s in opts.only))]
    for c in cases:
        # A file whose verdict follows the node (a CUDA build that only succeeds with a GPU's
        # toolchain) states both: "expected" on the host backend, "expected_on_gpu" on cuda.
        if opts.backend == "cuda" and "expected_on_gpu" in c:
            c["expected"] = c["expected_on_gpu"]
            c["why"] = c.get("why_on_gpu", c.get("why", ""))
    results = []

    def skip(case, why):
        results.append({"id": case["id"], "source": case["_source"], "needs": case.get("needs"),
                        "expected": describe_expected(case), "got": "SKIPPED", "reason": why,
                        "wall_s": 0.0, "outcome": "skipped"})

    torch_ok = subprocess.run([opts.python, "-c", "import torch"], capture_output=True).returncode == 0
    if not torch_ok:
        print(f"SKIPPED: {opts.python} does not import torch; every case needs it "
              f"(apt-get install python3-torch)", flush=True)
        for c in cases:
            skip(c, "no python3 with torch")
        return finish(results, out, opts)

    work = tempfile.mkdtemp(prefix="kiln-conformance-")
    flags = ["--backend", opts.backend, "--python", opts.python, "--worker-timeout-s", "300"]
    if opts.backend == "cuda":
        flags += ["--max-tensor-bytes", str(64 << 30)]
    else:
        flags += ["--host-flush-mb", "16"]
    harness = Harness(os.path.abspath(opts.bin), os.path.join(work, "data"), logs,
                      flags + opts.harness_flag)
    try:
        harness.start()
        kb_dir = dataset_dir(opts.kernelbench_dir, KERNELBENCH_CANDIDATES, "level1")
        runnable = []
        for c in cases:
            if "nvcc" in c.get("tools", []) and not nvcc_found():
                skip(c, "needs nvcc (load_inline's CUDA sources), which this machine lacks")
            else:
                runnable.append(c)
        t0 = time.monotonic()
        fi_dir = dataset_dir(opts.flashinfer_dir, FLASHINFER_CANDIDATES, "definitions")
        defs = register(harness, runnable, kb_dir, fi_dir, opts.python, work, budget)
        print(f"definitions registered in {time.monotonic() - t0:.1f} s", flush=True)
        lock = threading.Lock()

        def one(case):
            definition, error = defs[case["id"]]
            row = {"id": case["id"], "source": case["_source"], "needs": case.get("needs"),
                   "expected": describe_expected(case), "why": case.get("why", "")}
            if error:
                row.update(got="(not registered)", reason=error, wall_s=0.0, outcome="failed")
            elif budget.left() < 30:
                row.update(got="SKIPPED", reason="out of time (--budget-s)", wall_s=0.0,
                           outcome="skipped")
            else:
                got = run_case(harness, case, definition, opts.backend, budget,
                               opts.case_timeout_s)
                ok, note = judge(case, got["status"], got["reason"])
                row.update(got=got["status"], reason=got["reason"][:800], wall_s=got["wall_s"],
                           run_id=got["run_id"], outcome="passed" if ok else "failed",
                           note=note)
            with lock:
                results.append(row)
                mark = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[row["outcome"]]
                print(f"{mark} {row['id']:<52} expected {row['expected']:<40} got "
                      f"{row['got']:<20} {row['wall_s']:6.1f} s  {row['reason'][:160]}",
                      flush=True)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
            list(pool.map(one, runnable))
    finally:
        harness.stop()
        shutil.rmtree(work, ignore_errors=True)
    return finish(results, out, opts)


def stage_datasets(opts):
    """Copies every dataset file a case names, under the same relative path."""
    kb = dataset_dir(opts.kernelbench_dir, KERNELBENCH_CANDIDATES, "level1")
    fi = dataset_dir(opts.flashinfer_dir, FLASHINFER_CANDIDATES, "definitions")
    wanted = set()
    for case in load_cases(opts.corpus):
        d = case["definition"]
        if "dataset" in d.get("kernelbench", {}):
            wanted.add((kb, "kernelbench", d["kernelbench"]["dataset"]))
        if "dataset" in d:
            wanted.add((fi, "flashinfer-trace", d["dataset"]))
    missing = 0
    for root, name, rel in sorted(wanted, key=lambda w: (w[1], w[2])):
        if not root or not os.path.isfile(os.path.join(root, rel)):
            print(f"missing: {name}/{rel}")
            missing += 1
            continue
        dst = os.path.join(opts.stage_datasets, name, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(root, rel), dst)
    print(f"staged {len(wanted) - missing} dataset files into {opts.stage_datasets}, "
          f"{missing} missing")
    return 1 if missing else 0


def finish(results, out, opts):
    order = {r["id"]: i for i, r in enumerate(results)}
    results.sort(key=lambda r: order[r["id"]])
    counts = {k: sum(1 for r in results if r["outcome"] == k)
              for k in ("passed", "failed", "skipped")}
    where = opts.machine or ("a GPU node" if opts.backend == "cuda" else "a CPU machine")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"date": opts.date, "backend": opts.backend, "needs": opts.needs,
                   "machine": where, "counts": counts, "cases": results}, f, indent=1)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(f"Backend {opts.backend}, {where}, {opts.date}: {counts['passed']} passed, "
                f"{counts['failed']} failed, {counts['skipped']} skipped.\n\n")
        f.write("| case | source | expected | got | wall s | date |\n|---|---|---|---|---|---|\n")
        for r in results:
            got = r["got"]
            if r["outcome"] != "skipped" and r.get("reason") and r["got"] == "REJECTED":
                got += " " + r["reason"].split(":")[0]
            mark = "" if r["outcome"] == "passed" else f" (**{r['outcome']}**)"
            f.write(f"| {r['id']} | {r['source']} | {r['expected']} | {got}{mark} | "
                    f"{r['wall_s']:.1f} | {opts.date} |\n")
    print("\n| case | expected | got | wall s |")
    for r in results:
        print(f"| {r['id']} | {r['expected']} | {r['got']} | {r['wall_s']:.1f} |")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped",
          flush=True)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
