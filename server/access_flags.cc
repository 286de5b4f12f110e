#include "server/access_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tokens, "",
          "principals and their token hashes (NAME ROLE SHA256HEX a line); without it the "
          "harness serves loopback only and every caller is the operator 'local'");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain to serve TLS with");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "", "PEM CA: clients must present a certificate it signed");
ABSL_FLAG(bool, allow_insecure_remote, false, "serve plaintext on a non-loopback address");
ABSL_FLAG(int, max_queued_per_principal, 0, "runs one principal may have unfinished; 0: no limit");
ABSL_FLAG(int, max_runs_per_hour, 0, "runs one principal may submit per hour; 0: no limit");
ABSL_FLAG(int, max_profiles_per_hour, 30,
          "Nsight Compute profiles (kiln profile) one principal may take per hour; 0: no limit");
ABSL_FLAG(int64_t, max_source_bytes, int64_t{1} << 20, "sources of one solution, bytes");
ABSL_FLAG(int, max_workloads, 1024, "workloads of one run");
ABSL_FLAG(int64_t, max_tensor_bytes, int64_t{4} << 30, "inputs and outputs of one workload, bytes");
ABSL_FLAG(std::string, metrics_listen, "", "HOST:PORT serving Prometheus metrics at /metrics");
ABSL_FLAG(std::string, http_listen, "",
          "HOST:PORT serving the read-only web console (runs, definitions, leaderboards)");

namespace kiln {

const char kAccessFlagsUsage[] =
    "Access and limits:\n"
    "  --tokens FILE             one principal a line: NAME ROLE SHA256HEX (ROLE team | agent |\n"
    "                            operator; SHA256HEX = sha256 of the token; # comments). Clients\n"
    "                            send 'authorization: Bearer TOKEN'. WITHOUT --tokens the harness\n"
    "                            serves loopback addresses only and every caller is an operator.\n"
    "  --tls-cert FILE --tls-key FILE   serve TLS; --tls-client-ca FILE requires client certs\n"
    "  --allow-insecure-remote   allow plaintext on a non-loopback address (tokens in clear)\n"
    "  --max-queued-per-principal N, --max-runs-per-hour N   per principal; 0: no limit\n"
    "  --max-profiles-per-hour N Nsight Compute profiles (kiln profile) per principal and hour\n"
    "                            (default 30; 0: no limit)\n"
    "  --max-source-bytes N, --max-workloads N, --max-tensor-bytes N   per run\n"
    "  --metrics-listen HOST:PORT   Prometheus text metrics at /metrics\n"
    "  --http-listen HOST:PORT   the read-only web console (same tokens and TLS as the RPCs)\n";

void ApplyAccessFlags(HarnessOptions* o) {
  o->tokens_file = absl::GetFlag(FLAGS_tokens);
  o->tls_cert = absl::GetFlag(FLAGS_tls_cert);
  o->tls_key = absl::GetFlag(FLAGS_tls_key);
  o->tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  o->allow_insecure_remote = absl::GetFlag(FLAGS_allow_insecure_remote);
  o->max_queued_per_principal = absl::GetFlag(FLAGS_max_queued_per_principal);
  o->max_runs_per_hour = absl::GetFlag(FLAGS_max_runs_per_hour);
  o->max_profiles_per_hour = absl::GetFlag(FLAGS_max_profiles_per_hour);
  o->max_source_bytes = absl::GetFlag(FLAGS_max_source_bytes);
  o->max_workloads = absl::GetFlag(FLAGS_max_workloads);
  o->max_workload_bytes = absl::GetFlag(FLAGS_max_tensor_bytes);
  o->metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  o->http_listen = absl::GetFlag(FLAGS_http_listen);
}

}  // namespace kiln
