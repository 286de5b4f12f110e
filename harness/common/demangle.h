// C++ symbol names as people read them.
#ifndef KILN_HARNESS_COMMON_DEMANGLE_H_
#define KILN_HARNESS_COMMON_DEMANGLE_H_

#include <string>

namespace kiln {

// The demangled form of an Itanium C++ ABI name ("_Z11relu_kernelPKfPfi" ->
// "relu_kernel(float const*, float*, int)"); `name` itself when it is not one.
std::string Demangle(const std::string& name);

}  // namespace kiln

#endif  // KILN_HARNESS_COMMON_DEMANGLE_H_
