#!/usr/bin/env bash
# Records the Nsight Compute outputs that kiln's profile parsing is tested against: builds
# ncu_targets.cu for the node's GPU, profiles its three kernels with `ncu --set full` and
# `--set basic`, and exports the reports as CSV (raw metrics and the details page). ncu runs
# with `--clock-control none`: by default it locks the GPU's clocks to base for the profile,
# and kiln leaves a node's clocks as they are (the profile then shows the clocks the node runs). Every step is bounded; logs go
# to OUT_DIR as they are written.
#
# Usage: tests/gpu/ncu/record_fixtures.sh OUT_DIR
set -uo pipefail
out="$(mkdir -p "$1" && cd "$1" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }
ncu="$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)"
nvcc="$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)"
[[ -n $ncu && -n $nvcc ]] || { log "ncu or nvcc missing"; exit 2; }
"$ncu" --version >"$out/ncu_version.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
grep -h RmProfilingAdminOnly /proc/driver/nvidia/params >"$out/rm_params.txt" 2>&1
log "ncu: $(tail -1 "$out/ncu_version.txt"); gpu: $(cat "$out/gpu.txt"); $(cat "$out/rm_params.txt")"
work="$(mktemp -d)"
timeout 120 "$nvcc" -O3 -gencode arch=compute_90a,code=sm_90a -o "$work/ncu_targets" \
  "$here/ncu_targets.cu" >"$out/nvcc.txt" 2>&1 || { log "nvcc failed"; cat "$out/nvcc.txt"; exit 1; }
for set in full basic; do
  start=$(date +%s%N)
  timeout 240 "$ncu" --set "$set" --clock-control none --profile-from-start off -f -o "$work/targets_$set" \
    "$work/ncu_targets" >"$out/ncu_$set.txt" 2>&1
  rc=$?
  log "ncu --set $set rc=$rc in $(( ($(date +%s%N) - start) / 1000000 )) ms; report $(stat -c %s "$work/targets_$set.ncu-rep" 2>/dev/null) bytes"
  "$ncu" --import "$work/targets_$set.ncu-rep" --csv --page raw >"$out/${set}_raw.csv" 2>"$out/${set}_raw.err"
  "$ncu" --import "$work/targets_$set.ncu-rep" --csv --page details >"$out/${set}_details.csv" 2>"$out/${set}_details.err"
  "$ncu" --import "$work/targets_$set.ncu-rep" --csv --page raw --print-units base >"$out/${set}_raw_base.csv" 2>&1
done
# The same, from inside a bubblewrap sandbox as kiln runs workers (when bwrap is given).
if [[ -n "${BWRAP:-}" ]]; then
  start=$(date +%s%N)
  timeout 120 "$BWRAP" --ro-bind / / --dev-bind /dev /dev --proc /proc --tmpfs /tmp \
    --bind "$work" "$work" --unshare-user --unshare-pid --die-with-parent \
    "$ncu" --set basic --clock-control none --profile-from-start off -f -o "$work/sandboxed" "$work/ncu_targets" \
    >"$out/ncu_sandboxed.txt" 2>&1
  log "ncu inside bwrap rc=$? in $(( ($(date +%s%N) - start) / 1000000 )) ms"
fi
ls -la "$out" >>"$out/steps.log"
rm -rf "$work"
