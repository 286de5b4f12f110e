#include "client/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/commands.h"
#include "harness/model/json_interop.h"
#include "harness/model/speedup_interval.h"

#ifndef KILN_VERSION
#define KILN_VERSION "dev"
#endif

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

bool IsControllerCommand(std::string_view name) { return name.substr(0, 9) == "campaign "; }

bool IsGroup(std::string_view word) {
  return word == "runs" || word == "defs" || word == "campaign" || word == "solutions";
}

absl::Status UsageError(absl::string_view command, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("kiln", command.empty() ? "" : " ", command, ": ", message));
}

// Flags every command takes: where the harness is and how to authenticate to it.
const std::vector<FlagSpec>& ConnectionFlagSpecs() {
  static const std::vector<FlagSpec>* specs = new std::vector<FlagSpec>{
      {"server", "HOST:PORT", "the harness (default $KILN_SERVER, else 127.0.0.1:50051)"},
      {"token", "TOKEN", "bearer token (default $KILN_TOKEN)"},
      {"tls-ca", "FILE", "connect with TLS, trusting this PEM CA certificate"},
      {"tls-cert", "FILE", "client certificate (PEM) for mutual TLS"},
      {"tls-key", "FILE", "private key (PEM) of --tls-cert"},
      {"tls-server-name", "NAME", "name the server certificate must carry (default: HOST)"},
  };
  return *specs;
}

// Sets a connection flag of `inv`; false when `name` is not one.
bool SetConnectionFlag(Invocation& inv, const std::string& name, const std::string& value) {
  if (name == "server") {
    inv.server = value;
  } else if (name == "token") {
    inv.connection.token = value;
  } else if (name == "tls-ca") {
    inv.connection.tls_ca = value;
  } else if (name == "tls-cert") {
    inv.connection.tls_cert = value;
  } else if (name == "tls-key") {
    inv.connection.tls_key = value;
  } else if (name == "tls-server-name") {
    inv.connection.tls_server_name = value;
  } else {
    return false;
  }
  return true;
}

// The flag `name` of `spec`; every command also takes the connection flags.
const FlagSpec* FindFlag(const CommandSpec& spec, const std::string& name) {
  for (const FlagSpec& f : ConnectionFlagSpecs()) {
    if (f.name == name) return &f;
  }
  for (const FlagSpec& f : spec.flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Required flags given, positional arguments counted.
absl::Status CheckComplete(const CommandSpec& spec, const ParsedArgs& parsed) {
  for (const FlagSpec& f : spec.flags) {
    if (f.required && !parsed.Has(f.name)) {
      return UsageError(spec.name,
                        absl::StrCat("missing required flag --", f.name, " ", f.value_name));
    }
  }
  if (parsed.positionals.size() < spec.positionals.size()) {
    return UsageError(spec.name,
                      absl::StrCat("missing ", spec.positionals[parsed.positionals.size()]));
  }
  const size_t most = spec.positionals.size() + spec.optional_positionals.size();
  if (parsed.positionals.size() > most) {
    return UsageError(spec.name, absl::StrCat("unexpected argument '",
                                              parsed.positionals[most], "'"));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec>* commands = new std::vector<CommandSpec>(BuildCommands());
  return *commands;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const CommandSpec& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string ParsedArgs::Get(const std::string& flag, const std::string& fallback) const {
  auto it = values.find(flag);
  return it == values.end() ? fallback : it->second;
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& flag) const {
  auto it = repeated.find(flag);
  return it == repeated.end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec,
                                     const std::vector<std::string>& args) {
  ParsedArgs parsed;
  bool flags_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-' || arg == "-") {
      parsed.positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      parsed.values["help"] = "";
      continue;
    }
    absl::string_view body = arg;
    if (!absl::ConsumePrefix(&body, "--")) {
      return UsageError(spec.name, absl::StrCat("unknown flag '", arg, "'"));
    }
    std::string name(body.substr(0, body.find('=')));
    std::optional<std::string> inline_value;
    if (body.find('=') != absl::string_view::npos) {
      inline_value = std::string(body.substr(body.find('=') + 1));
    }
    const FlagSpec* flag = FindFlag(spec, name);
    if (flag == nullptr) {
      return UsageError(spec.name, absl::StrCat("unknown flag '--", name, "'"));
    }
    if (parsed.Has(name) && !flag->repeatable) {
      return UsageError(spec.name, absl::StrCat("flag '--", name, "' given twice"));
    }
    if (flag->value_name.empty()) {
      if (inline_value) {
        return UsageError(spec.name, absl::StrCat("flag '--", name, "' takes no value"));
      }
      parsed.values[name] = "";
    } else if (inline_value) {
      parsed.values[name] = *inline_value;
    } else if (i + 1 < args.size()) {
      parsed.values[name] = args[++i];
    } else {
      return UsageError(spec.name,
                        absl::StrCat("flag '--", name, "' needs a value (", flag->value_name, ")"));
    }
    if (flag->repeatable) parsed.repeated[name].push_back(parsed.values[name]);
  }
  if (parsed.Has("help")) return parsed;
  if (absl::Status complete = CheckComplete(spec, parsed); !complete.ok()) return complete;
  return parsed;
}

absl::StatusOr<Invocation> ParseCommandLine(const std::vector<std::string>& argv,
                                            std::optional<std::string> env_server,
                                            std::optional<std::string> env_token) {
  Invocation inv;
  inv.server = env_server.has_value() && !env_server->empty() ? *env_server : kDefaultServer;
  inv.connection.token = env_token.value_or("");
  size_t i = 0;
  // Global flags before the subcommand.
  for (; i < argv.size() && argv[i].size() > 1 && argv[i][0] == '-'; ++i) {
    const std::string& arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      inv.help = true;
      return inv;
    }
    const std::string body = absl::StartsWith(arg, "--") ? arg.substr(2) : arg;
    const size_t eq = body.find('=');
    const std::string name = body.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) {
      value = body.substr(eq + 1);
    } else if (i + 1 < argv.size()) {
      value = argv[++i];
    } else {
      for (const FlagSpec& f : ConnectionFlagSpecs()) {
        if (f.name == name) {
          return UsageError("", absl::StrCat("flag '--", name, "' needs a value (", f.value_name,
                                             ")"));
        }
      }
    }
    if (absl::StartsWith(arg, "--") && name == "controller") {
      if (eq == std::string::npos && value.empty()) {
        return UsageError("", "flag '--controller' needs a value (HOST:PORT)");
      }
      inv.controller = value;
      continue;
    }
    if (!absl::StartsWith(arg, "--") || !SetConnectionFlag(inv, name, value)) {
      return UsageError("", absl::StrCat("unknown flag '", arg, "'"));
    }
    inv.connection_flags_given.push_back(name);
  }
  if (i >= argv.size()) return UsageError("", "expected a command");
  std::string name = argv[i++];
  if (name == "help") {
    inv.help = true;
    if (i < argv.size()) {
      std::string topic = argv[i++];
      if (IsGroup(topic) && i < argv.size()) topic = absl::StrCat(topic, " ", argv[i++]);
      inv.command = FindCommand(topic);
      if (inv.command == nullptr && !IsGroup(topic)) {
        return UsageError("help", absl::StrCat("unknown command '", topic, "'"));
      }
      if (inv.command == nullptr) inv.help_group = topic;
    }
    return inv;
  }
  if (IsGroup(name)) {
    if (i >= argv.size() || argv[i] == "-h" || argv[i] == "--help") {
      if (i < argv.size()) {
        inv.help = true;
        inv.help_group = name;
        return inv;
      }
      if (name == "campaign") {
        return UsageError(name,
                          "expected a subcommand: start | list | show | watch | cancel | export");
      }
      if (name == "solutions") return UsageError(name, "expected a subcommand: add | list");
      return UsageError(name, name == "runs" ? "expected a subcommand: list | show | artifacts | "
                                               "artifact | export | designate | undesignate"
                                             : "expected a subcommand: add | import | list | "
                                               "show | set");
    }
    name = absl::StrCat(name, " ", argv[i++]);
  }
  inv.command = FindCommand(name);
  if (inv.command == nullptr) return UsageError("", absl::StrCat("unknown command '", name, "'"));
  std::vector<std::string> rest(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
  absl::StatusOr<ParsedArgs> args = ParseArgs(*inv.command, rest);
  if (!args.ok()) return args.status();
  inv.args = *std::move(args);
  if (inv.args.Has("help")) inv.help = true;
  for (const FlagSpec& f : ConnectionFlagSpecs()) {
    if (inv.args.Has(f.name)) {
      SetConnectionFlag(inv, f.name, inv.args.Get(f.name));
      inv.connection_flags_given.push_back(f.name);
    }
  }
  if (inv.help) return inv;
  // A flag a command would not use is refused, never silently ignored.
  const std::string given =
      inv.connection_flags_given.empty() ? "" : absl::StrCat("--", inv.connection_flags_given[0]);
  if (IsControllerCommand(name)) {
    // --token and the TLS flags are the controller connection's; --server names a harness.
    const auto& flags = inv.connection_flags_given;
    if (std::find(flags.begin(), flags.end(), "server") != flags.end()) {
      return UsageError(name, "--server: campaign commands talk to kiln-controller, not to a "
                              "harness; give its address with --controller HOST:PORT (or "
                              "$KILN_CONTROLLER)");
    }
  } else if (!inv.controller.empty()) {
    return UsageError(name, "--controller: only campaign commands talk to kiln-controller (this "
                            "command talks to a harness: --server HOST:PORT)");
  }
  if (name == "demo" && !given.empty()) {
    return UsageError(name, absl::StrCat(given, ": kiln demo starts its own harness on this "
                                                "machine and connects to no other (kiln submit "
                                                "--server HOST:PORT evaluates on a remote one)"));
  }
  if (inv.server.empty()) return UsageError(name, "--server must not be empty");
  return inv;
}

std::string Usage(const CommandSpec* command) {
  if (command == nullptr) {
    std::string out =
        "usage: kiln [--server HOST:PORT] [--token TOKEN] [--tls-ca FILE] COMMAND [flags]\n\n"
        "kiln talks to a kiln-harness (--server, else $KILN_SERVER, else 127.0.0.1:50051),\n"
        "authenticating with --token, else $KILN_TOKEN (none: a harness without --tokens).\n"
        "campaign commands talk to kiln-controller instead: --controller HOST:PORT, else\n"
        "$KILN_CONTROLLER, else 127.0.0.1:50061, with --token, else $KILN_CONTROLLER_TOKEN.\n"
        "kiln demo starts its own harness.\n"
        "TLS: --tls-ca FILE [--tls-server-name NAME], and --tls-cert/--tls-key for mutual TLS.\n\n"
        "commands:\n";
    // Names in one column, wide enough for the longest ("campaign cancel") and two spaces.
    size_t width = std::string("help [CMD]").size();
    for (const CommandSpec& c : Commands()) width = std::max(width, c.name.size());
    for (const CommandSpec& c : Commands()) {
      out += absl::StrCat("  ", c.name, std::string(width + 2 - c.name.size(), ' '), c.summary,
                          "\n");
    }
    out += absl::StrCat("  help [CMD]", std::string(width + 2 - 10, ' '),
                        "show this, or the usage of CMD\n\n");
    out +=
        "exit codes: 0 every workload PASSED, 1 any other verdict, 2 usage or connection error\n";
    return out;
  }
  // What the command connects to: a harness, kiln-controller, or (the demo) its own harness.
  const char* connects = IsControllerCommand(command->name) ? "[--controller HOST:PORT] "
                         : command->name == "demo"          ? ""
                                                            : "[--server HOST:PORT] ";
  std::string out = absl::StrCat("usage: kiln ", connects, command->name, " ", command->synopsis,
                                 "\n\n", command->summary, "\n");
  if (!command->flags.empty()) out += "\nflags:\n";
  for (const FlagSpec& f : command->flags) {
    std::string left = absl::StrCat("--", f.name, f.value_name.empty() ? "" : " ", f.value_name);
    out += absl::StrCat("  ", left, std::string(left.size() < 24 ? 24 - left.size() : 1, ' '),
                        f.help, f.required ? " (required)" : "", "\n");
  }
  return out;
}

std::string GroupUsage(const std::string& group) {
  std::string out = absl::StrCat("usage: kiln ",
                                 group == "campaign" ? "[--controller HOST:PORT] "
                                                     : "[--server HOST:PORT] ",
                                 group, " SUBCOMMAND [flags]\n\n",
                                 "subcommands:\n");
  size_t width = 0;
  for (const CommandSpec& c : Commands()) {
    if (absl::StartsWith(c.name, group + " ")) width = std::max(width, c.name.size());
  }
  for (const CommandSpec& c : Commands()) {
    if (!absl::StartsWith(c.name, group + " ")) continue;
    out += absl::StrCat("  ", c.name, std::string(width + 2 - c.name.size(), ' '), c.summary,
                        "\n");
  }
  out += absl::StrCat("\nkiln help ", group, " SUBCOMMAND shows a subcommand's flags.\n");
  return out;
}

absl::StatusOr<v1::EvaluationStatus> StatusFlag(const Invocation& inv, const std::string& flag) {
  const std::string value = absl::AsciiStrToUpper(inv.args.Get(flag));
  absl::StatusOr<v1::EvaluationStatus> status = ParseStatusName(value);
  if (status.ok()) return status;
  std::vector<std::string> names;
  for (int s = v1::EvaluationStatus_MIN; s <= v1::EvaluationStatus_MAX; ++s) {
    if (!v1::EvaluationStatus_IsValid(s) || s == v1::STATUS_UNSPECIFIED) continue;
    names.emplace_back(StatusName(static_cast<v1::EvaluationStatus>(s)));
  }
  return UsageError(inv.command->name,
                    absl::StrCat("--", flag, ": unknown status '", inv.args.Get(flag),
                                 "' (one of ", absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<int> IntFlag(const Invocation& inv, const std::string& flag, int fallback) {
  if (!inv.args.Has(flag)) return fallback;
  int value = 0;
  if (!absl::SimpleAtoi(inv.args.Get(flag), &value) || value < 0) {
    return UsageError(inv.command->name, absl::StrCat("--", flag,
                                                      ": expected a non-negative "
                                                      "integer, got '",
                                                      inv.args.Get(flag), "'"));
  }
  return value;
}

absl::StatusOr<double> SecondsFlag(const Invocation& inv, const std::string& flag,
                                   double fallback) {
  if (!inv.args.Has(flag)) return fallback;
  double value = 0;
  if (!absl::SimpleAtod(inv.args.Get(flag), &value) || !(value > 0)) {
    return UsageError(inv.command->name, absl::StrCat("--", flag,
                                                      ": expected a positive number "
                                                      "of seconds, got '",
                                                      inv.args.Get(flag), "'"));
  }
  return value;
}

int InputError(const absl::Status& status, Console& console) {
  // UsageError's messages already start with "kiln <command>: ".
  const absl::string_view message = status.message();
  console.err << (absl::StartsWith(message, "kiln ") || absl::StartsWith(message, "kiln:")
                      ? ""
                      : "kiln: ")
              << message << "\n";
  return kExitUsage;
}

int Dispatch(const Invocation& inv, Console& console) {
  if (inv.help && inv.command == nullptr && !inv.help_group.empty()) {
    console.out << GroupUsage(inv.help_group);
    return kExitOk;
  }
  if (inv.help || inv.command == nullptr) {
    console.out << Usage(inv.command);
    return kExitOk;
  }
  const std::string& name = inv.command->name;
  if (name == "submit") return RunSubmit(inv, console);
  if (name == "profile") return RunProfile(inv, console);
  if (name == "runs list") return RunRunsList(inv, console);
  if (name == "runs show") return RunRunsShow(inv, console);
  if (name == "runs artifacts") return RunRunsArtifacts(inv, console);
  if (name == "runs artifact") return RunRunsArtifact(inv, console);
  if (name == "runs export") return RunRunsExport(inv, console);
  if (name == "runs designate") return RunRunsDesignate(inv, console);
  if (name == "runs undesignate") return RunRunsUndesignate(inv, console);
  if (name == "defs add") return RunDefsAdd(inv, console);
  if (name == "defs import") return RunDefsImport(inv, console);
  if (name == "defs list") return RunDefsList(inv, console);
  if (name == "defs show") return RunDefsShow(inv, console);
  if (name == "defs set") return RunDefsSet(inv, console);
  if (name == "solutions add") return RunSolutionsAdd(inv, console);
  if (name == "solutions list") return RunSolutionsList(inv, console);
  if (name == "node") return RunNode(inv, console);
  if (name == "demo") return RunDemo(inv, console);
  if (name == "mcp") return RunMcp(inv, console);
  if (name == "leaderboard") return RunLeaderboard(inv, console);
  if (name == "report") return RunDefinitionReport(inv, console);
  if (name == "campaign start") return RunCampaignStart(inv, console);
  if (name == "campaign list") return RunCampaignList(inv, console);
  if (name == "campaign show") return RunCampaignShow(inv, console);
  if (name == "campaign watch") return RunCampaignWatch(inv, console);
  if (name == "campaign cancel") return RunCampaignCancel(inv, console);
  if (name == "campaign export") return RunCampaignExport(inv, console);
  console.err << "kiln: command '" << name << "' is not implemented\n";
  return kExitUsage;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    std::cout << "kiln " << KILN_VERSION << "\n";
    return kExitOk;
  }
  const char* env = std::getenv("KILN_SERVER");
  const char* env_token = std::getenv("KILN_TOKEN");
  absl::StatusOr<Invocation> inv =
      ParseCommandLine(args, env ? std::optional<std::string>(env) : std::nullopt,
                       env_token ? std::optional<std::string>(env_token) : std::nullopt);
  if (!inv.ok()) {
    std::cerr << inv.status().message() << "\n\n";
    // Show the usage of the command the user was typing, when it can be told.
    const CommandSpec* command = nullptr;
    for (size_t i = 0; i < args.size() && command == nullptr; ++i) {
      command = FindCommand(args[i]);
      if (command == nullptr && i + 1 < args.size()) {
        command = FindCommand(absl::StrCat(args[i], " ", args[i + 1]));
      }
    }
    std::cerr << Usage(command);
    return kExitUsage;
  }
  Console console{std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1};
  try {
    return Dispatch(*inv, console);
  } catch (const std::exception& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace kiln::cli
