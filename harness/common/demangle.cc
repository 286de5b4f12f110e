#include "harness/common/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace kiln {

std::string Demangle(const std::string& name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = status == 0 && text != nullptr ? std::string(text) : name;
  std::free(text);
  return result;
}

}  // namespace kiln
