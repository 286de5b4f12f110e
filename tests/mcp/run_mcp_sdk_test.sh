#!/usr/bin/env bash
# kiln mcp against the official MCP TypeScript SDK client: installs the pinned SDK
# (package-lock.json) under WORK_DIR, starts a host-backend kiln-harness, runs
# mcp_client_test.mjs, and stops the harness.
# usage: run_mcp_sdk_test.sh BIN_DIR WORK_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$1"
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
log="$data/harness.log"
cleanup() {
  [[ -n "${harness_pid:-}" ]] && kill "$harness_pid" 2>/dev/null && wait "$harness_pid" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT
"$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$data/archive" --backend host \
  --worker-timeout-s 120 --host-flush-mb 16 >"$log" 2>&1 &
harness_pid=$!
address=""
for _ in $(seq 1 300); do
  address="$(sed -n 's/^kiln-harness listening on //p' "$log" | head -1)"
  [[ -n "$address" ]] && break
  kill -0 "$harness_pid" 2>/dev/null || { cat "$log"; echo "FAIL: kiln-harness did not start"; exit 1; }
  sleep 0.1
done
[[ -n "$address" ]] || { cat "$log"; echo "FAIL: kiln-harness did not say where it listens"; exit 1; }
echo "kiln-harness on $address; node $(node --version)"
cd "$work"
if ! timeout 900 node mcp_client_test.mjs "$bin/kiln" "$address"; then
  echo "--- harness log ---"; tail -50 "$log"
  exit 1
fi
