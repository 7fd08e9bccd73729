// podsim's entry point. libsystemc would provide main() itself, but its main prints the kernel's
// copyright banner before sc_main runs; podsim's output is for results, so this main silences it
// first and then hands over to the kernel as usual. The command line lives in sims/cli.cpp.
#include <cstdlib>
#include <systemc>

#include "sims/command.h"

int sc_main(int argc, char* argv[]) { return podsim::sims::run_podsim(argc, argv); }

int main(int argc, char* argv[]) {
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
