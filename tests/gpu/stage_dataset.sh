#!/usr/bin/env bash
# Copies the flashinfer-trace files the GPU suite needs (rmsnorm_h4096 and gemm_n4096_k4096:
# definition and workloads) into DEST, keeping the dataset's layout, so that DEST can travel to a
# GPU node with the repository (e.g. DEST = out/dataset, which git ignores).
#
# Usage: tests/gpu/stage_dataset.sh DEST [DATASET_DIR=../shared/datasets/flashinfer-trace beside the repository]
set -euo pipefail
dest="${1:?usage: $0 DEST [DATASET_DIR]}"
src="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared/datasets/flashinfer-trace}"
for f in definitions/rmsnorm/rmsnorm_h4096.json workloads/rmsnorm/rmsnorm_h4096.jsonl \
  definitions/gemm/gemm_n4096_k4096.json workloads/gemm/gemm_n4096_k4096.jsonl; do
  mkdir -p "$dest/$(dirname "$f")"
  cp "$src/$f" "$dest/$f"
done
echo "staged 4 files under $dest"
