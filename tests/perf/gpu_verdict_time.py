#!/usr/bin/env python3
"""Time to verdict on a CUDA node, and where it goes: kiln as it runs by default (warm reference
workers, one candidate process per run, Python spares) next to the same harness with
--warm-references=false --python-spares=false, in one run on one GPU.

Cases (RMSNorm, hidden 4096, the flashinfer-trace workloads batch 7, 64 and 14418, official mode):
  native     definition perf_rmsnorm_h4096 without its Python reference (so the CUDA native
             reference is used), the tuned CUDA RMSNorm
  python     definition rmsnorm_h4096 (its Python reference, torch on the node), same candidate
  triton     definition rmsnorm_h4096, the Triton RMSNorm (tests/gpu/solutions/rmsnorm_h4096_triton)
  wrong      definition rmsnorm_h4096, a Triton RMSNorm with a wrong result (expected
             INCORRECT_NUMERICAL: the time an incorrect verdict takes)
Measured per case: the first submission (primes the compile cache and reference timings), then
WARM submissions of the same source (compile cache hit): median wall time of `kiln submit`
(a CLI process, the gRPC call, the whole verdict). Cold compile: new CUDA sources (a comment
differs) against the warm median; nvcc alone on the same source with kiln's command line (the
compile log's command, --threads 2 included), and without --threads. Throughput: 16 different CUDA candidates submitted at once (cold compiles),
then the same 16 again (cache hits); verdicts per minute from the first submit to the last
verdict. New Triton sources: three Triton RMSNorms whose sources differ (each a compile cache
miss), 5 s apart, on both nodes: the compile stage's check started ahead of need (the default)
against a check started afresh (--python-spares=false). The harness's /metrics gives the per-stage means (kiln_verdict_stage_seconds).

Every submission's progress lines are stamped with the seconds since its `kiln submit` started
(details/TAG.timeline; the report shows the last warm submission of each case), and the queued
ones say when each run was on the device. --ab-flags=FLAGS compares harness flags with kiln's
defaults on throughput alone, harnesses alternated (for example --ab-flags=--compile-nice=10);
--cases and --skip-cold narrow the run.

  python3 tests/perf/gpu_verdict_time.py BUNDLE_DIR OUT_DIR DATASET_DIR [--warm 5] [--budget-s 420]
      [--ab-flags=FLAGS [--ab-rounds 2]] [--cases native,python,triton,wrong] [--skip-cold]

OUT_DIR gets report.md, results.json and details/. Exits 1 if a submission did not PASS.
"""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_timing_agreement as agreement  # noqa: E402  (Harness, Budget, parse_json)

GPU_DIR = os.path.join(HERE, "..", "gpu")
sys.path.insert(0, GPU_DIR)
from python_solutions import find_file as find  # noqa: E402
LINES = [1, 7, 5]  # rmsnorm_h4096.jsonl: batch 7, 64, 14418


class Node(agreement.Harness):
    """A harness with extra flags and a metrics port."""

    def __init__(self, bundle, work, details, name, flags):
        os.makedirs(os.path.join(details, name), exist_ok=True)
        super().__init__(bundle, os.path.join(work, name), os.path.join(details, name))
        self.metrics_port = random.randint(20000, 29999)
        python = shutil.which("python3") or "python3"
        self.extra_args = ["--python", python, "--metrics-listen",
                           f"127.0.0.1:{self.metrics_port}"] + flags
        self.start_wait_s = 60

    def metrics(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                        timeout=10) as r:
                return r.read().decode()
        except OSError as e:
            return f"# unavailable: {e}\n"


def stage(dataset, work):
    """The definitions and the 3-workload file of each."""
    with open(find(dataset, "rmsnorm_h4096.jsonl")) as f:
        lines = f.read().splitlines()
    picked = [json.loads(lines[n - 1]) for n in LINES]
    files = {}
    # perf_rmsnorm_h4096 without its Python reference: on a node whose python3 imports torch the
    # Python reference is chosen whenever a definition has one, and this case is the native one.
    with open(os.path.join(GPU_DIR, "defs", "perf_rmsnorm_h4096.json")) as f:
        native = json.load(f)
    native.pop("reference", None)
    native_json = os.path.join(work, "perf_rmsnorm_h4096.native.json")
    with open(native_json, "w") as f:
        json.dump(native, f)
    for definition, def_json in (("rmsnorm_h4096", find(dataset, "rmsnorm_h4096.json")),
                                 ("perf_rmsnorm_h4096", native_json)):
        jsonl = os.path.join(work, definition + ".3.jsonl")
        with open(jsonl, "w") as f:
            for doc in picked:
                doc = dict(doc, definition=definition)
                f.write(json.dumps(doc) + "\n")
        files[definition] = (def_json, jsonl)
    return files


def variant(solution, definition, work, tag, comment=""):
    """A copy of tests/gpu/solutions/SOLUTION for DEFINITION, its sources with `comment` added."""
    src = os.path.join(GPU_DIR, "solutions", solution)
    dst = os.path.join(work, "solutions", f"{solution}.{definition}.{tag}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "solution.json")) as f:
        doc = json.load(f)
    doc["definition"] = definition
    doc["name"] = f"{solution}_{tag}"
    if comment:  # sources embedded in solution.json are what the CLI sends
        for source in doc.get("sources", []):
            if "content" in source:
                mark = "//" if source.get("path", "").endswith((".cu", ".cc", ".h")) else "#"
                source["content"] += f"\n{mark} {comment}\n"
    with open(os.path.join(dst, "solution.json"), "w") as f:
        json.dump(doc, f, indent=1)
    if comment:
        for name in os.listdir(dst):
            path = os.path.join(dst, name)
            if name.endswith(".cu"):
                with open(path, "a") as f:
                    f.write(f"\n// {comment}\n")
            elif name.endswith(".py"):
                with open(path, "a") as f:
                    f.write(f"\n# {comment}\n")
    return dst


def kiln_with_timeline(node, args, tag, timeout):
    """Runs the CLI as node.kiln does, and stamps each progress line of its stderr with the
    seconds since the CLI started: details/TAG.timeline. Returns (rc, stdout, timeline)."""
    cmd = [os.path.join(node.bin, "kiln"), "--server", node.addr] + args
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timeline, chunks = [], []

    def read_err():
        for line in proc.stderr:
            timeline.append((round(time.monotonic() - start, 4), line.rstrip("\n")))

    def read_out():
        chunks.append(proc.stdout.read())

    readers = [threading.Thread(target=read_err), threading.Thread(target=read_out)]
    for r in readers:
        r.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = 124
    end = round(time.monotonic() - start, 4)
    for r in readers:
        r.join()
    out = "".join(chunks)
    timeline.append((end, "[exit]"))
    with open(os.path.join(node.details, tag + ".out"), "w") as f:
        f.write(out)
    with open(os.path.join(node.details, tag + ".timeline"), "w") as f:
        f.write(" ".join(cmd) + "\n" + "".join(f"{t:8.4f}  {line}\n" for t, line in timeline))
    return rc, out, timeline


def submit(node, definition, folder, workloads, tag, timeout=180):
    start = time.monotonic()
    rc, out, timeline = kiln_with_timeline(
        node, ["submit", "--definition", definition, "--solution", folder, "--workloads",
               workloads, "--mode", "official", "--json"], tag, timeout)
    wall = time.monotonic() - start
    doc = agreement.parse_json(out) or {}
    run = {}
    if doc.get("run_id"):
        _, text = node.kiln(["runs", "show", doc["run_id"], "--json"], tag + "_run", 60)
        run = agreement.parse_json(text) or {}
    sources = sorted({(t.get("kiln") or {}).get("reference_source", "")
                      for t in doc.get("traces", [])})
    return {"tag": tag, "run_id": doc.get("run_id"), "status": doc.get("status", f"rc {rc}"),
            "wall_s": round(wall, 3), "reference_source": sources,
            "stages": {k: run.get(k) for k in ("queued_s", "compile_s", "verify_s", "timing_s",
                                                "compile_cache_hit")},
            "latency_ms": [((t.get("evaluation") or {}).get("performance") or {}).get("latency_ms")
                           for t in doc.get("traces", [])],
            "reason": run.get("reason", ""), "timeline": timeline}


def submit_many(node, jobs, tag):
    """Submits every (definition, folder, workloads) at once; wall from first to last verdict.
    Each CLI's progress lines are stamped (details/TAG_I.timeline) with the seconds since the
    first submit, so the report can say when each run held the device."""
    import concurrent.futures
    start = time.monotonic()

    def one(i, job):
        definition, folder, workloads = job
        offset = time.monotonic() - start
        rc, out, timeline = kiln_with_timeline(
            node, ["submit", "--definition", definition, "--solution", folder, "--workloads",
                   workloads, "--mode", "official", "--json"], f"{tag}_{i}",
            max(10, 400 - offset))
        doc = agreement.parse_json(out) or {}
        return doc.get("status", "NO_VERDICT"), [(round(t + offset, 4), l) for t, l in timeline]

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        done = list(pool.map(lambda a: one(*a), enumerate(jobs)))
    wall = time.monotonic() - start
    statuses = [d[0] for d in done]
    # When each run was on the device: its first line about a workload (the reference's work
    # starts once it holds the slot) to its last line before the CLI exits.
    on_device = []
    for _, timeline in done:
        work = [t for t, line in timeline if "workload" in line or "reference" in line]
        if work:
            on_device.append((work[0], timeline[-1][0]))
    on_device.sort()
    held = [round(b - a, 3) for a, b in on_device]
    return {"n": len(jobs), "wall_s": round(wall, 2),
            "verdicts_per_min": round(60 * len(jobs) / wall, 1) if wall > 0 else 0,
            "statuses": statuses,
            "first_device_line_s": on_device[0][0] if on_device else None,
            "per_run_device_to_exit_s_median": median(held),
            "device_windows": on_device}


def stage_means(metrics_text):
    sums, counts = {}, {}
    for line in metrics_text.splitlines():
        m = re.match(r'kiln_verdict_stage_seconds_(sum|count)\{stage="([a-z_]+)"\} (\S+)', line)
        if m:
            (sums if m.group(1) == "sum" else counts)[m.group(2)] = float(m.group(3))
    return {k: (round(sums[k] / counts[k], 3) if counts.get(k) else None, int(counts.get(k, 0)))
            for k in sums}


def gauge(metrics_text, name):
    for line in metrics_text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def dump_worker_logs(node, run_ids, path):
    """The worker logs (kiln's cost lines) of some runs, read from the node's archive."""
    import sqlite3
    try:
        db = sqlite3.connect(f"file:{os.path.join(node.data, 'kiln.db')}?mode=ro", uri=True)
        with open(path, "w") as f:
            for run_id in run_ids:
                rows = db.execute("SELECT a.name, b.content FROM artifacts a JOIN blobs b "
                                  "ON a.sha256 = b.sha256 WHERE a.run_id = ? AND "
                                  "a.kind = 'worker_log' ORDER BY a.name", (run_id,)).fetchall()
                for name, content in rows:
                    text = content.decode(errors="replace") if isinstance(content, bytes) else content
                    f.write(f"===== {run_id} {name}\n")
                    f.write("\n".join(l for l in text.splitlines() if "kiln-worker" in l
                                      or "kiln python runner" in l) + "\n")
        db.close()
    except Exception as e:  # noqa: BLE001 - diagnostics only
        with open(path, "a") as f:
            f.write(f"cannot read the archive: {e!r}\n")


def median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


# The verdict each case must get.
EXPECTED = {"wrong": "INCORRECT_NUMERICAL"}


def measure_throughput(node, files, work, budget, out, label, batch):
    """16 different CUDA candidates queued at once (cold compiles), the same 16 again (cache
    hits) and, with `batch`, the 16 as one batch."""
    native_def, native_jsonl = "perf_rmsnorm_h4096", files["perf_rmsnorm_h4096"][1]
    folders = [variant("rmsnorm_h4096_tuned", native_def, work, f"{label}_q{i}",
                       comment=f"queued {i} {random.random()}") for i in range(16)]
    jobs = [(native_def, f, native_jsonl) for f in folders]
    out["queued16_cold"] = submit_many(node, jobs, f"{label}_q16cold")
    print(f"{label} 16 queued, cold compiles: {summary(out['queued16_cold'])}", flush=True)
    if budget.left() > 45:
        out["queued16_warm"] = submit_many(node, jobs, f"{label}_q16warm")
        print(f"{label} 16 queued, cache hits: {summary(out['queued16_warm'])}", flush=True)
    if batch and budget.left() > 60:
        # The same 16 as one batch: one `kiln submit` with 16 --solution flags.
        args = ["submit", "--definition", native_def, "--workloads", native_jsonl, "--mode",
                "official", "--json"]
        for f in folders:
            args += ["--solution", f]
        start = time.monotonic()
        rc, text = node.kiln(args, f"{label}_batch16", 300)
        wall = time.monotonic() - start
        doc = agreement.parse_json(text) or {}
        statuses = [r.get("status") for r in doc.get("runs", [])]
        out["batch16_warm"] = {"n": len(statuses), "wall_s": round(wall, 2),
                               "verdicts_per_min": round(60 * len(statuses) / wall, 1)
                               if wall > 0 else 0, "statuses": statuses}
        print(f"{label} one batch of 16, cache hits: {out['batch16_warm']}", flush=True)


def summary(q):
    return {k: v for k, v in q.items() if k != "device_windows"}


def measure(node, files, work, warm, budget, results, label, cold, throughput, only=None):
    out = results.setdefault(label, {})
    native_def, native_jsonl = "perf_rmsnorm_h4096", files["perf_rmsnorm_h4096"][1]
    python_def, python_jsonl = "rmsnorm_h4096", files["rmsnorm_h4096"][1]
    cases = [
        ("native", native_def, native_jsonl, variant("rmsnorm_h4096_tuned", native_def, work,
                                                     label + "_native")),
        ("python", python_def, python_jsonl, variant("rmsnorm_h4096_tuned", python_def, work,
                                                     label + "_python")),
        ("triton", python_def, python_jsonl, variant("rmsnorm_h4096_triton", python_def, work,
                                                     label + "_triton")),
        # An incorrect candidate: judged before its first trial would be timed (INCORRECT).
        ("wrong", python_def, python_jsonl, variant("rmsnorm_h4096_triton_wrong", python_def,
                                                    work, label + "_wrong")),
    ]
    for case, definition, jsonl, folder in cases:
        if only and case not in only:
            continue
        if budget.left() < 60:
            break
        first = submit(node, definition, folder, jsonl, f"{label}_{case}_first")
        runs = []
        for i in range(warm):
            if budget.left() < 40:
                break
            runs.append(submit(node, definition, folder, jsonl, f"{label}_{case}_warm{i}"))
        if runs:
            dump_worker_logs(node, [first.get("run_id"), runs[-1].get("run_id")],
                             os.path.join(node.details, f"worker_logs_{case}.txt"))
        out[case] = {"reference_source": first.get("reference_source"), "first": first,
                     "warm": runs,
                     "warm_median_s": median([r["wall_s"] for r in runs]),
                     "statuses": sorted({r["status"] for r in [first] + runs})}
        print(f"{label} {case}: first {first['wall_s']} s ({first['status']}), warm median "
              f"{out[case]['warm_median_s']} s over {len(runs)}", flush=True)
    if cold and budget.left() > 90:
        colds = []
        for i in range(3):
            folder = variant("rmsnorm_h4096_tuned", native_def, work, f"{label}_cold{i}",
                             comment=f"cold {random.random()}")
            colds.append(submit(node, native_def, folder, native_jsonl, f"{label}_cold{i}"))
        out["cold"] = {"runs": colds, "median_s": median([r["wall_s"] for r in colds]),
                       "compile_s_median": median([r["stages"]["compile_s"] for r in colds])}
        print(f"{label} cold: median {out['cold']['median_s']} s, compile stage "
              f"{out['cold']['compile_s_median']} s", flush=True)
    # New Triton sources (a compile cache miss each), a few seconds apart as an agent's
    # submissions come: the compile stage's check, started ahead of need with --python-spares
    # (the "unwarmed" node starts every check afresh).
    if cold and budget.left() > 90:
        colds = []
        for i in range(3):
            time.sleep(5)
            folder = variant("rmsnorm_h4096_triton", python_def, work, f"{label}_tcold{i}",
                             comment=f"new source {random.random()}")
            colds.append(submit(node, python_def, folder, python_jsonl, f"{label}_tcold{i}"))
        out["triton_cold"] = {"runs": colds, "median_s": median([r["wall_s"] for r in colds]),
                              "compile_s_median": median([r["stages"]["compile_s"]
                                                          for r in colds]),
                              "statuses": sorted({r["status"] for r in colds})}
        print(f"{label} new Triton source: median {out['triton_cold']['median_s']} s, compile "
              f"stage {out['triton_cold']['compile_s_median']} s", flush=True)
    if throughput and budget.left() > 150:
        measure_throughput(node, files, work, budget, out, label, batch=True)
    text = node.metrics()
    with open(os.path.join(node.details, "metrics.txt"), "w") as f:
        f.write(text)
    out["stage_means_s"] = stage_means(text)
    out["device_held_fraction_while_pending"] = gauge(text,
                                                      "kiln_device_held_fraction_while_pending")


def nvcc_seconds(work, details, threads):
    """nvcc alone on the tuned RMSNorm with kiln's flags (nvcc_toolchain.cc), best of 2.

    threads: kiln's command line (it adds --threads 2: one per target); False: the same
    command without it, as nvcc runs by default (the two targets one after the other)."""
    # The solution's sources are embedded in its solution.json (what the CLI sends).
    with open(os.path.join(GPU_DIR, "solutions", "rmsnorm_h4096_tuned", "solution.json")) as f:
        doc = json.load(f)
    src = os.path.join(work, "nvcc_alone.cu")
    with open(src, "w") as f:
        f.write(next(s["content"] for s in doc["sources"] if s["path"].endswith(".cu")))
    out = os.path.join(work, "nvcc_alone.so")
    include = os.environ.get("KILN_INCLUDE_DIR", "")
    import glob
    found = [shutil.which("nvcc")] + sorted(glob.glob("/usr/local/cuda*/bin/nvcc")) + \
        ["/usr/bin/nvcc"]
    nvcc = next((p for p in found if p and os.path.exists(p)), None)
    if nvcc is None:
        return None, "nvcc not found"
    # kiln's command line for an H200 (harness/compile/nvcc_toolchain.cc): sm_90a SASS and
    # compute_90 PTX, so nvcc compiles the source twice (in parallel with --threads 2).
    cmd = [nvcc, "-O3", "-shared", "-Xcompiler", "-fPIC", "-std=c++17", "-I" + include,
           "-isystem", os.path.join(include, "kiln", "tvm_ffi_compat"),
           "-Xptxas", "-v", "--expt-relaxed-constexpr",
           "-gencode", "arch=compute_90a,code=sm_90a",
           "-gencode", "arch=compute_90,code=compute_90", "-cudart", "shared"]
    if threads:
        cmd += ["--threads", "2"]
    cmd += [src, "-o", out]
    times = []
    for _ in range(2):
        start = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.monotonic() - start)
        if r.returncode != 0:
            return None, r.stderr[-500:]
    return round(min(times), 3), " ".join(cmd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bundle")
    parser.add_argument("out")
    parser.add_argument("dataset")
    parser.add_argument("--warm", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=420)
    parser.add_argument("--skip-baseline-node", action="store_true")
    parser.add_argument("--ab-flags", default="",
                        help="harness flags to compare with kiln's defaults: throughput only "
                        "(16 queued, cold then cache hits), on harnesses alternated A B B A ...")
    parser.add_argument("--ab-rounds", type=int, default=2)
    parser.add_argument("--cases", default="",
                        help="the warm cases to run (native,python,triton,wrong; default all)")
    parser.add_argument("--skip-cold", action="store_true",
                        help="no new CUDA or Triton sources (the cold compile cases)")
    parser.add_argument("--quick", action="store_true",
                        help="kiln's defaults only: no throughput, no --warm-references=false")
    opts = parser.parse_args()
    budget = agreement.Budget(opts.budget_s)
    out = os.path.abspath(opts.out)
    details = os.path.join(out, "details")
    work = os.path.join(out, "work")
    os.makedirs(details, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    bundle = os.path.abspath(opts.bundle)
    os.environ["KILN_INCLUDE_DIR"] = os.path.join(bundle, "include")
    files = stage(opts.dataset, work)
    results = {"date": time.strftime("%Y-%m-%d"), "node": subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip()}
    nvcc_s, nvcc_cmd = nvcc_seconds(work, details, threads=True)
    plain_s, _ = nvcc_seconds(work, details, threads=False)
    results["nvcc_alone_s"] = nvcc_s
    results["nvcc_without_threads_s"] = plain_s
    results["nvcc_command"] = nvcc_cmd
    print(f"nvcc: {nvcc_cmd}", flush=True)
    print(f"nvcc alone: {nvcc_s} s (without --threads: {plain_s} s)", flush=True)
    setups = [("kiln", [], True, not opts.quick)]
    if not opts.skip_baseline_node and not opts.quick:
        setups.append(("unwarmed", ["--warm-references=false", "--python-spares=false"], False,
                       False))
    for label, flags, cold, throughput in setups:
        node = Node(bundle, work, details, label, flags)
        node.start()
        try:
            for definition, (def_json, jsonl) in files.items():
                rc, text = node.kiln(["defs", "add", def_json, "--workloads", jsonl],
                                     f"{label}_defs_{definition}", 300)
                if rc != 0:
                    print(f"defs add {definition} failed: {text[-300:]}", flush=True)
            measure(node, files, work, opts.warm if label == "kiln" else 2, budget, results,
                    label, cold and not opts.skip_cold, throughput,
                    set(opts.cases.split(",")) if opts.cases else None)
        finally:
            node.stop()
    if opts.ab_flags:
        ab = results.setdefault("ab", [])
        for r in range(opts.ab_rounds):
            order = [("default", []), ("flags", shlex.split(opts.ab_flags))]
            for name, flags in (order if r % 2 == 0 else order[::-1]):
                if budget.left() < 70:  # a throughput pass takes about 50 s
                    break
                label = f"ab{r}_{name}"
                node = Node(bundle, work, details, label, flags)
                node.start()
                try:
                    def_json, jsonl = files["perf_rmsnorm_h4096"]
                    node.kiln(["defs", "add", def_json, "--workloads", jsonl],
                              f"{label}_defs", 300)
                    entry = {"round": r, "setup": name, "flags": flags}
                    measure_throughput(node, files, work, budget, entry, label, batch=False)
                    text = node.metrics()
                    entry["device_held_fraction_while_pending"] = gauge(
                        text, "kiln_device_held_fraction_while_pending")
                    entry["stage_means_s"] = stage_means(text)
                    ab.append(entry)
                finally:
                    node.stop()
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    failed = []
    lines = [f"## kiln time to verdict ({results['date']}, {results['node']})", "",
             f"nvcc alone (tuned RMSNorm, kiln's command: sm_90a + compute_90 PTX, --threads 2): "
             f"{nvcc_s} s; the same without --threads: {plain_s} s",
             "",
             "| setup | case | reference | first submission s | warm median s | warm runs | "
             "statuses |",
             "|---|---|---|---|---|---|---|"]
    for label, _, _, _ in setups:
        for case in ("native", "python", "triton", "wrong"):
            c = results.get(label, {}).get(case)
            if not c:
                continue
            lines.append(f"| {label} | {case} | {'/'.join(c.get('reference_source') or [])} | "
                         f"{c['first']['wall_s']} | {c['warm_median_s']} | {len(c['warm'])} | "
                         f"{', '.join(c['statuses'])} |")
            expected = EXPECTED.get(case, "PASSED")
            failed += [f"{label} {case}: {s}" for s in c["statuses"] if s != expected]
    k = results.get("kiln", {})
    if "cold" in k:
        lines += ["", f"cold compile (new source): median {k['cold']['median_s']} s, kiln "
                      f"compile stage median {k['cold']['compile_s_median']} s"]
        warm = k.get("native", {}).get("warm_median_s")
        if warm is not None and nvcc_s is not None:
            lines.append(f"cold over warm (native case): {round(k['cold']['median_s'] - warm, 3)} s "
                         f"against nvcc alone + 0.3 s = {round(nvcc_s + 0.3, 3)} s (kiln's "
                         f"command) and {round(plain_s + 0.3, 3) if plain_s else None} s "
                         f"(without --threads)")
    for label, _, _, _ in setups:
        t = results.get(label, {}).get("triton_cold")
        if t:
            lines.append(f"{label}: new Triton source (3, 5 s apart): median {t['median_s']} s, "
                         f"compile stage median {t['compile_s_median']} s, statuses "
                         f"{t['statuses']}")
            failed += [f"{label} triton_cold: {st}" for st in t["statuses"] if st != "PASSED"]
    for key in ("queued16_cold", "queued16_warm", "batch16_warm"):
        if key in k:
            q = k[key]
            lines.append(f"{key}: {q['n']} verdicts in {q['wall_s']} s = {q['verdicts_per_min']} "
                         f"per minute; median run from its first line on the device to its "
                         f"verdict {q.get('per_run_device_to_exit_s_median')} s; statuses "
                         f"{sorted(set(q['statuses']))}")
            failed += [f"{key}: {s}" for s in q["statuses"] if s != "PASSED"]
    for label, _, _, _ in setups:
        means = results.get(label, {}).get("stage_means_s")
        if means:
            lines += ["", f"{label}: mean seconds per stage (count) from /metrics: " +
                      ", ".join(f"{s} {m} ({n})" for s, (m, n) in sorted(means.items()))]
            lines.append(f"{label}: device held while runs pending: "
                         f"{results[label].get('device_held_fraction_while_pending')}")
    if results.get("ab"):
        lines += ["", f"throughput, kiln's defaults against `{opts.ab_flags}` (alternated):", "",
                  "| round | setup | 16 cold: per minute (wall s) | median run on device to "
                  "verdict s | 16 cache hits: per minute (wall s) | median s | device held "
                  "while pending |", "|---|---|---|---|---|---|---|"]
        for e in results["ab"]:
            c, w = e.get("queued16_cold", {}), e.get("queued16_warm", {})
            lines.append(f"| {e['round']} | {e['setup']} | {c.get('verdicts_per_min')} "
                         f"({c.get('wall_s')}) | {c.get('per_run_device_to_exit_s_median')} | "
                         f"{w.get('verdicts_per_min')} ({w.get('wall_s')}) | "
                         f"{w.get('per_run_device_to_exit_s_median')} | "
                         f"{e.get('device_held_fraction_while_pending')} |")
            for key in ("queued16_cold", "queued16_warm"):
                failed += [f"ab {e['setup']} {key}: {st}" for st in e.get(key, {}).get(
                    "statuses", []) if st != "PASSED"]
    # Where a warm verdict's time goes, as the client saw it: the progress lines of the last warm
    # submission of each case, stamped with the seconds since `kiln submit` started.
    for case in ("native", "python", "triton"):
        warm = k.get(case, {}).get("warm") or []
        if warm and warm[-1].get("timeline"):
            lines += ["", f"kiln {case}, last warm submission ({warm[-1]['wall_s']} s), its progress "
                          "lines:", "```"]
            lines += [f"{t:7.3f}  {text[:140]}" for t, text in warm[-1]["timeline"]]
            lines.append("```")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if failed:
        print("not PASSED: " + "; ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
