#!/usr/bin/env python3
"""The most a run's output files take in the node's RAM-backed job folder, sampled as it runs.

Every checked call's outputs and every recheck's are written to files by the reference's and the
candidate's workers (docs/verdict-time.md, step 4). The reference keeps each of its passes until
the workload is done; the candidate's files of a pass go once the pass is judged at its gate, so
a run should never hold more than the reference's 2 x trials passes and two of the candidate's
(Evaluation::OutputFileBytes). This starts a host-backend node with its job folder in
--scratch-dir, submits vector_add_f32's own reference as the candidate on one workload of N
float32 elements (one output of 4 N bytes: a pass), and samples the bytes the node's folder holds
every few milliseconds (st_blocks of every file under it) while the run goes on.

  python3 tests/perf/scratch_peak.py BUILD_DIR [--n 33554432] [--mode official] \\
      [--scratch-dir /dev/shm] [--repeat 2]

Prints a markdown report: per submission, the peak bytes held, in passes, against the reference's
passes plus two, and the wall time of the submission.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def folder_bytes(root):
    total = 0
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            total += e.stat(follow_symlinks=False).st_blocks * 512
                    except FileNotFoundError:
                        pass  # removed meanwhile
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            pass
    return total


class Sampler(threading.Thread):
    def __init__(self, root, period_s):
        super().__init__(daemon=True)
        self.root, self.period_s = root, period_s
        self.peak, self.samples, self.stop = 0, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, folder_bytes(self.root))
            self.samples += 1
            time.sleep(self.period_s)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build")
    p.add_argument("--n", type=int, default=32 << 20, help="elements of the workload")
    p.add_argument("--mode", default="official")
    p.add_argument("--scratch-dir", default="/dev/shm")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--period-ms", type=float, default=5)
    a = p.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bin_dir = os.path.join(os.path.abspath(a.build), "bin")
    work = tempfile.mkdtemp(prefix="kiln-scratch-peak-")
    d = json.load(open(os.path.join(root, "harness/definitions/vector_add_f32.json")))
    solution = d["native_reference"]
    solution["name"] = "vector_add_as_candidate"
    json.dump(solution, open(os.path.join(work, "solution.json"), "w"))
    workload = {"definition": "vector_add_f32", "solution": None, "evaluation": None,
                "workload": {"uuid": "5c7a9e1b-0d2f-4e6a-8b1c-3d5e7f9a0b21", "axes": {"n": a.n},
                             "inputs": {"a": {"type": "random"}, "b": {"type": "random"}}}}
    open(os.path.join(work, "one.jsonl"), "w").write(json.dumps(workload) + "\n")
    data = os.path.join(work, "data")
    log = open(os.path.join(work, "harness.log"), "w")
    harness = subprocess.Popen([os.path.join(bin_dir, "kiln-harness"), "--listen", "127.0.0.1:0",
                                "--data-dir", data, "--backend", "host",
                                "--scratch-dir", a.scratch_dir],
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        address = None
        for _ in range(300):
            text = open(log.name).read()
            for line in text.splitlines():
                if "listening on" in line:
                    address = line.split()[3]
            if address:
                break
            time.sleep(0.1)
        if not address:
            sys.exit("kiln-harness did not start:\n" + open(log.name).read())
        folders = [f for f in os.listdir(a.scratch_dir) if f.startswith("kiln-jobs-")]
        mine = None
        for f in folders:  # the node's own: the one its log names
            if f in open(log.name).read():
                mine = os.path.join(a.scratch_dir, f)
        if mine is None:
            sys.exit("the node's RAM-backed folder was not found: " + open(log.name).read())
        pass_bytes = 4 * a.n
        trials = 3 if a.mode == "official" else 1
        print(f"# Output files held by one run, {time.strftime('%Y-%m-%d', time.gmtime())}\n")
        print(f"vector_add_f32, n = {a.n} (a pass: {pass_bytes / 2**20:.0f} MiB), mode {a.mode} "
              f"({trials} trial(s): the reference keeps {2 * trials} passes), host backend, "
              f"job folder in {a.scratch_dir}, sampled every {a.period_ms:g} ms; "
              f"{os.cpu_count()} CPUs\n")
        print("| submission | status | peak held | in passes | bound (reference's + 2) | wall s | samples |")
        print("|---|---|---|---|---|---|---|")
        for i in range(a.repeat):
            sampler = Sampler(mine, a.period_ms / 1000)
            sampler.start()
            t0 = time.monotonic()
            r = subprocess.run([os.path.join(bin_dir, "kiln"), "--server", address, "submit",
                                "--definition", "vector_add_f32", "--solution",
                                os.path.join(work, "solution.json"), "--workloads",
                                os.path.join(work, "one.jsonl"), "--mode", a.mode, "--json"],
                               capture_output=True, text=True, timeout=1800)
            wall = time.monotonic() - t0
            sampler.stop.set()
            sampler.join()
            try:
                status = json.loads(r.stdout)["status"]
            except (ValueError, KeyError):
                status = f"exit {r.returncode}: {r.stderr.strip()[-200:]}"
            print(f"| {i + 1} | {status} | {sampler.peak / 2**20:.0f} MiB | "
                  f"{sampler.peak / pass_bytes:.2f} | {2 * trials + 2} | {wall:.2f} | "
                  f"{sampler.samples} |")
        outputs_lines = [l for l in open(log.name).read().splitlines() if "outputs_in_data_dir" in l]
        if outputs_lines:
            print("\nThe node wrote in its data dir instead: " + outputs_lines[-1])
    finally:
        harness.terminate()
        harness.wait(timeout=60)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
