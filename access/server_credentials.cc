#include "access/server_credentials.h"

#include <arpa/inet.h>

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "harness/common/files.h"

namespace kiln {

namespace {

std::string HostOf(const std::string& listen) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return absl::AsciiStrToLower(host);
}

absl::StatusOr<std::string> ReadPem(const std::string& path, const std::string& flag) {
  absl::StatusOr<std::string> pem = ReadFile(path);
  if (!pem.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, " ", path, ": ", pem.status().message()));
  }
  return pem;
}

}  // namespace

bool IsLoopbackListen(const std::string& listen) {
  const std::string host = HostOf(listen);
  if (host == "localhost") return true;
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

absl::Status CheckExposure(const ListenAccess& o) {
  const bool tls = !o.tls_cert.empty();
  if (IsLoopbackListen(o.listen)) return absl::OkStatus();
  if (o.tokens_file.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("listening on ", o.listen,
                     " (not loopback) needs --tokens FILE: without it every caller is an "
                     "operator"));
  }
  if (!tls && !o.allow_insecure_remote) {
    return absl::FailedPreconditionError(absl::StrCat(
        "listening on ", o.listen,
        " (not loopback) without TLS sends tokens and sources in the clear: pass --tls-cert and "
        "--tls-key, or --allow-insecure-remote"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ListenAccess& o) {
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  const bool tls = !o.tls_cert.empty();
  if (!tls && !o.tls_client_ca.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  if (absl::Status s = CheckExposure(o); !s.ok()) return s;
  if (!tls) return grpc::InsecureServerCredentials();

  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  absl::StatusOr<std::string> cert = ReadPem(o.tls_cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(o.tls_key, "--tls-key");
  if (!key.ok()) return key.status();
  pair.cert_chain = *std::move(cert);
  pair.private_key = *std::move(key);
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  if (!o.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(o.tls_client_ca, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const std::string& ca, const std::string& cert, const std::string& key,
    const std::string& flag) {
  if (ca.empty() && cert.empty() && key.empty()) return grpc::InsecureChannelCredentials();
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "-cert and ", flag, "-key go together"));
  }
  grpc::SslCredentialsOptions ssl;
  for (auto [path, suffix, out] : {std::tuple{&ca, "-ca", &ssl.pem_root_certs},
                                   std::tuple{&cert, "-cert", &ssl.pem_cert_chain},
                                   std::tuple{&key, "-key", &ssl.pem_private_key}}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> pem = ReadPem(*path, absl::StrCat(flag, suffix));
    if (!pem.ok()) return pem.status();
    *out = *std::move(pem);
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace kiln
