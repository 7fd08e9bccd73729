// One PCIe link between an upstream port (root port or switch downstream port) and a downstream
// one (endpoint or switch upstream port), loosely timed: each direction serializes what it
// carries at the rate the overhead arithmetic gives (pcie_timing.h) and adds the link latency.
// Captures: both directions as separate resources; a write occupies the direction it travels;
// a read occupies its direction with the read requests and the opposite one with completions;
// transfers pipeline through the far side TLP by TLP (the far target sees the first TLP's
// arrival, the initiator the later of the far target's completion and the last TLP's);
// credit and tag limits of pcie_timing.h; PCIe's ordering of posted writes: a request (write or
// read) arriving after a posted write in its direction starts after that write's last TLP, so a
// later doorbell never overtakes an earlier one. Ignores: per-TLP interleaving of transfers that
// overlap in time (each bulk transfer holds its direction for its whole occupancy, in the first
// idle stretch from its arrival long enough for it), relaxed ordering, replays and link errors.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <systemc>
#include <tlm>

#include "core/bandwidth_server.h"
#include "core/stats.h"
#include "core/units.h"
#include "hw/pcie/pcie_config.h"
#include "hw/pcie/pcie_timing.h"

namespace podsim::pcie {

class PcieLink : public sc_core::sc_module {
 public:
  // Requests travelling downstream enter at from_host and leave at to_device; requests from the
  // device (DMA, MSI-X messages) enter at from_device and leave at to_host.
  tlm_utils::simple_target_socket<PcieLink> from_host;
  tlm_utils::simple_initiator_socket<PcieLink> to_device;
  tlm_utils::simple_target_socket<PcieLink> from_device;
  tlm_utils::simple_initiator_socket<PcieLink> to_host;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  PcieLink(sc_core::sc_module_name name, const PcieLinkConfig& config);

  const LinkTiming& timing() const { return timing_; }
  // Time each direction spent carrying TLPs and DLLPs.
  core::TimePs downstream_busy_ps() const { return down_.busy_ps(); }
  core::TimePs upstream_busy_ps() const { return up_.busy_ps(); }

  struct Stats {
    core::Counter& down_bytes;  // payload carried downstream (writes down, completions down)
    core::Counter& up_bytes;
  };
  const Stats& stats() const { return stats_; }

 private:
  // A direction's posted writes as one barrier: a request arriving at or after the latest
  // write's arrival waits until every write so far has left (calls come nearly in arrival order,
  // so one barrier is enough; one out of order is only held behind the writes after it).
  struct PostedWrites {
    core::TimePs arrival = 0, end = 0;
    core::TimePs earliest_start(core::TimePs at) const {
      return at >= arrival ? std::max(at, end) : at;
    }
    void add(core::TimePs at, core::TimePs last_tlp_end) {
      arrival = std::max(arrival, at);
      end = std::max(end, last_tlp_end);
    }
  };
  // The request travels on `request`; completions come back on `response`.
  template <class Socket>
  void carry(Socket& out, core::BandwidthServer& request, PostedWrites& posted,
             core::BandwidthServer& response, core::Counter& request_bytes,
             core::Counter& response_bytes, tlm::tlm_generic_payload& trans,
             sc_core::sc_time& delay);
  void downstream(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void upstream(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  Stats make_stats();

  LinkTiming timing_;
  // Each direction: a transfer takes its first idle stretch long enough from its arrival (calls
  // come in call order, not arrival order, under temporal decoupling).
  core::BandwidthServer down_, up_;
  PostedWrites down_posted_, up_posted_;
  Stats stats_;
};

}  // namespace podsim::pcie
