#include "sims/fabric_totals.h"

#include <algorithm>
#include <cmath>

namespace podsim::sims {
namespace {

void add_uplink_load(system::SystemModel& model, FabricTotals& t) {
  using Kind = system::TopologyNode::Kind;
  const auto& topo = model.topology();
  std::uint64_t total = 0, count = 0, most = 0;
  for (std::size_t i = 0; i < topo.links.size(); ++i) {
    const auto& l = topo.links[i];
    if (topo.nodes[static_cast<std::size_t>(l.a.node)].kind != Kind::kSwitch ||
        topo.nodes[static_cast<std::size_t>(l.b.node)].kind != Kind::kSwitch) {
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const auto bytes =
          static_cast<std::uint64_t>(std::llround(model.link_bytes(static_cast<int>(i), side)));
      total += bytes;
      most = std::max(most, bytes);
      ++count;
    }
  }
  t.uplink_mean_bytes = count ? static_cast<double>(total) / static_cast<double>(count) : 0;
  t.uplink_max_bytes = static_cast<double>(most);
}

}  // namespace

FabricTotals fabric_totals(system::SystemModel& model) {
  FabricTotals t;
  for (std::size_t i = 0; i < model.links(); ++i) {
    for (int side = 0; side < 2; ++side) {
      const auto& s = model.link(static_cast<int>(i)).stats(side);
      t.packet_hops += s.frames->value();
      t.lost_on_links += s.lost->value() + s.corrupted->value();
    }
  }
  for (std::size_t n = 0; n < model.topology().nodes.size(); ++n) {
    auto* sw = model.switch_of_node(static_cast<int>(n));
    if (!sw) continue;
    for (int p = 0; p < sw->ports(); ++p) {
      const auto& s = sw->port_stats(p);
      t.drops += s.drops_buffer->value() + s.drops_no_route->value() + s.drops_headroom->value();
      t.pauses_sent += s.pfc_pause_sent->value();
      t.ecn_marks += s.ecn_marks->value();
    }
  }
  for (int c = 0; c < model.chips(); ++c) {
    auto& nic = model.nic(c);
    for (int p = 0; p < nic.ports(); ++p) {
      const auto& s = nic.port_stats(p);
      t.cnps += s.cnps_sent->value();
      t.retransmitted += s.retransmitted_packets->value();
      t.timeouts += s.timeouts->value();
    }
  }
  add_uplink_load(model, t);
  if (auto* flows = model.flow_network()) {
    t.flows = flows->flows_started();
    t.peak_link_flows = flows->peak_link_flows();
  }
  return t;
}

nlohmann::json FabricTotals::to_json() const {
  nlohmann::json j = {{"packet_hops", packet_hops},
                      {"drops", drops},
                      {"pause_frames", pauses_sent},
                      {"ecn_marks", ecn_marks},
                      {"cnps", cnps},
                      {"retransmitted", retransmitted},
                      {"timeouts", timeouts},
                      {"lost_on_links", lost_on_links},
                      {"uplink_mean_bytes", uplink_mean_bytes},
                      {"uplink_max_bytes", uplink_max_bytes}};
  if (flows > 0) {
    j["flows"] = flows;
    j["peak_link_flows"] = peak_link_flows;
  }
  return j;
}

}  // namespace podsim::sims
