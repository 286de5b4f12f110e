#include "controller/agents/curl_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace kiln::controller {

absl::StatusOr<CurlApi> LoadCurl(const std::string& file) {
  auto missing = [&file](const std::string& why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the http agent needs libcurl at run time and cannot load ", file, ": ", why,
        " (install libcurl4 on Debian 12, libcurl4t64 on Ubuntu 24.04)"));
  };
  void* lib = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return missing(why != nullptr ? why : "dlopen failed");
  }
  CurlApi api;
  bool all = true;
  auto resolve = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
    all = all && fn != nullptr;
  };
  resolve(api.global_init, "curl_global_init");
  resolve(api.easy_init, "curl_easy_init");
  resolve(api.easy_setopt, "curl_easy_setopt");
  resolve(api.easy_perform, "curl_easy_perform");
  resolve(api.easy_getinfo, "curl_easy_getinfo");
  resolve(api.easy_cleanup, "curl_easy_cleanup");
  resolve(api.easy_strerror, "curl_easy_strerror");
  resolve(api.slist_append, "curl_slist_append");
  resolve(api.slist_free_all, "curl_slist_free_all");
  if (!all) {
    ::dlclose(lib);
    return missing("it lacks curl_easy_* functions");
  }
  // Kept loaded for the process's life: the functions are used from any thread.
  if (const CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT); code != CURLE_OK) {
    return absl::FailedPreconditionError(
        absl::StrCat("curl_global_init failed: ", api.easy_strerror(code)));
  }
  return api;
}

absl::StatusOr<const CurlApi*> Curl() {
  // Loaded once, on first use, and kept (never destroyed: other threads may still use it).
  static const absl::StatusOr<CurlApi>* const loaded = [] {
    const char* file = std::getenv("KILN_LIBCURL");
    return new absl::StatusOr<CurlApi>(
        LoadCurl(file != nullptr && *file != '\0' ? file : "libcurl.so.4"));
  }();
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

}  // namespace kiln::controller
