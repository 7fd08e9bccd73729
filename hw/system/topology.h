// The wiring of a whole system as a plain graph: every NIC port and switch port, every link
// between them, the endpoint address of each NIC port, and each switch's forwarding table.
// Captures boxes wired all-to-all, scale-out ports into rail-aligned leaf switches, an optional
// spine tier per rail, and k-ary fat trees; checks that every port the description asks for is
// wired exactly once. Ignores the SystemC side: elaborate.h turns this graph into modules, so
// the arithmetic here (port numbering, routing) is tested without the kernel.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/fabric/link.h"
#include "hw/fabric/packet.h"
#include "hw/fabric/route_table.h"
#include "hw/ipulink/ipu_wiring.h"
#include "hw/system/system_config.h"

namespace podsim::system {

struct TopologyNode {
  enum class Kind { kNic, kSwitch };
  Kind kind = Kind::kNic;
  std::string name;  // hierarchical, e.g. "box3.chip5.nic", "rail1.leaf2"
  int ports = 0;
  int chip = -1;  // for NICs: the chip's global index
  int tier = 0;   // for switches: 0 leaf (or edge), 1 spine (or aggregation), 2 core
  core::Bandwidth port_speed;
};

struct PortRef {
  int node = -1;
  int port = -1;
  friend bool operator==(PortRef a, PortRef b) { return a.node == b.node && a.port == b.port; }
};

struct TopologyLink {
  PortRef a, b;
  fabric::LinkConfig config;
};

struct Topology {
  std::vector<TopologyNode> nodes;
  std::vector<TopologyLink> links;
  // For each node, for each port: the link on it (-1 when unwired).
  std::vector<std::vector<int>> link_of_port;
  // Endpoint addresses: endpoints[id] is the NIC port with that address.
  std::vector<PortRef> endpoints;
  // For each node, the endpoint id of each of its ports (NICs only).
  std::vector<std::vector<fabric::EndpointId>> endpoint_of_port;
  // One forwarding table per switch node (empty for NICs), indexed like `nodes`.
  std::vector<fabric::RouteTable> routes;

  int chips = 0;
  int switches = 0;

  // The port at the other end of a wired port.
  PortRef peer(PortRef p) const;
  // The NIC node of a chip (chips have one NIC node holding all of their ports).
  int nic_of_chip(int chip) const { return nic_node_of_chip_[static_cast<std::size_t>(chip)]; }
  // Scale-up port of `chip` that leads directly to `peer_chip` (link `k` of the pair's: of
  // links_per_peer all-to-all; of a ladder's rung or column links).
  int direct_port(int chip, int peer_chip, int k) const;
  // Scale-out port `rail` of a chip (0-based).
  int scale_out_port(int rail) const { return scale_up_ports_ + rail; }

  std::vector<int> nic_node_of_chip_;
  int scale_up_ports_ = 0;
  int links_per_peer_ = 0;
  int chips_per_box_ = 0;
  bool ladder_ = false;  // the box is a ladder (else all-to-all)
  ipulink::Ladder ladder_config_;
};

// The ports a transfer from chip `a` to chip `b` leaves and arrives on: direct in-box link
// `lane % links` when a box's links join them (all-to-all, or neighbours of a ladder), else each
// chip's scale-out port `lane % scale-out ports` (one rail). Throws std::invalid_argument when
// nothing joins them.
std::pair<int, int> ports_between(const Topology& t, const SystemConfig& s, int a, int b, int lane);
// The box's direct links between chips `a` and `b` (0: none; they are in other boxes, or not
// neighbours in a ladder).
int direct_links(const SystemConfig& s, int a, int b);
// True when a direct link joins chips `a` and `b`.
inline bool directly_linked(const SystemConfig& s, int a, int b) {
  return direct_links(s, a, b) > 0;
}

// Builds and checks the graph; throws core::ConfigError naming the key at fault when the
// description cannot be wired (ports left over, too few switch ports, uneven spine spread).
Topology build_topology(const SystemConfig& system, const core::ConfigNode* tree = nullptr);

// Independent random streams per component of a run: the run seed mixed with a salt (one per
// kind of component) and the component's index.
std::uint64_t component_seed(std::uint64_t run_seed, std::uint64_t salt, std::uint64_t index);
// The ECMP seed SystemModel gives switch node `node`: switches with different seeds split the
// same flows differently.
std::uint64_t switch_ecmp_seed(std::uint64_t run_seed, int node);

// What a switch hashes to choose among equal-cost ports: a RoCE flow's endpoints and its UDP
// source port (the QP's entropy).
struct FlowTuple {
  fabric::EndpointId src = 0, dst = 0;
  std::uint16_t udp_source = 0;
};

// The links, in order, that a flow's packets cross from NIC port `from` to its destination, each
// as a direction: 2 x link index, plus 1 when crossed from its `b` end to its `a` end. As
// the switches forward them: each switch's table, the member of an equal-cost group chosen by
// the flow's hash under the switch's seed. For the flow-level network, which must take the
// packets' paths. Throws std::invalid_argument when `from` is unwired, the destination is not
// reachable, or the walk does not end.
std::vector<int> flow_links(const Topology& t, PortRef from, const FlowTuple& flow,
                            std::uint64_t run_seed);

}  // namespace podsim::system
