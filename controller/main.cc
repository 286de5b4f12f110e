// kiln-controller is not built yet: campaigns, agents and promotion land with the controller
// work. This binary exists so deployments can already name it; it says so and exits non-zero.
#include <cstdio>

int main() {
  std::fprintf(stderr,
               "kiln-controller: not implemented in this version of kiln; use `kiln submit` "
               "against a kiln-harness.\n");
  return 2;
}
