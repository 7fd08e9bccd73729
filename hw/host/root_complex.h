// The host's PCIe root complex: the CPU's memory-mapped requests go down its root ports by
// address (configuration requests by bus, through the ECAM window), and the devices' requests
// come up: writes to the MSI address window become interrupts for the handlers the host
// registered, everything else goes to host memory.
// Captures: routing by root-port windows and bus ranges, ECAM decoding (bus, device, function,
// register), the x86 MSI window 0xFEE00000-0xFEEFFFFF, interrupt delivery at the time the
// message arrives (an event-queue callback), a latency per crossing, and address errors for
// requests nothing claims. Ignores: the IOMMU, peer-to-peer between root ports, interrupt
// remapping and the APIC (the message's data word is handed over as is).
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/config_binding.h"
#include "core/event_queue.h"
#include "core/units.h"
#include "hw/pcie/routing.h"

namespace podsim::host {

struct RootComplexConfig {
  int root_ports = 2;
  core::Duration latency{50000};  // 50 ns
  std::uint64_t msi_base = 0xFEE00000;
  std::uint64_t msi_size = 0x100000;
  std::uint64_t ecam_base = 0xE0000000;

  template <class V>
  void describe(V& v) {
    v.field("root_ports", root_ports,
            core::Spec("root ports (one link each); an HLS box uses two sockets' ports")
                .range(1, 64)
                .source("[S9]: dual Xeon, two PCIe switches"));
    v.field("latency", latency,
            core::Spec("crossing the root complex, either way")
                .min(0)
                .source("placeholder [U]: part of the 400-500 ns read round trip of [P3]"));
    v.field("msi_base", msi_base,
            core::Spec("first address of the MSI window").source("[P6]: 0xFEE00000 on x86"));
    v.field("msi_size", msi_size,
            core::Spec("bytes of the MSI window").positive().source("[P6]: 1 MiB"));
    v.field("ecam_base", ecam_base,
            core::Spec("configuration space window, 1 MiB per bus (256 MiB)")
                .source("[P1] ECAM; 0xE0000000 placeholder [U]"));
  }
};

class RootComplex : public sc_core::sc_module, private core::Timed {
 public:
  // From the host CPU; down the root ports (port i = i-th binding) to the links.
  tlm_utils::simple_target_socket<RootComplex> from_cpu;
  tlm_utils::multi_passthrough_initiator_socket<RootComplex> to_device;
  // Up from the links; on to host memory.
  tlm_utils::multi_passthrough_target_socket<RootComplex> from_device;
  tlm_utils::simple_initiator_socket<RootComplex> to_memory;

  // Called with the message's address and data at the time the message arrives.
  using InterruptHandler = std::function<void(std::uint64_t address, std::uint32_t data)>;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  RootComplex(sc_core::sc_module_name name, const RootComplexConfig& config);

  // Requests for [base, base + size), or for buses first..last, go down root port `port`.
  void map(int port, std::uint64_t base, std::uint64_t size);
  void map_buses(int port, int first_bus, int last_bus);
  void add_interrupt_handler(InterruptHandler handler);

  // The ECAM address of a register of a function.
  std::uint64_t ecam_address(int bus, int device, int function, std::uint32_t offset) const;
  // Whether `address` is a configuration request (ECAM): non-posted, unlike memory writes.
  bool is_configuration(std::uint64_t address) const;
  std::uint64_t interrupts() const { return interrupts_; }

 private:
  void cpu_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void device_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void config_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void fire(std::uint32_t tag) override;
  void check_port(int port) const;
  void end_of_elaboration() override;

  RootComplexConfig config_;
  pcie::AddressRouter router_;
  std::vector<InterruptHandler> handlers_;
  struct Message {
    std::uint64_t address;
    std::uint32_t data;
  };
  std::map<std::uint32_t, Message> in_flight_;  // by event-queue tag
  std::uint32_t next_tag_ = 0;
  std::uint64_t interrupts_ = 0;
};

}  // namespace podsim::host
