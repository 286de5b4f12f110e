#!/usr/bin/env python3
"""Reads what the kiln CLI prints with --json, for the GPU test and benchmark scripts.

  kiln_results.py status SUBMIT.json          run-level verdict, else the worst trace status,
                                              else NO_JSON / NO_STATUS
  kiln_results.py field FILE.json KEY          a top-level field ("" when absent)
  kiln_results.py match REGEX FILE...          exit 0 iff REGEX (case-insensitive) occurs in
                                              the text of any FILE (missing files are skipped)
  kiln_results.py traces SUBMIT.json LABEL     TSV per trace: label, axes, status, latency_ms,
                                              reference_latency_ms, speedup_factor
  kiln_results.py mean-latency SUBMIT.json     mean latency_ms of the PASSED traces, or "nan"
  kiln_results.py has-native DEFS.json NAME    "yes" / "no" / "absent" from `kiln defs list --json`
  kiln_results.py merge-native DEF NATIVE OUT  writes DEF with NATIVE as its native_reference
  kiln_results.py head-jsonl IN OUT COUNT      the first COUNT non-empty lines of IN
  kiln_results.py table CHECKS.tsv             prints "check | expected | got | ok"; exit 1 if
                                              any row is neither ok nor skip (or there are none)
"""
import json
import math
import re
import sys

STATUS_ORDER = ["PASSED", "INCORRECT_SHAPE", "INCORRECT_DTYPE", "INCORRECT_NUMERICAL",
                "REJECTED", "COMPILE_ERROR", "RUNTIME_ERROR", "TIMEOUT", "CANCELLED",
                "INTERRUPTED"]


def load(path):
    """The JSON document in `path`, or None. Tolerates text before the first '{'."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    for start in [0, text.find("{")]:
        if start < 0:
            continue
        try:
            return json.loads(text[start:])
        except ValueError:
            continue
    return None


def traces(doc):
    out = doc.get("traces") if isinstance(doc, dict) else None
    return out if isinstance(out, list) else []


def evaluation(trace):
    e = trace.get("evaluation") if isinstance(trace, dict) else None
    return e if isinstance(e, dict) else {}


def status(path):
    doc = load(path)
    if doc is None:
        return "NO_JSON"
    if isinstance(doc.get("status"), str) and doc["status"]:
        return doc["status"]
    seen = [evaluation(t).get("status") for t in traces(doc)]
    seen = [s for s in seen if isinstance(s, str)]
    if not seen:
        return "NO_STATUS"
    return max(seen, key=lambda s: STATUS_ORDER.index(s) if s in STATUS_ORDER else 99)


def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def trace_rows(path, label):
    rows = []
    for t in traces(load(path) or {}):
        e = evaluation(t)
        perf = e.get("performance") if isinstance(e.get("performance"), dict) else {}
        axes = (t.get("workload") or {}).get("axes", {})
        axes_text = ",".join(f"{k}={v}" for k, v in sorted(axes.items()))
        rows.append([label, axes_text, str(e.get("status", "?")),
                     "%.6g" % number(perf.get("latency_ms")),
                     "%.6g" % number(perf.get("reference_latency_ms")),
                     "%.4g" % number(perf.get("speedup_factor"))])
    return rows


def mean_latency(path):
    values = []
    for t in traces(load(path) or {}):
        e = evaluation(t)
        if e.get("status") == "PASSED":
            values.append(number((e.get("performance") or {}).get("latency_ms")))
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else float("nan")


def has_native(path, name):
    doc = load(path) or {}
    for d in doc.get("definitions", []) if isinstance(doc, dict) else []:
        if isinstance(d, dict) and d.get("name") == name:
            return "yes" if d.get("has_native_reference") else "no"
    return "absent"


def table(path):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError:
        pass
    rows = [(r + ["", "", "", ""])[:4] for r in rows]
    header = ["check", "expected", "got", "ok"]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-|-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(x.ljust(w) for x, w in zip(r, widths)))
    failed = [r for r in rows if r[3] not in ("ok", "skip")]
    skipped = [r for r in rows if r[3] == "skip"]
    print(f"\n{len(rows) - len(failed) - len(skipped)} of {len(rows)} checks ok" +
          (f", {len(skipped)} skipped" if skipped else "") +
          (f"; FAILED: {', '.join(r[0] for r in failed)}" if failed else ""))
    return 1 if failed or not rows else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "status" and len(args) == 1:
        print(status(args[0]))
    elif cmd == "field" and len(args) == 2:
        doc = load(args[0])
        value = doc.get(args[1], "") if isinstance(doc, dict) else ""
        print(value if isinstance(value, str) else json.dumps(value))
    elif cmd == "match" and len(args) >= 2:
        pattern = re.compile(args[0], re.I)
        for path in args[1:]:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    if pattern.search(f.read()):
                        return 0
            except OSError:
                continue
        return 1
    elif cmd == "traces" and len(args) == 2:
        for row in trace_rows(args[0], args[1]):
            print("\t".join(row))
    elif cmd == "mean-latency" and len(args) == 1:
        print("%.6g" % mean_latency(args[0]))
    elif cmd == "has-native" and len(args) == 2:
        print(has_native(args[0], args[1]))
    elif cmd == "merge-native" and len(args) == 3:
        definition, native = load(args[0]), load(args[1])
        if not isinstance(definition, dict) or not isinstance(native, dict):
            print("merge-native: unreadable input", file=sys.stderr)
            return 1
        definition["native_reference"] = native
        with open(args[2], "w", encoding="utf-8") as f:
            json.dump(definition, f, indent=2)
    elif cmd == "head-jsonl" and len(args) == 3:
        with open(args[0], encoding="utf-8") as f:
            lines = [line for line in f if line.strip()][: int(args[2])]
        with open(args[1], "w", encoding="utf-8") as f:
            f.writelines(line if line.endswith("\n") else line + "\n" for line in lines)
        print(len(lines))
    elif cmd == "table" and len(args) == 1:
        return table(args[0])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
