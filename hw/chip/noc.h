// The chip's interconnect as its initiators see it: every engine (NIC, DMA engines and
// their QMANs, the PCIe endpoint) binds to one target socket, and each access goes to the
// block the chip's address map names, with the address made relative to that block.
// Captures: routing by the address map for timed and debug transport, an address error (and a
// count of them) for an access outside the map or across two regions, and per port (region)
// the timed accesses and bytes that went to it. Ignores, for now: the
// NoC's own latency, per-port bandwidth and arbitration (the blocks behind it are the only
// limits until the NoC model lands; docs/chip.md).
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/chip/address_map.h"
#include "hw/core/stats.h"

namespace podsim::chip {

class Noc : public sc_core::sc_module {
 public:
  // Initiators bind here.
  tlm_utils::multi_passthrough_target_socket<Noc> target_socket;
  // Bound to the blocks, in the order of their regions' ports.
  tlm_utils::multi_passthrough_initiator_socket<Noc> initiator_socket;

  Noc(sc_core::sc_module_name name, AddressMap map);

  const AddressMap& address_map() const { return map_; }
  // Moves bytes outside simulated time, as a host loader or checker does; returns the bytes
  // moved (0 when the range is outside the map or the block keeps no contents).
  unsigned int debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                     unsigned int length);

  struct Stats {
    core::Counter& address_errors;
  };
  const Stats& stats() const { return stats_; }
  struct PortStats {
    core::Counter& accesses;
    core::Counter& bytes;
  };
  // By port: the region with that port in the address map.
  const PortStats& port_stats(int port) const { return ports_.at(static_cast<std::size_t>(port)); }

 private:
  void b_transport(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(int from, tlm::tlm_generic_payload& trans);

  AddressMap map_;
  Stats stats_;
  std::vector<PortStats> ports_;
};

}  // namespace podsim::chip
