#!/usr/bin/env bash
# Builds kiln's libFuzzer targets with clang (AddressSanitizer, every library instrumented) in
# BUILD_DIR and runs each for SECONDS (default 20) from a small seed corpus. Exits non-zero when
# a target crashes, leaks or trips a sanitizer; the reproducer is left in BUILD_DIR/artifacts.
#
#   tests/fuzz/run_fuzz.sh BUILD_DIR [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:?usage: run_fuzz.sh BUILD_DIR [SECONDS]}"
seconds="${2:-20}"
jobs="${KILN_BUILD_JOBS:-2}"

if ! command -v clang++ >/dev/null; then
  echo "SKIP: clang++ not found (apt-get install clang)"
  exit 77
fi
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz_json fuzz_proto

# Seeds: the built-in documents, each behind the byte that selects its parser.
corpus="$build/corpus"
mkdir -p "$corpus/json" "$corpus/proto" "$build/artifacts"
defs="$root/harness/definitions"
seed() { { printf "\\x$(printf %02x "$2")"; cat "$3"; } >"$corpus/json/$1"; }
seed def 0 "$defs/vector_add_f32.json"
seed workload 1 <(head -n1 "$defs/vector_add_f32.jsonl" | sed 's/.*"workload": \(.*\), "evaluation".*/\1/')
seed jsonl 2 "$defs/rmsnorm_h2048.jsonl"
seed solution 3 "$defs/rmsnorm_h2048.solution.json"
printf '\x00\x04\x00\x00\x00\x0a\x02ab' >"$corpus/proto/frame"
printf '\x01\x0a\x08fuzz_add' >"$corpus/proto/request"

status=0
for target in fuzz_json fuzz_proto; do
  dir="$corpus/${target#fuzz_}"
  echo "== $target: ${seconds} s"
  "$build/bin/$target" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" \
    "$dir" || status=$?
done
exit "$status"
