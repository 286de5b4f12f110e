# Shared by tests/perf/multi_gpu_*.sh (sourced after gpu_common.sh): harnesses pinned to GPUs
# with --gpus, and where each run landed (the run record's device_index). Every harness started
# here is stopped by gpu_common.sh's cleanup (its pid is in `pids`).

# CUDA numbers GPUs as nvidia-smi does (by PCI bus id), so that "GPU 1" of --gpus is GPU 1 of
# the nvidia-smi samples.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

notes="$tmp/notes.txt"
: >"$notes"
note() { echo "- $*" >>"$notes"; log "$*"; }

# The summary both scripts write (their report_body): TITLE, the GPUs, the analysis, the notes.
multi_gpu_report() {  # TITLE
  {
    echo "$1"
    echo
    timeout 20 nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader \
      2>/dev/null
    echo
    if [[ -s "$tmp/analysis.txt" ]]; then cat "$tmp/analysis.txt"; else echo "(no analysis)"; fi
    if [[ -s "$notes" ]]; then
      echo
      echo "COULD NOT MEASURE (or a check failed):"
      cat "$notes"
    fi
  } | tee "$out/summary.txt"
}

# Starts `kiln-harness --backend cuda --gpus GPUS` on its own data dir and port. Sets
# h_addr[NAME] and h_pid[NAME]; 1 (with a note naming the log's last line) if it did not start.
declare -A h_addr h_pid
start_gpu_harness() {  # NAME GPUS [EXTRA FLAGS...]
  local name=$1 gpus=$2
  shift 2
  local hlog="$details/harness_$name.log"
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/data_$name" --backend cuda \
    --gpus "$gpus" --worker-timeout-s 300 "$@" >"$hlog" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do
    if grep -q "listening on" "$hlog"; then
      h_addr[$name]=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$hlog" | head -1)
      h_pid[$name]=$pid
      log "kiln-harness $name (--gpus $gpus) on ${h_addr[$name]}"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  note "kiln-harness $name (--gpus $gpus) did not start: $(grep -v '^\s*$' "$hlog" | tail -1)"
  return 1
}

stop_gpu_harness() {  # NAME
  [[ -n "${h_pid[$1]:-}" ]] && stop_pid "${h_pid[$1]}"
  h_pid[$1]=""
}

# The CUDA indices the harness NAME serves, from `kiln node --json` ("0 1"), or "" if unknown.
served_gpus() {  # NAME
  timeout 30 "$kiln" --server "${h_addr[$1]}" node --json 2>/dev/null | python3 -c '
import json, sys
try:
    node = json.load(sys.stdin)
except ValueError:
    sys.exit()
print(" ".join(str(d.get("index", 0)) for d in node.get("devices", []) if d.get("backend") == "cuda"))'
}

# Checks that harness NAME serves exactly the GPUs WANT ("0 1"); notes it otherwise.
check_served() {  # NAME WANT
  local got
  got=$(served_gpus "$1")
  if [[ "$got" != "$2" ]]; then
    note "harness $1 serves GPU(s) '$got', expected '$2' (kiln node --json)"
    return 1
  fi
  return 0
}

# The device_index (and PCI bus id) the run record of SUBMIT.json names: "1 0000:19:00.0", or
# "? " when the run or the field is missing.
run_device() {  # ADDR SUBMIT.json OUT.run.json
  local run_id
  run_id=$($results field "$2" run_id)
  if [[ -z "$run_id" ]]; then
    echo "? -"
    return
  fi
  timeout 30 "$kiln" --server "$1" runs show "$run_id" --json >"$3" 2>/dev/null
  python3 - "$3" <<'PY'
import json, sys
try:
    run = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("? -"); sys.exit()
# Protobuf JSON leaves out zero values: device_index 0 is absent when device_name is set.
if not run.get("device_name"):
    print("? -"); sys.exit()
print(run.get("device_index", 0), run.get("device_pci_bus_id") or "-")
PY
}
