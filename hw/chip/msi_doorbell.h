// The chip's MSI doorbells: a write to interrupt register i (Gaudi1's PCIE_MSI block) makes the
// PCIe endpoint send MSI-X vector i to the host, at the time the write lands. This is how a
// command buffer's closing MSG_PROT raises the completion interrupt the driver waits for.
// Captures: one register per vector, the write's time, a listener for in-simulator host software.
// Ignores: the written value (any write rings), reads (they return zero), and interrupt moderation.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/event_queue.h"
#include "core/stats.h"
#include "hw/pcie/pcie_endpoint.h"

namespace podsim::chip {

class MsiDoorbell : public sc_core::sc_module, private core::Timed {
 public:
  tlm_utils::simple_target_socket<MsiDoorbell> target_socket;

  // `vectors` registers, 4 bytes apart, each ringing its vector on `endpoint`.
  MsiDoorbell(sc_core::sc_module_name name, int vectors, pcie::PcieEndpoint& endpoint);
  std::uint64_t span() const { return 4 * static_cast<std::uint64_t>(vectors_); }
  // Host software modelled inside the simulator (the collectives and compute launchers) takes
  // its completion interrupts here, when the doorbell rings: it has no driver to route MSI-X to
  // it yet. Every listener hears every vector and keeps to its own.
  void listen(std::function<void(int vector)> listener) {
    listeners_.push_back(std::move(listener));
  }

  struct Stats {
    core::Counter& rung;
  };
  const Stats& stats() const { return stats_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void fire(std::uint32_t vector) override;

  int vectors_;
  pcie::PcieEndpoint& endpoint_;
  std::vector<std::function<void(int)>> listeners_;
  Stats stats_;
};

}  // namespace podsim::chip
