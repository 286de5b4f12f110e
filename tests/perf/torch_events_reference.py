#!/usr/bin/env python3
"""flashinfer-bench's timing protocol, implemented with torch's own CUDA events, for a
definition's Python reference: the independent number kiln's reference latency is compared with.

  torch_events_reference.py DEFINITION.json WORKLOADS.jsonl [--limit N] [--json OUT]

Per workload: 3 trials, each with fresh inputs (randn for floats, as flashinfer-bench generates
them); per trial 10 warmup calls, then 50 timed calls; before every call a buffer of 2 x L2 is
zero-filled and the device synchronized; each call is bracketed by CUDA events on the current
stream; the trial's statistic is the median; the workload's latency the mean of the 3 medians.
This is flashinfer-bench's protocol with the CUDA-event timer it falls back to without CUPTI
(events include launch gaps between kernels that a CUPTI kernel span also includes, but not the
host time before the first kernel starts).
"""
import argparse
import json
import statistics
import sys


def make_inputs(torch, definition, axes):
    inputs = []
    consts = {k: v["value"] for k, v in definition["axes"].items() if v["type"] == "const"}
    dims = dict(consts, **axes)
    for name, spec in definition["inputs"].items():
        shape = [dims[a] for a in (spec["shape"] or [])]
        dtype = getattr(torch, spec["dtype"])
        if dtype.is_floating_point:
            t = torch.randn(shape, dtype=torch.float32, device="cuda").to(dtype)
        elif dtype == torch.bool:
            t = torch.randint(0, 2, shape, device="cuda").to(torch.bool)
        else:
            t = torch.randint(-1024, 1024, shape, device="cuda").to(dtype)
        inputs.append(t)
    return inputs


def time_reference(torch, fn, definition, axes, trials=3, warmup=10, iterations=50):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    medians = []
    for _ in range(trials):
        inputs = make_inputs(torch, definition, axes)
        with torch.no_grad():
            for _ in range(warmup):
                flush.zero_()
                torch.cuda.synchronize()
                fn(*inputs)
            samples = []
            for _ in range(iterations):
                flush.zero_()
                torch.cuda.synchronize()
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*inputs)
                end.record()
                torch.cuda.synchronize()
                samples.append(start.elapsed_time(end))
        medians.append(statistics.median(samples))
    return sum(medians) / len(medians), medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("definition")
    parser.add_argument("workloads")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json")
    opts = parser.parse_args()
    import torch
    definition = json.load(open(opts.definition))
    namespace = {"__name__": "reference"}
    exec(compile(definition["reference"], "<reference>", "exec"), namespace)
    fn = namespace["run"]
    rows = []
    with open(opts.workloads) as f:
        for line in f:
            if not line.strip():
                continue
            w = json.loads(line)["workload"]
            latency, medians = time_reference(torch, fn, definition, w["axes"])
            rows.append({"uuid": w["uuid"], "axes": w["axes"], "latency_ms": latency,
                         "trial_medians_ms": medians})
            print(f"{definition['name']} {w['axes']}: {latency:.6f} ms "
                  f"(trials {', '.join(f'{m:.6f}' for m in medians)})", flush=True)
            if opts.limit and len(rows) >= opts.limit:
                break
    if opts.json:
        json.dump({"definition": definition["name"], "torch": torch.__version__,
                   "device": torch.cuda.get_device_name(0), "workloads": rows},
                  open(opts.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
