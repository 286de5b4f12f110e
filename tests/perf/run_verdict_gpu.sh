#!/usr/bin/env bash
# The GPU measurements of time to verdict, in one bounded run (every step under `timeout`, logs
# written to OUT_DIR as it goes). STEPS (comma-separated, default verdict,adversarial):
#   units        unit_cuda_gpu (the GPU unit tests: worker, timing, the device input generator)
#   verdict      tests/perf/gpu_verdict_time.py (kiln as it runs by default next to
#                --warm-references=false --python-spares=false; with KILN_VERDICT_ARGS=
#                --skip-baseline-node kiln's defaults alone, throughput included;
#                KILN_VERDICT_BUDGET seconds, default 420)
#   quick        the same, kiln's defaults only, 3 warm submissions per case, no throughput
#                (KILN_QUICK_BUDGET, default 280; the agreement and python steps likewise take
#                KILN_AGREEMENT_BUDGET, default 240, and KILN_PYTHON_BUDGET, default 310)
#   compare      quick with the bundle KILN_BASELINE_TAR (an earlier build, as kiln/ in a .tar.xz)
#                first, then quick with BUNDLE_TAR_XZ: before and after, side by side in one run
#   adversarial  unit_adversarial_cuda (every CUDA and Python adversary on GPU 0)
#   agreement    tests/perf/gpu_timing_agreement.py (kiln's latency against a CUPTI span)
#   python       tests/gpu/python_solutions.py (Python/Triton verdicts and their timing)
#   profile      tests/gpu/profile_gpu.sh (Nsight Compute profiles through kiln, and a campaign
#                round whose TASK.md carries one)
#   bigkb        tests/perf/gpu_kernelbench_floor.py over the 6 GiB problems level1/25_Swish and
#                level1/19_ReLU in official mode (three trials: the run's output files must fit
#                the node's RAM-backed folder), with the worker logs; KILN_KERNELBENCH_DIR the
#                KernelBench folder, KILN_BIGKB_BUDGET seconds (default 240)
#   short        tests/perf/gpu_short_kernels.py: kiln's latency of the 2 us RMSNorms (CUDA and
#                Triton) over several submissions, next to their direct CUPTI spans measured as
#                many times (KILN_SHORT_BUDGET seconds, default 150)
#   write        tests/perf/gpu_output_write.py: what writing one output from the GPU into a
#                file of the RAM-backed folder costs, by method (118 MiB and 1 GiB)
#
# Usage: tests/perf/run_verdict_gpu.sh BUNDLE_TAR_XZ DATASET_DIR OUT_DIR [STEPS]
# BUNDLE_TAR_XZ: a bundle made with `deploy/bundle --with-tests` (the adversarial step runs its
# unit_adversarial_cuda) as kiln/ in a .tar.xz.
set -uo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
dataset="$(cd "$2" && pwd)"
mkdir -p "$3"; out="$(cd "$3" && pwd)"
steps=",${4:-verdict,adversarial},"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-verdict-gpu-XXXXXX")"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }

log "unpacking the bundle"
tar -C "$work" -xJf "$tarball" || exit 2
bundle="$work/kiln"
export KILN_INCLUDE_DIR="$bundle/include" PATH="$bundle/bin:$PATH"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$out/node.txt" 2>&1
log "node: $(tr '\n' ' ' <"$out/node.txt")"
if [[ $steps == *,units,* ]]; then
  log "unit_cuda_gpu"
  timeout 200 "$bundle/bin/unit_cuda_gpu" --durations yes >"$out/unit_cuda_gpu.txt" 2>&1
  log "unit_cuda_gpu rc=$? $(tail -2 "$out/unit_cuda_gpu.txt" | tr '\n' ' ')"
fi
if [[ $steps == *,compare,* && -n "${KILN_BASELINE_TAR:-}" ]]; then
  mkdir -p "$work/base"
  tar -C "$work/base" -xJf "$KILN_BASELINE_TAR" || exit 2
  for which in base new; do
    b="$bundle"
    [[ $which == base ]] && b="$work/base/kiln"
    log "gpu_verdict_time.py --quick ($which)"
    KILN_INCLUDE_DIR="$b/include" timeout $((${KILN_COMPARE_BUDGET:-260} + 20)) python3 "$here/gpu_verdict_time.py" "$b" \
      "$out/compare_$which" "$dataset" --budget-s "${KILN_COMPARE_BUDGET:-260}" --quick --warm 3 \
      >"$out/compare_$which.txt" 2>&1
    log "gpu_verdict_time.py ($which) rc=$?"
    tar -C "$out/compare_$which" -czf "$out/compare_${which}_details.tar.gz" details 2>/dev/null
    rm -rf "$out/compare_$which/details" "$out/compare_$which/work"
  done
fi
if [[ $steps == *,verdict,* ]]; then
  log "gpu_verdict_time.py ${KILN_VERDICT_ARGS:-}"
  # shellcheck disable=SC2086
  timeout $((${KILN_VERDICT_BUDGET:-420} + 20)) python3 "$here/gpu_verdict_time.py" "$bundle" \
    "$out/verdict" "$dataset" --budget-s "${KILN_VERDICT_BUDGET:-420}" ${KILN_VERDICT_ARGS:-} \
    >"$out/verdict.txt" 2>&1
  log "gpu_verdict_time.py rc=$?"
  tar -C "$out/verdict" -czf "$out/verdict_details.tar.gz" details 2>/dev/null
  rm -rf "$out/verdict/details" "$out/verdict/work"
fi
if [[ $steps == *,quick,* ]]; then
  log "gpu_verdict_time.py --quick"
  timeout $((${KILN_QUICK_BUDGET:-280} + 20)) python3 "$here/gpu_verdict_time.py" "$bundle" \
    "$out/verdict" "$dataset" --budget-s "${KILN_QUICK_BUDGET:-280}" --quick --warm 3 \
    >"$out/verdict.txt" 2>&1
  log "gpu_verdict_time.py rc=$?"
  tar -C "$out/verdict" -czf "$out/verdict_details.tar.gz" details 2>/dev/null
  rm -rf "$out/verdict/details" "$out/verdict/work"
fi
if [[ $steps == *,adversarial,* ]]; then
  log "unit_adversarial_cuda"
  timeout 150 "$bundle/bin/unit_adversarial_cuda" --durations yes >"$out/adversarial.txt" 2>&1
  log "unit_adversarial_cuda rc=$? $(tail -2 "$out/adversarial.txt" | tr '\n' ' ')"
fi
if [[ $steps == *,agreement,* ]]; then
  log "gpu_timing_agreement.py"
  timeout $((${KILN_AGREEMENT_BUDGET:-240} + 20)) python3 "$here/gpu_timing_agreement.py" "$bundle" \
    "$out/agreement" --budget-s "${KILN_AGREEMENT_BUDGET:-240}" \
    >"$out/agreement.txt" 2>&1
  log "gpu_timing_agreement.py rc=$?"
fi
if [[ $steps == *,python,* ]]; then
  log "python_solutions.py"
  timeout $((${KILN_PYTHON_BUDGET:-310} + 20)) python3 "$here/../gpu/python_solutions.py" \
    "$bundle" "$out/python" "$dataset" --budget-s "${KILN_PYTHON_BUDGET:-310}" \
    >"$out/python_solutions.txt" 2>&1
  log "python_solutions.py rc=$? $(tail -1 "$out/python_solutions.txt")"
  rm -rf "$out/python/details" "$out/python/work"
fi
if [[ $steps == *,profile,* ]]; then
  log "profile_gpu.sh"
  timeout 560 bash "$here/../gpu/profile_gpu.sh" "$bundle" "$out" >"$out/profile_gpu.txt" 2>&1
  log "profile_gpu.sh rc=$? $(tail -1 "$out/profile_gpu.txt")"
fi
if [[ $steps == *,bigkb,* && -n "${KILN_KERNELBENCH_DIR:-}" ]]; then
  log "gpu_kernelbench_floor.py: 6 GiB problems, official mode"
  timeout $((${KILN_BIGKB_BUDGET:-240} + 30)) python3 "$here/gpu_kernelbench_floor.py" "$bundle" \
    "$KILN_KERNELBENCH_DIR" "$out/bigkb" --modes official --worker-logs \
    --only kernelbench_l1_25_Swish,kernelbench_l1_19_ReLU --budget-s "${KILN_BIGKB_BUDGET:-240}" \
    >"$out/bigkb.txt" 2>&1
  log "gpu_kernelbench_floor.py rc=$? $(tail -1 "$out/bigkb.txt")"
fi
if [[ $steps == *,short,* ]]; then
  log "gpu_short_kernels.py"
  timeout $((${KILN_SHORT_BUDGET:-150} + 60)) python3 "$here/gpu_short_kernels.py" "$bundle" \
    "$out/short" "$dataset" --budget-s "${KILN_SHORT_BUDGET:-150}" >"$out/short.txt" 2>&1
  log "gpu_short_kernels.py rc=$?"
  tar -C "$out/short" -czf "$out/short_details.tar.gz" details 2>/dev/null
  rm -rf "$out/short/details" "$out/short/work"
fi
if [[ $steps == *,write,* ]]; then
  log "gpu_output_write.py"
  timeout 120 python3 "$here/gpu_output_write.py" "$out/write" --sizes 118,1024 --repeat 3 \
    >"$out/write.txt" 2>&1
  log "gpu_output_write.py rc=$?"
fi
rm -rf "$work"
log "done"
