// The kiln command line: a small, strict argument parser and the dispatch to the subcommands.
//
//   kiln [--server HOST:PORT] submit --definition FILE|NAME --solution FILE|DIR ...
//
// Parsing never exits or prints; it returns an Invocation or an INVALID_ARGUMENT status whose
// message is the line to show ("kiln submit: unknown flag '--foo'"). Main() prints that line and
// the command's usage and exits with kExitUsage.
#ifndef KILN_CLIENT_CLI_H_
#define KILN_CLIENT_CLI_H_

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln::cli {

// Exit codes: every workload PASSED | any other verdict | usage, input or connection error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

struct FlagSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // empty: a boolean flag that takes no value
  std::string help;
  bool required = false;
  bool repeatable = false;  // may be given several times; ParsedArgs::GetAll has every value
};

struct CommandSpec {
  std::string name;      // "submit", "runs list", ...
  std::string synopsis;  // arguments after the name, for the usage line
  std::string summary;
  std::vector<FlagSpec> flags;
  std::vector<std::string> positionals;  // names of the required positional arguments
  // Names of positional arguments that may follow the required ones; the command checks them.
  std::vector<std::string> optional_positionals = {};
};

// Every subcommand kiln knows, in the order `kiln help` lists them.
const std::vector<CommandSpec>& Commands();
// The command named `name` ("runs show"), or nullptr.
const CommandSpec* FindCommand(std::string_view name);

// The flags and positional arguments given to one command.
struct ParsedArgs {
  std::map<std::string, std::string> values;  // flag name -> value ("" for booleans)
  // Every value of a repeatable flag, in command-line order (values holds the last one).
  std::map<std::string, std::vector<std::string>> repeated;
  std::vector<std::string> positionals;

  bool Has(const std::string& flag) const { return values.count(flag) > 0; }
  std::string Get(const std::string& flag, const std::string& fallback = "") const;
  // Every value of a repeatable flag, in order; empty when it was not given.
  std::vector<std::string> GetAll(const std::string& flag) const;
};

// Parses `args` (what follows the command name) against `spec`. Accepts "--flag value",
// "--flag=value" and "--" to end the flags. Errors name the command and the flag.
absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec, const std::vector<std::string>& args);

// How to reach and authenticate to the harness; flags accepted before or after the command.
struct ConnectionFlags {
  std::string token;            // --token, else $KILN_TOKEN: sent as "authorization: Bearer"
  std::string tls_ca;           // --tls-ca FILE: use TLS, trusting this PEM CA
  std::string tls_cert;         // --tls-cert FILE: client certificate (mTLS), with --tls-key
  std::string tls_key;          // --tls-key FILE
  std::string tls_server_name;  // --tls-server-name NAME: the name the certificate must carry
};

struct Invocation {
  std::string server;                    // HOST:PORT to talk to
  ConnectionFlags connection;
  std::string controller;  // --controller before the command (campaign commands only)
  // The harness connection flags given on the command line (--server, --token, --tls-*), by
  // name: commands that talk to no harness refuse them rather than ignore them.
  std::vector<std::string> connection_flags_given;
  const CommandSpec* command = nullptr;  // nullptr: general help
  ParsedArgs args;
  bool help = false;  // print the usage of `command` (or of kiln) and exit 0
  std::string help_group;  // with `help` and no command: a group's usage ("runs", "defs")
};

// Parses a whole command line (without the program name). `env_server` is $KILN_SERVER,
// `env_token` $KILN_TOKEN. --server and the ConnectionFlags may come before the subcommand or
// among its flags.
absl::StatusOr<Invocation> ParseCommandLine(const std::vector<std::string>& argv,
                                            std::optional<std::string> env_server,
                                            std::optional<std::string> env_token = std::nullopt);

// Usage text of one command, or of kiln as a whole when `command` is null.
std::string Usage(const CommandSpec* command);
// Usage text of a group of commands ("runs": runs list, runs show, runs export).
std::string GroupUsage(const std::string& group);

// The --status flag `flag` as an evaluation status: the names of `kiln runs list`'s STATUS
// column, in any case ("passed", "Incorrect_Numerical"). A usage error lists the valid names.
absl::StatusOr<v1::EvaluationStatus> StatusFlag(const Invocation& inv, const std::string& flag);

// Parses a flag's value as a number, naming the command and flag on error.
absl::StatusOr<int> IntFlag(const Invocation& inv, const std::string& flag, int fallback);
absl::StatusOr<double> SecondsFlag(const Invocation& inv, const std::string& flag, double fallback);

// Where a command writes: results on `out`, progress and errors on `err`.
struct Console {
  std::ostream& out;
  std::ostream& err;
  bool err_is_tty = false;
};

// Bad input the command found itself (a flag, a file): "kiln: MESSAGE" on err, kExitUsage.
int InputError(const absl::Status& status, Console& console);

// Runs the parsed command and returns the process exit code.
int Dispatch(const Invocation& inv, Console& console);

// The whole CLI: parse, print usage errors, dispatch.
int Main(int argc, char** argv);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_CLI_H_
