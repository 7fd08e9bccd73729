// The chip's PCIe endpoint: the function the host enumerates, the door through which the host
// reaches chip memory and registers, and the bus master the chip's engines use to reach host
// memory and to signal interrupts.
// Captures: configuration requests served by ConfigSpace (ids, BAR sizing, command bits,
// MSI-X capability); memory requests decoded by the BARs and translated by inbound windows to
// chip addresses on to_chip, or served by the MSI-X table and PBA; bus-master DMA from the chip
// (from_chip, host physical addresses) forwarded upstream only while the command register
// allows it; raise(vector) sending the programmed MSI-X message as a posted write upstream, or
// setting its pending bit while the vector or the function is masked (sent once unmasked).
// Ignores: address translation services, relaxed ordering and no-snoop attributes, function
// level reset, and the endpoint's own pipeline latency (the link's latency covers both ends).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

#include "core/stats.h"
#include "hw/pcie/config_space.h"
#include "hw/pcie/endpoint_config.h"
#include "hw/pcie/routing.h"

namespace podsim::pcie {

class PcieEndpoint : public sc_core::sc_module {
 public:
  // Host side: requests arriving over the link, and requests the endpoint sends upstream.
  tlm_utils::simple_target_socket<PcieEndpoint> from_host;
  tlm_utils::simple_initiator_socket<PcieEndpoint> to_host;
  // Chip side: BAR accesses translated to chip addresses, and the engines' DMA toward the host.
  tlm_utils::simple_initiator_socket<PcieEndpoint> to_chip;
  tlm_utils::multi_passthrough_target_socket<PcieEndpoint> from_chip;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  PcieEndpoint(sc_core::sc_module_name name, const PcieEndpointConfig& config);

  // Signals MSI-X vector `vector` now (from an event-queue callback or a thread). Returns false
  // when the message stays pending (MSI-X disabled, function or vector masked) or the host
  // rejected it. Throws std::invalid_argument for a vector beyond the table.
  bool raise(int vector);

  const ConfigSpace& config_space() const { return config_space_; }
  const MsixTable& msix() const { return msix_; }

  struct Stats {
    core::Counter& bar_accesses;
    core::Counter& dma_transfers;
    core::Counter& interrupts;
  };
  const Stats& stats() const { return stats_; }

 private:
  void host_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void chip_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void config_access(tlm::tlm_generic_payload& trans, core::TimePs at);
  // MSI-X table or PBA accesses; false when the BAR offset holds neither.
  bool msix_access(const ConfigSpace::BarHit& hit, tlm::tlm_generic_payload& trans,
                   core::TimePs at);
  void forward_to_chip(const ConfigSpace::BarHit& hit, tlm::tlm_generic_payload& trans,
                       sc_core::sc_time& delay);
  bool send_message(int vector, core::TimePs at);
  // Sends the messages of vectors no longer masked, at `at`.
  void flush_pending(core::TimePs at);
  Stats make_stats();

  PcieEndpointConfig config_;
  ConfigSpace config_space_;
  MsixTable msix_;
  Stats stats_;
};

}  // namespace podsim::pcie
