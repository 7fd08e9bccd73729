// Plain test binaries get main() from gtest_main and never start the SystemC kernel, but
// libsystemc.so references sc_main as soon as they link a library that uses SystemC types.
#include <systemc>

int sc_main(int, char*[]) { return 1; }
