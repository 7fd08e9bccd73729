// A PCIe switch: one upstream port and a few downstream ports, each joined to a PcieLink. It
// routes requests from the host to the downstream port whose address window (or bus range)
// holds them, requests from a device to another device's window (peer to peer) or else up, and
// adds its per-hop latency. An HLS box puts its chips behind such switches under the host
// sockets' root ports.
// Captures: routing by address windows and bus ranges, one cut-through latency per hop,
// unmapped requests answered with an address error (an Unsupported Request). Ignores: the
// switch's internal bandwidth and buffers (the links serialize; a switch fabric is faster than
// its ports), bridge configuration space (windows are set by the code that builds the system)
// and access control services.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/pcie/routing.h"

namespace podsim::pcie {

struct PcieSwitchConfig {
  int downstream_ports = 4;
  core::Duration latency{110000};  // 110 ns

  template <class V>
  void describe(V& v) {
    v.field("downstream_ports", downstream_ports,
            core::Spec("downstream ports; HLS boxes hang two or four chips under each")
                .range(1, 64)
                .source("[S9]: two PCIe Gen4 switches for eight chips"));
    v.field("latency", latency,
            core::Spec("cut-through latency of one hop, ingress port to egress port")
                .min(0)
                .source("placeholder [U]: Gen4 switch datasheets quote 100-150 ns port to port"));
  }
};

class PcieSwitch : public sc_core::sc_module {
 public:
  // The upstream port: requests from the host enter at from_host, the devices' leave at to_host.
  tlm_utils::simple_target_socket<PcieSwitch> from_host;
  tlm_utils::simple_initiator_socket<PcieSwitch> to_host;
  // The downstream ports, in binding order: port i is the i-th binding of each.
  tlm_utils::multi_passthrough_initiator_socket<PcieSwitch> to_device;
  tlm_utils::multi_passthrough_target_socket<PcieSwitch> from_device;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  PcieSwitch(sc_core::sc_module_name name, const PcieSwitchConfig& config);

  // Requests for [base, base + size), or for buses first..last, go to downstream port `port`.
  void map(int port, std::uint64_t base, std::uint64_t size);
  void map_buses(int port, int first_bus, int last_bus);

 private:
  void from_host_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void from_device_transport(int port, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void check_port(int port) const;
  void end_of_elaboration() override;

  PcieSwitchConfig config_;
  AddressRouter router_;
};

}  // namespace podsim::pcie
