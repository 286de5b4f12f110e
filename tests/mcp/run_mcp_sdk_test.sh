#!/usr/bin/env bash
# kiln mcp against the official MCP TypeScript SDK client: installs the pinned SDK
# (package-lock.json) under WORK_DIR, starts a host-backend kiln-harness, runs
# mcp_client_test.mjs against it, then again with `kiln mcp --server CONTROLLER` through a
# kiln-controller in front of the same harness (the fleet's front door), and stops both.
# usage: run_mcp_sdk_test.sh BIN_DIR WORK_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$(cd "$1" && pwd)"
work="$2"
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "FAIL: no $tool on PATH (deploy/setup.sh installs it)"; exit 1; }
done
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/mcp_client_test.mjs" "$work/"
if ! cmp -s "$here/package-lock.json" "$work/node_modules/.kiln-lock" 2>/dev/null; then
  echo "installing @modelcontextprotocol/sdk (npm ci)"
  (cd "$work" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$work/node_modules/.kiln-lock"
fi

data="$(mktemp -d)"
cleanup() {
  for pid in ${controller_pid:-} ${harness_pid:-}; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  rm -rf "$data"
}
trap cleanup EXIT

# Waits until PROGRAM (pid PID) writes "PROGRAM listening on ADDRESS" to LOG; prints ADDRESS.
wait_listening() {
  local program="$1" pid="$2" log="$3" address=""
  for _ in $(seq 1 300); do
    address="$(sed -n "s/^$program listening on //p" "$log" | head -1)"
    [[ -n "$address" ]] && { echo "$address"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$log" >&2
  echo "FAIL: $program did not say where it listens" >&2
  return 1
}

"$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$data/archive" --backend host \
  --worker-timeout-s 120 --host-flush-mb 16 >"$data/harness.log" 2>&1 &
harness_pid=$!
harness="$(wait_listening kiln-harness "$harness_pid" "$data/harness.log")"
echo "kiln-harness on $harness; node $(node --version)"
cd "$work"

echo "== kiln mcp --server HARNESS"
if ! timeout 900 node mcp_client_test.mjs "$bin/kiln" "$harness"; then
  echo "--- harness log ---"; tail -50 "$data/harness.log"
  exit 1
fi

"$bin/kiln-controller" --listen 127.0.0.1:0 --data-dir "$data/controller" --harness "$harness" \
  >"$data/controller.log" 2>&1 &
controller_pid=$!
controller="$(wait_listening kiln-controller "$controller_pid" "$data/controller.log")"
echo "== kiln mcp --server CONTROLLER (kiln-controller on $controller in front of the harness)"
if ! timeout 900 node mcp_client_test.mjs "$bin/kiln" "$controller"; then
  echo "--- controller log ---"; tail -50 "$data/controller.log"
  echo "--- harness log ---"; tail -50 "$data/harness.log"
  exit 1
fi
