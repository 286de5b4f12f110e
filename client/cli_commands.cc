// The table of kiln's commands: each one's synopsis, summary, flags and positional arguments,
// from which cli.cc parses arguments and prints usage.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli.h"
#include "harness/model/speedup_interval.h"

namespace kiln::cli {

namespace {

FlagSpec JsonFlag(const std::string& what) {
  return {"json", "", absl::StrCat("print ", what, " as JSON")};
}

// --noise-floor of kiln report and kiln leaderboard (harness/model/speedup_interval.h).
FlagSpec NoiseFloorFlag() {
  return {"noise-floor", "F",
          absl::StrFormat("a speedup whose 95%% interval widened by F (a fraction) holds 1x is "
                          "shown as a tie, not a win or a loss (default %g, measured; "
                          "docs/report.md)",
                          kDefaultNoiseFloor)};
}

// Campaign commands talk to kiln-controller, not to a harness.
FlagSpec ControllerFlag() {
  return {"controller", "HOST:PORT",
          "kiln-controller (default $KILN_CONTROLLER, else 127.0.0.1:50061)"};
}

std::vector<CommandSpec> BuildCommands() {
  return {
      {"submit",
       "--definition FILE|NAME --solution FILE|DIR [--solution ...] [flags]",
       "evaluate a solution (several: one batch on the same inputs); exit 0 iff every workload "
       "PASSED",
       {{"definition", "FILE|NAME",
         "a definition JSON file (registered first) or the name of a registered one", true},
        {"solution", "FILE|DIR",
         "a solution JSON file, a folder holding solution.json, or a KernelBench ModelNew .py "
         "file (for a definition imported with defs import --format kernelbench); repeatable: "
         "several are one "
         "batch (each its own run and verdict, all on one set of inputs and one reference "
         "computation)",
         true, true},
        {"workloads", "FILE.jsonl", "workloads to evaluate (default: the registered ones)"},
        {"mode", "M", "timing mode: official | kernelbench | robust (default: the node's)"},
        {"backend", "B", "host | cuda | level_zero (default: the node's)"},
        {"baseline", "B",
         "also time torch_eager or torch_compile (the definition's Python reference under "
         "torch), or solution:NAME (a registered solution), and report the speedup over it; "
         "repeatable",
         false, true},
        JsonFlag("{\"run_id\",\"status\",\"traces\"}; a batch: {\"batch_id\",\"runs\"}"),
        {"timeout-s", "S", "give up after S seconds (default 3600)"}},
       {}},
      {"profile",
       "--definition NAME --solution FILE|DIR [flags]",
       "profile one call of a solution under Nsight Compute on one workload (after it passes "
       "there): per kernel its time, SM and DRAM throughput, occupancy and its limiter, "
       "registers, shared memory, cache hit rates, warp stalls, a roofline point and the one "
       "direction they point to; the report (.ncu-rep) is archived with the run; exit 0 iff "
       "the solution passed and was profiled",
       {{"definition", "NAME", "a registered definition", true},
        {"solution", "FILE|DIR", "a solution JSON file, or a folder holding solution.json", true},
        {"workload", "UUID", "the registered workload to profile on (default: the first)"},
        {"section", "S",
         "what ncu collects: basic (default) | memory (+ cache hit rates, DRAM bytes) | compute "
         "(+ warp stalls, FLOP/s) | full"},
        {"reference", "", "also profile the definition's reference, side by side"},
        {"baseline", "B",
         "also profile torch_eager, torch_compile or solution:NAME, side by side; repeatable",
         false, true},
        {"backend", "B", "the backend (default: the node's; profiles need cuda)"},
        JsonFlag("{\"run_id\",\"status\",\"traces\",\"profile\"}"),
        {"timeout-s", "S", "give up after S seconds (default 1800)"}},
       {}},
      {"runs list",
       "[flags]",
       "list archived runs, newest first",
       {{"definition", "NAME", "only runs of this definition"},
        {"status", "S", "only runs with this status (PASSED, COMPILE_ERROR, ...)"},
        {"limit", "N", "at most N runs (default 50)"},
        {"all", "", "also the harness's own reference-check runs of new definitions"},
        {"kind", "K", "only runs of this kind: evaluation | profile"},
        JsonFlag("the runs")},
       {}},
      {"runs show",
       "RUN_ID [--json]",
       "show one run: status, stage times, traces, compiler log, sources (RUN_ID: the whole id, "
       "its start, or the 8 characters progress lines show)",
       {JsonFlag("the run")},
       {"RUN_ID"}},
      {"runs artifacts",
       "RUN_ID [--json]",
       "list a run's archived files: sources, binary, compiler and worker logs, raw timing "
       "samples, profiles (KIND/NAME, size, SHA-256)",
       {JsonFlag("{\"run_id\",\"artifacts\":[{\"kind\",\"name\",\"sha256\",\"size\"}]}")},
       {"RUN_ID"}},
      {"runs artifact",
       "RUN_ID KIND/NAME [--output FILE]",
       "download one of a run's archived files (checked against its SHA-256) to FILE, or to "
       "stdout",
       {{"output", "FILE", "write it to FILE (default: stdout)"},
        {"kind", "KIND",
         "the kind of artifact (samples, worker_log, source, ...); NAME is then taken whole"}},
       {"RUN_ID", "NAME"}},
      {"runs designate",
       "RUN_ID",
       "make one of your runs your designated submission on its definition: the leaderboard "
       "ranks it instead of your latest run",
       {},
       {"RUN_ID"}},
      {"runs undesignate",
       "DEFINITION [--mode M]",
       "clear your designated run on a definition: your latest run counts again",
       {{"mode", "M", "the mode of the designation (default: the node's)"}},
       {"DEFINITION"}},
      {"runs export",
       "--format flashinfer-trace [flags] > traces.jsonl",
       "archived traces as flashinfer-bench Trace lines (JSONL) on stdout",
       {{"format", "F", "flashinfer-trace (the only format; default)"},
        {"definition", "NAME", "only runs of this definition"},
        {"status", "S", "only runs with this overall status (PASSED, COMPILE_ERROR, ...)"},
        {"since", "T", "only runs created since T: 2026-11-29, RFC 3339, or an age (24h, 7d)"},
        {"solutions", "DIR", "also write each run's solution to DIR/<definition>/<name>.json"},
        {"page-size", "N", "runs per ListRuns page (default 100, at most 1000)"},
        {"progress-every", "N", "progress line on stderr every N runs (default 100; 0: none)"}},
       {}},
      {"defs add",
       "FILE [--workloads FILE.jsonl] [--allow-unevaluable]",
       "register a definition and its workloads",
       {{"workloads", "FILE.jsonl", "workloads to register with it"},
        {"allow-unevaluable", "",
         "register it even when no backend of this node can compute its reference"}},
       {"FILE"}},
      {"defs import",
       "DIR [--format flashinfer|kernelbench] [--level N]... [--definition NAME]... [--dry-run] "
       "[--max-tensor-bytes N] [--strict] [--json]",
       "register a flashinfer-bench dataset folder (definitions, workloads, their blobs) or "
       "KernelBench's problems",
       {{"definition", "NAME", "import only this definition (repeatable)", false, true},
        {"format", "FORMAT",
         "flashinfer (default): DIR/definitions, workloads, blob, solutions; kernelbench: "
         "DIR/levelN/ID_NAME.py, each problem a definition kernelbench_lN_ID_NAME"},
        {"level", "N", "kernelbench: import only this level (repeatable)", false, true},
        {"python", "PATH",
         "kernelbench: the python3 with torch that reads the problems (default python3)"},
        {"dry-run", "", "validate everything, upload and register nothing"},
        {"max-tensor-bytes", "N",
         "--dry-run: the workload size limit to validate against (default 4294967296, the "
         "harness's default; a harness started with --max-tensor-bytes N admits N)"},
        {"strict", "", "exit 1 when any workload is left out (missing blob, ...)"},
        JsonFlag("the import report")},
       {"DIR"}},
      {"defs list", "[--json]", "list registered definitions", {JsonFlag("the definitions")}, {}},
      {"defs show",
       "DEF [--json]",
       "show a definition: axes, tensors, workloads, integrity, the settings it is judged with",
       {JsonFlag("the definition and its settings")},
       {"DEF"}},
      {"defs set",
       "DEF [--atol X] [--rtol X] [--required-matched-ratio X] [--warmup N] [--iterations N] "
       "[--trials N] [--min-own-kernel-share X] [--allow-torch-only true|false] [--reset]",
       "how a definition is judged (operators): tolerances, official-mode timed-call counts, "
       "the own-kernel share",
       {{"atol", "X", "absolute tolerance, >= 0 (default 0.01)"},
        {"rtol", "X", "relative tolerance, >= 0 (default 0.01)"},
        {"required-matched-ratio", "X", "share of elements within tolerance, in (0, 1] (1.0)"},
        {"warmup", "N", "untimed calls per trial, 0..1000 (default 10)"},
        {"iterations", "N", "timed calls per trial, 1..10000 (default 50)"},
        {"trials", "N", "trials with fresh inputs, 1..100 (default 3)"},
        {"min-own-kernel-share", "X",
         "least share of the timed calls' GPU time the solution's own kernels must do, in "
         "[0, 1] (default 0.05 for KernelBench problems, else 0: off)"},
        {"allow-torch-only", "B",
         "true: integrity.no_own_kernel and own_kernel_share only warn (calibration: the "
         "reference submitted as its own candidate); false: enforced whatever the tags say"},
        {"reset", "", "clear every setting first (back to the definition's and the defaults)"},
        JsonFlag("the definition and its settings")},
       {"DEF"}},
      {"solutions add",
       "FILE|DIR [--definition DEF] [--name NAME] [--replace] [--json]",
       "register a solution under its definition (operators), as the baseline solution:NAME",
       {{"definition", "DEF",
         "the definition it is registered under (default: its solution.definition; required "
         "for a KernelBench ModelNew .py, which names none)"},
        {"name", "NAME", "register it as NAME (default: its solution.name)"},
        {"replace", "", "replace a solution registered under NAME with other content"},
        JsonFlag("the registration")},
       {"FILE|DIR"}},
      {"solutions list",
       "[--definition DEF] [--json]",
       "list registered solutions",
       {{"definition", "DEF", "only the solutions of this definition"}, JsonFlag("the solutions")},
       {}},
      {"node",
       "[--json]",
       "show the node: backends, devices, toolchains, queue",
       {JsonFlag("the node info")},
       {}},
      {"campaign start",
       "FILE.yaml [--wait] [--json] [--owner NAME] [--controller HOST:PORT]",
       "start a campaign on kiln-controller; --wait follows it to its end",
       {ControllerFlag(), {"wait", "", "block until the campaign ends, showing progress"},
        {"owner", "NAME",
         "the principal the campaign is for: it sees the campaign (default: you; operators)"},
        JsonFlag("the campaign (with --wait: the result object)")},
       {"FILE.yaml"}},
      {"campaign list",
       "[--json]",
       "list campaigns, newest first",
       {ControllerFlag(), {"limit", "N", "at most N campaigns (default 50)"},
        JsonFlag("the campaigns")},
       {}},
      {"campaign show", "ID [--json]", "show one campaign", {ControllerFlag(), JsonFlag("it")},
       {"ID"}},
      {"campaign watch", "ID", "print a campaign's events until it ends", {ControllerFlag()},
       {"ID"}},
      {"campaign cancel", "ID", "cancel a running campaign", {ControllerFlag()}, {"ID"}},
      {"campaign export",
       "ID [--output FILE]",
       "print the campaign's retained solution as flashinfer-bench Solution JSON",
       {ControllerFlag(), {"output", "FILE", "write it to FILE"}},
       {"ID"}},
      {"leaderboard",
       "DEFINITION [--mode M] [--best] [--confirm N] [--noise-floor F] [--json]",
       "every team's designated (else latest) run on a definition, by score, with its 95% "
       "interval",
       {{"mode", "M", "timing mode (default: the node's)"},
        {"best", "",
         "each team's best PASSED run instead (lowest mean latency over all its runs)"},
        {"confirm", "N",
         "evaluate the top N runs again together, in one batch on the same inputs (operators), "
         "and print the order they confirm"},
        NoiseFloorFlag(),
        JsonFlag("the leaderboard (with --confirm: {\"leaderboard\", \"confirmation\"})")},
       {"DEFINITION"}},
      {"report",
       "DEFINITION | --suite kernelbench [--level N]  [--json] [--svg FILE] [--baseline B] "
       "[--by team|solution] [--best] [--noise-floor F]",
       "per workload and team: latency of its designated (else latest) run, baselines, speedups "
       "with 95% intervals, score, fast_p; --suite: fast_p over a suite's problems vs eager and "
       "torch.compile",
       {{"suite", "S",
         "kernelbench: one line per team over the KernelBench problems it ran (fast_0, fast_1, "
         "fast_p vs the problem's Model in eager torch and vs torch.compile), per problem its "
         "verdict and speedups; the SVG has both fast_p curves"},
        {"level", "N", "with --suite kernelbench: only level N's problems (1, 2 or 3)"},
        {"baseline", "B",
         "reference | torch_eager | torch_compile | solution:NAME: speedups, fast_p and the SVG "
         "vs it (default reference; --json carries all)"},
        {"by", "G", "team (the principal that submitted) or solution (default team)"},
        {"best", "",
         "count each team's best PASSED latency over all its runs, not its designated (else "
         "latest) run"},
        {"mode", "M", "timing mode of the runs compared (default: the node's)"},
        {"backend", "B", "backend of the runs compared (default: the one most runs used)"},
        {"svg", "FILE", "also write the fast_p curves and per-workload speedups as SVG"},
        NoiseFloorFlag(),
        JsonFlag("the report")},
       {},
       {"DEFINITION"}},
      {"mcp",
       "[--max-evaluations N] [--ledger FILE] [--timeout-s S]",
       "serve the harness to agents as Model Context Protocol tools over stdio (docs/mcp.md)",
       {{"max-evaluations", "N", "admit at most N evaluations in this session, however the calls interleave (default: no limit; 0 admits none)"},
        {"ledger", "FILE", "append each evaluation's run id to FILE"},
        {"timeout-s", "S", "deadline of each evaluation (default 1800)"}},
       {}},
      {"demo",
       "[--mode M] [--data-dir DIR]",
       "start an embedded harness, evaluate a built-in solution on a built-in definition",
       {{"mode", "M", "timing mode (default official)"},
        {"data-dir", "DIR",
         "the embedded harness's archive, kept for kiln-harness --data-dir DIR to serve "
         "(default $XDG_DATA_HOME/kiln/demo, else ~/.local/share/kiln/demo)"}},
       {}},
  };
}

}  // namespace

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec>* commands = new std::vector<CommandSpec>(BuildCommands());
  return *commands;
}

}  // namespace kiln::cli
