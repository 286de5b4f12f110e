// libcurl, loaded at run time (dlopen of libcurl.so.4) instead of linked: kiln-controller starts
// without it, and the service bundle (deploy/bundle) leaves out libcurl and the ten-odd MiB of
// libraries it pulls in (Kerberos, LDAP, GnuTLS, ...). Only the http agent needs it, and its
// error says what to install when it is missing. Types and constants come from <curl/curl.h>.
#ifndef KILN_CONTROLLER_AGENTS_CURL_API_H_
#define KILN_CONTROLLER_AGENTS_CURL_API_H_

#include <curl/curl.h>

#include <string>

#include "absl/status/statusor.h"

namespace kiln::controller {

struct CurlApi {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
};

// Loads `file` (a name dlopen searches for, or a path) and resolves every function;
// curl_global_init has been called on success. FAILED_PRECONDITION naming the file, dlopen's
// reason and the package to install otherwise. Each call loads anew: use Curl().
absl::StatusOr<CurlApi> LoadCurl(const std::string& file);

// libcurl.so.4 ($KILN_LIBCURL when set), loaded on first use and kept; the same error on every
// call when it cannot be loaded.
absl::StatusOr<const CurlApi*> Curl();

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_CURL_API_H_
