// What the fabric did in a run, summed over every switch, NIC and link (or the flow network):
// the figures `podsim net` and `podsim collective` report beside their results.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "hw/system/system_model.h"

namespace podsim::sims {

// What the fabric counted, summed over every switch, NIC and link.
struct FabricTotals {
  std::uint64_t packet_hops = 0, drops = 0, pauses_sent = 0, ecn_marks = 0;
  std::uint64_t cnps = 0, retransmitted = 0, timeouts = 0, lost_on_links = 0;
  // Wire bytes per direction of switch-to-switch links: how evenly ECMP spread the load.
  double uplink_mean_bytes = 0, uplink_max_bytes = 0;
  // Flow mode: flows started, and the most that ever shared one direction of a link (1: no
  // two transfers ever contended for a link).
  std::uint64_t flows = 0;
  int peak_link_flows = 0;
  nlohmann::json to_json() const;
};

FabricTotals fabric_totals(system::SystemModel& model);

}  // namespace podsim::sims
