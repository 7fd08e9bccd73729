// sc_main for SystemC test binaries. ctest runs each TEST in its own process (the kernel cannot
// elaborate twice), and any SystemC warning or error becomes a test failure so that a model
// cannot quietly misbehave while its assertions still pass.
#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

namespace {

void fail_on_report(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  const auto severity = report.get_severity();
  if (severity >= sc_core::SC_WARNING) {
    ADD_FAILURE() << "SystemC " << (severity == sc_core::SC_WARNING ? "warning" : "error") << " ["
                  << report.get_msg_type() << "] " << report.get_msg();
  }
  sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_DISPLAY);
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_handler(fail_on_report);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING,
                                          sc_core::SC_LOG | sc_core::SC_DISPLAY);
  return RUN_ALL_TESTS();
}

// Silences the kernel's banner before libsystemc would print it, so test listings stay clean.
int main(int argc, char* argv[]) {
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}
