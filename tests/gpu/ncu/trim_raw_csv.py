#!/usr/bin/env python3
"""Cuts an `ncu --csv --page raw --print-units base` export down to the columns kiln's profile
parser reads (harness/profile/ncu_profile.cc), so that the fixtures under
tests/unit/profile/fixtures stay small. Rows, values and units are kept as ncu wrote them.

  python3 tests/gpu/ncu/trim_raw_csv.py IN.csv OUT.csv
"""
import csv
import re
import sys

KEEP = re.compile(r"^(ID|Kernel Name|Block Size|Grid Size|Device|CC|"
                  r"gpu__time_duration\.sum|sm__throughput\.avg\.pct_of_peak_sustained_elapsed|"
                  r"gpu__compute_memory_throughput\.avg\.pct_of_peak_sustained_elapsed|"
                  r"gpu__dram_throughput\.avg\.pct_of_peak_sustained_elapsed|"
                  r"l1tex__t_sector_hit_rate\.pct|lts__t_sector_hit_rate\.pct|"
                  r"sm__warps_active\.avg\.pct_of_peak_sustained_active|"
                  r"sm__maximum_warps_per_active_cycle_pct|launch__.*|"
                  r"dram__bytes_(read|write)\.sum|dram__bytes\.sum\.peak_sustained|"
                  r"(sm|dram)__cycles_elapsed\.avg\.per_second|"
                  r"smsp__sass_thread_inst_executed_op_[a-z]+_pred_on\.sum\.per_cycle_elapsed|"
                  r"sm__sass_thread_inst_executed_op_[a-z]+_pred_on\.sum\.peak_sustained|"
                  r"smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active\.ratio|"
                  r"device__attribute_(display_name|multiprocessor_count))$")


def main():
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, name in enumerate(rows[0]) if KEEP.match(name)]
    with open(sys.argv[2], "w", newline="") as f:
        writer = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for row in rows:
            writer.writerow([row[i] for i in keep])


if __name__ == "__main__":
    main()
