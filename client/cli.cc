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
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "client/commands.h"
#include "harness/model/json_interop.h"

#ifndef KILN_VERSION
#define KILN_VERSION "dev"
#endif

namespace kiln::cli {

namespace {

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
