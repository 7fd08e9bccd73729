// podsim's entry point. libsystemc would provide main() itself, but its main prints the kernel's
// copyright banner before sc_main runs; podsim's output is for results, so this main silences it
// first and then hands over to the kernel as usual. The command line lives in sims/cli.cpp.
#include <cstdlib>
#include <systemc>

#include "sims/command.h"

// Read by jemalloc (linked in) at start-up: back the heap with transparent huge pages. A large
// system's state is a gigabyte touched at random, packet by packet; with 4 KiB pages most of
// those accesses also miss the TLB, and 2 MiB pages take a tenth to a sixth off the user time of a
// 1024-chip run (docs/collectives.md, Speed). The MALLOC_CONF environment variable overrides
// it (MALLOC_CONF=thp:never to compare).
extern "C" {
const char* malloc_conf = "thp:always,metadata_thp:auto";
}

int sc_main(int argc, char* argv[]) { return podsim::sims::run_podsim(argc, argv); }

int main(int argc, char* argv[]) {
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
