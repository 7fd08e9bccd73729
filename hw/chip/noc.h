// The chip's interconnect as its initiators see it: every engine (NIC, DMA engines and
// their QMANs, the PCIe endpoint) binds to one target socket, and each access goes to the
// block the chip's address map names, with the address made relative to that block.
// Captures: translation of virtual addresses by the MMU (mmu.h), when the chip has one; routing by
// the address map for timed and debug transport, an address error (and a
// count of them) for an access outside the map or across two regions, a traversal latency on
// every timed access, and a port per initiator and per target (region), each optionally limited
// to a bandwidth: a transfer holds its initiator's port and then its target's, each served in
// arrival order, so engines sharing a port or a block queue behind each other (contention shows
// up as time). Per port: timed accesses and bytes.
// Ignores: the topology inside (hops, links, routing; one latency for every pair), credit flow
// control, and finer arbitration than arrival order (transfers are at most a DMA burst or a
// packet long, so arrival order interleaves engines at that grain); docs/chip.md.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/bandwidth_server.h"
#include "core/config_binding.h"
#include "core/stats.h"
#include "core/units.h"
#include "hw/chip/address_map.h"
#include "hw/chip/mmu.h"

namespace podsim::chip {

struct NocConfig {
  core::Duration latency{10000};
  core::Bandwidth initiator_port{};  // 0: as fast as the engine
  core::Bandwidth target_port{};     // 0: as fast as the block

  template <class V>
  void describe(V& v) {
    v.field("latency", latency,
            core::Spec("added to every timed access: request and response traversal")
                .min(0)
                .source("[U] not published; a few hops of an on-die network at 1-2 GHz"));
    v.field("initiator_port", initiator_port,
            core::Spec("bandwidth of each engine's port into the NoC (0: no limit beyond the "
                       "engine's own rate)")
                .min(0)
                .source("[U] not published"));
    v.field("target_port", target_port,
            core::Spec("bandwidth of each block's port out of the NoC (0: no limit beyond the "
                       "block's own rate)")
                .min(0)
                .source("[U] not published"));
  }
};

class Noc : public sc_core::sc_module {
 public:
  // Initiators bind here, through connect().
  tlm_utils::multi_passthrough_target_socket<Noc> target_socket;
  // Bound to the blocks, in the order of their regions' ports.
  tlm_utils::multi_passthrough_initiator_socket<Noc> initiator_socket;

  // Throws std::invalid_argument naming the key on a bad configuration.
  Noc(sc_core::sc_module_name name, const NocConfig& config, AddressMap map);

  // Binds an engine's initiator socket and gives it a port named `port` (for its statistics); an
  // initiator bound to target_socket directly gets "initiator<index>".
  template <class Socket>
  void connect(const std::string& port, Socket& socket) {
    socket.bind(target_socket);
    initiators_.push_back(make_port(port));
  }

  const AddressMap& address_map() const { return map_; }
  // Engines' accesses to the MMU's virtual range go through `mmu` first (docs/chip.md).
  void set_mmu(Mmu* mmu) { mmu_ = mmu; }
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
  const PortStats& port_stats(int port) const {
    return ports_.at(static_cast<std::size_t>(port)).stats;
  }
  // By initiator, in the order connect() gave them ports.
  const PortStats& initiator_stats(int from) const {
    return initiators_.at(static_cast<std::size_t>(from)).stats;
  }

 private:
  void end_of_elaboration() override;
  void b_transport(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void route(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void translate(int from, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(int from, tlm::tlm_generic_payload& trans);

  struct Port {
    PortStats stats;
    std::optional<core::BandwidthServer> server;  // none: no limit of its own
  };
  struct Crossing {
    core::TimePs start, end;
  };
  Port make_port(const std::string& name, bool target = false);
  static Crossing pass(Port& port, core::TimePs arrival, unsigned int bytes);

  NocConfig config_;
  AddressMap map_;
  Stats stats_;
  std::vector<Port> ports_;       // targets, by region port
  std::vector<Port> initiators_;  // by target-socket index
  Mmu* mmu_ = nullptr;
};

}  // namespace podsim::chip
