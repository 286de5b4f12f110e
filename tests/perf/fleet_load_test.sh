#!/usr/bin/env bash
# Fleet load test: CLIENTS concurrent clients x RUNS submissions each (default 8 x 25) sent to one
# kiln-controller's front door (kiln.v1.Harness) in front of HARNESSES kiln-harness processes on
# loopback (default 3; host backend, the C++ vector_add_f32 solution of load_client, one
# workload). Checks that every submission is answered with a PASSED run, that the fleet's merged
# listing holds exactly CLIENTS x RUNS finished runs, that every process survives, and says how
# the runs spread over the harnesses. Prints a markdown report; exits non-zero on any lost run or
# crash.
#
#   tests/perf/fleet_load_test.sh [BUILD_DIR] [CLIENTS] [RUNS] [HARNESSES]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
clients="${2:-8}"
runs="${3:-25}"
harnesses="${4:-3}"
bin="$build/bin"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-fleet-load-XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Waits for "PROGRAM listening on HOST:PORT" in FILE and prints HOST:PORT.
listening() {
  for _ in $(seq 600); do
    if grep -q "listening on" "$1"; then
      grep -m1 -o 'listening on [0-9.:]*' "$1" | awk '{print $3}'
      return 0
    fi
    sleep 0.1
  done
  echo "no 'listening on' in $1:" >&2
  cat "$1" >&2
  return 1
}

addresses=()
for i in $(seq "$harnesses"); do
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/h$i" --backend host \
    --mode kernelbench --max-queue 64 >"$tmp/h$i.out" 2>"$tmp/h$i.err" &
  pids+=($!)
  addresses+=("$(listening "$tmp/h$i.out")")
  # A harness's first GetNodeInfo probes its toolchains; done before the controller probes it.
  "$bin/kiln" --server "${addresses[-1]}" node >/dev/null
done
fleet="$(IFS=,; echo "${addresses[*]}")"
"$bin/kiln-controller" --listen 127.0.0.1:0 --data-dir "$tmp/controller" --harness "$fleet" \
  >"$tmp/controller.out" 2>"$tmp/controller.err" &
pids+=($!)
controller="$(listening "$tmp/controller.out")"

start=$(date +%s.%N)
set +e
"$bin/load_client" --server "$controller" --clients "$clients" --runs "$runs" >"$tmp/client.txt"
client_rc=$?
set -e
wall="$(echo "$(date +%s.%N) - $start" | bc)"
alive=0
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done

archived="$("$bin/kiln" --server "$controller" runs list --json --limit 1000 |
  python3 -c 'import json,sys; r=json.load(sys.stdin).get("runs",[]); print(len(r), sum(x["state"]=="RUN_DONE" for x in r))')"
spread=""
for a in "${addresses[@]}"; do
  n="$("$bin/kiln" --server "$a" runs list --json --limit 1000 |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("runs",[])))')"
  spread+="$a: $n; "
done

cat <<REPORT
## kiln-controller front door load test

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- machine: $(nproc) CPU cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))
- command: tests/perf/fleet_load_test.sh BUILD_DIR $clients $runs $harnesses
- load: $clients concurrent clients x $runs submissions through one kiln-controller in front of
  $harnesses kiln-harness processes, host backend, kernelbench mode, vector_add_f32 (n = 4096)

| measure | value |
|---|---|
| client | $(head -1 "$tmp/client.txt") |
| wall time | ${wall} s |
| the fleet's listing (total, DONE) | $archived |
| runs per harness | ${spread% } |
| processes alive after the load | $alive of $((harnesses + 1)) |
REPORT

expected="$((clients * runs)) $((clients * runs))"
if [[ $client_rc -ne 0 || $alive -ne $((harnesses + 1)) || "$archived" != "$expected" ]]; then
  echo "FLEET LOAD TEST FAILED (client rc $client_rc, alive $alive, listed '$archived', expected '$expected')"
  tail -20 "$tmp/controller.err"
  exit 1
fi
echo "fleet load test passed"
