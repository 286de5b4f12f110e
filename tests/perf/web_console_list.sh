#!/usr/bin/env bash
# The web console's run list against `kiln runs list` over a large archive, side by side in one
# run (docs/web-console.md has the figures).
#
# usage: tests/perf/web_console_list.sh BUILD_DIR [RUNS] [REPEATS]
#   RUNS (default 100000) synthetic runs (tests/perf/populate_archive.cc), REPEATS (default 7).
# Prints a Markdown table of medians (seconds, wall clock of the whole request or command):
# the newest 100 and 1000 runs, 100 runs of one definition and of one status, as
# `kiln runs list --json`, the console's HTML and its JSON; and the console's tenth page of 100.
set -euo pipefail
build="$(cd "$1" && pwd)"
runs="${2:-100000}"
repeats="${3:-7}"
bin="$build/bin"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-web-list-XXXXXX")"
pid=""
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

echo "populating $runs runs" >&2
"$bin/populate_archive" "$tmp/data" "$runs" >&2
"$bin/kiln-harness" --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 --data-dir "$tmp/data" \
  --backend host --quiet >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "web console on" "$tmp/out" && break; sleep 0.1; done
grpc="$(awk '/listening on/ {print $4}' "$tmp/out")"
web="$(awk '/web console on/ {print $5}' "$tmp/out")"
[[ -n $grpc && -n $web ]] || { cat "$tmp/out" >&2; exit 1; }

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# time_of CMD... -> seconds
time_of() { local t0 t1; t0=$(now); "$@" >/dev/null; t1=$(now); python3 -c "print($t1 - $t0)"; }
cli() { "$bin/kiln" --server "$grpc" runs list --json "$@"; }
html() { curl -sf "$web$1"; }
json() { curl -sf -H 'Accept: application/json' "$web$1"; }
# The tenth page of 100, following each page's next link (the CLI has no page token: it
# lists up to 1000 at once instead, compared below with the console's limit=1000).
tenth_web() {
  local path="/runs"
  for _ in $(seq 9); do
    path="$(html "$path" | python3 -c '
import re,sys,html
m = re.search(r"<a class=\"next\" href=\"([^\"]+)\"", sys.stdin.read())
print(html.unescape(m.group(1)))')"
  done
  html "$path"
}

cli --limit 100 >/dev/null; html /runs >/dev/null  # first touch of the database pages
declare -A t
for _ in $(seq "$repeats"); do
  t[cli_new]+=" $(time_of cli --limit 100)"
  t[html_new]+=" $(time_of html /runs)"
  t[json_new]+=" $(time_of json /runs)"
  t[cli_def]+=" $(time_of cli --limit 100 --definition rmsnorm_h4096)"
  t[html_def]+=" $(time_of html '/runs?definition=rmsnorm_h4096')"
  t[cli_status]+=" $(time_of cli --limit 100 --status INCORRECT_NUMERICAL)"
  t[html_status]+=" $(time_of html '/runs?status=INCORRECT_NUMERICAL')"
  t[cli_1000]+=" $(time_of cli --limit 1000)"
  t[html_1000]+=" $(time_of html '/runs?limit=1000')"
  t[json_1000]+=" $(time_of json '/runs?limit=1000')"
  t[html_tenth]+=" $(time_of tenth_web)"
done
m() { printf "%.3f" "$(median ${t[$1]})"; }
cat <<EOF
| $runs archived runs, median of $repeats (s) | kiln runs list --json | console HTML | console JSON |
|---|---|---|---|
| newest 100 | $(m cli_new) | $(m html_new) | $(m json_new) |
| 100 of one definition | $(m cli_def) | $(m html_def) | |
| 100 of one status | $(m cli_status) | $(m html_status) | |
| newest 1000 | $(m cli_1000) | $(m html_1000) | $(m json_1000) |
| the tenth page of 100 (10 requests, following the next links) | | $(m html_tenth) | |
EOF
