// kiln: the command line for teams, agents and operators of kiln-harness.
#include "client/cli.h"

int main(int argc, char** argv) { return kiln::cli::Main(argc, argv); }
