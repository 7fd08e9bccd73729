#include "hw/system/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "hw/fabric/switch.h"

namespace podsim::system {
namespace {

// Collects the graph while it is built, and the first problem found.
class Builder {
 public:
  Builder(const SystemConfig& s, const core::ConfigNode* tree) : s_(s), tree_(tree) {}

  Topology build() {
    add_chips();
    wire_boxes();
    switch (s_.network.kind) {
      case NetworkKind::kNone:
        break;
      case NetworkKind::kLeafSpine:
        build_leaf_spine();
        break;
      case NetworkKind::kFatTree:
        build_fat_tree();
        break;
    }
    check_switch_ports();
    check_switch_configs();
    compute_routes();
    return std::move(t_);
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    std::vector<core::Diagnostic> diagnostics;
    core::ConfigChecks checks(tree_, tree_ ? &diagnostics : nullptr);
    checks.fail(key, message);  // throws std::invalid_argument without a tree
    throw core::ConfigError(std::move(diagnostics));
  }

  int add_node(TopologyNode node) {
    t_.link_of_port.emplace_back(static_cast<std::size_t>(node.ports), -1);
    t_.endpoint_of_port.emplace_back();
    t_.nodes.push_back(std::move(node));
    return static_cast<int>(t_.nodes.size() - 1);
  }

  void connect(PortRef a, PortRef b, core::Bandwidth rate, const fabric::CableConfig& cable) {
    for (const PortRef p : {a, b}) {
      if (t_.link_of_port[p.node][p.port] != -1) {
        fail("network", fmt::format("port {} of {} is wired twice", p.port, t_.nodes[p.node].name));
      }
      t_.link_of_port[p.node][p.port] = static_cast<int>(t_.links.size());
    }
    fabric::LinkConfig config;
    config.rate = rate;
    config.cable = cable;
    config.seed = t_.links.size() + 1;
    t_.links.push_back({a, b, config});
  }

  void add_chips() {
    const auto& nic = s_.chip.nic;
    t_.chips = s_.chips();
    t_.chips_per_box_ = s_.box.chips;
    t_.scale_up_ports_ = s_.scale_up_ports_per_chip();
    t_.links_per_peer_ = s_.box.links_per_peer;
    t_.ladder_ = s_.box.wiring == BoxWiring::kLadder;
    t_.ladder_config_ = s_.box.ladder;
    for (int chip = 0; chip < t_.chips; ++chip) {
      TopologyNode node{TopologyNode::Kind::kNic,
                        fmt::format("box{}.chip{}.nic", chip / s_.box.chips, chip % s_.box.chips),
                        nic.ports,
                        chip,
                        0,
                        nic.port_speed};
      const int id = add_node(std::move(node));
      t_.nic_node_of_chip_.push_back(id);
      auto& addresses = t_.endpoint_of_port[static_cast<std::size_t>(id)];
      for (int port = 0; port < nic.ports; ++port) {
        addresses.push_back(static_cast<fabric::EndpointId>(t_.endpoints.size()));
        t_.endpoints.push_back({id, port});
      }
    }
  }

  void wire_boxes() {
    if (s_.box.wiring == BoxWiring::kLadder) return wire_ladders();
    if (s_.box.wiring != BoxWiring::kAllToAll) return;
    const int n = s_.box.chips;
    for (int box = 0; box < s_.boxes; ++box) {
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          for (int k = 0; k < s_.box.links_per_peer; ++k) {
            const int a = box * n + i, b = box * n + j;
            connect({t_.nic_of_chip(a), t_.direct_port(a, b, k)},
                    {t_.nic_of_chip(b), t_.direct_port(b, a, k)}, s_.chip.nic.port_speed,
                    s_.box.cable);
          }
        }
      }
    }
  }

  // Each box's IPU-Links: every linked pair of its ladder, each of the pair's parallel links.
  void wire_ladders() {
    std::vector<ipulink::IpuLink> pairs;
    try {
      pairs = ipulink::ladder_links(s_.box.ladder);
    } catch (const std::invalid_argument& e) {
      fail("box.ladder", e.what());
    }
    const int n = s_.box.chips;
    for (int box = 0; box < s_.boxes; ++box) {
      for (const ipulink::IpuLink& pair : pairs) {
        const int a = box * n + pair.a, b = box * n + pair.b;
        for (int k = 0; k < pair.links; ++k) {
          connect({t_.nic_of_chip(a), t_.direct_port(a, b, k)},
                  {t_.nic_of_chip(b), t_.direct_port(b, a, k)}, s_.chip.nic.port_speed,
                  s_.box.cable);
        }
      }
    }
  }

  core::Bandwidth uplink_rate() const { return s_.uplink_rate(); }

  int add_switch(const std::string& name, int ports, int tier) {
    ++t_.switches;
    return add_node({TopologyNode::Kind::kSwitch, name, ports, -1, tier, uplink_rate()});
  }

  void build_leaf_spine() {
    const auto& net = s_.network;
    const int chips = t_.chips, down = net.leaf_down_ports, up = net.leaf_up_ports;
    if (down <= 0) fail("network.leaf_down_ports", "a leaf-spine network needs leaf down ports");
    if (chips % down != 0) {
      fail("network.leaf_down_ports",
           fmt::format("{} chips per rail do not fill leaves of {} ports: the last leaf would have "
                       "{} unwired ports; use a divisor of {}",
                       chips, down, down - chips % down, chips));
    }
    const int leaves = chips / down;
    if (up == 0 && leaves > 1) {
      fail("network.leaf_up_ports",
           fmt::format("{} leaves per rail need uplinks to reach each other (or use leaves of {} "
                       "ports)",
                       leaves, chips));
    }
    int spines = 0, links_per_pair = 0;
    if (up > 0) {
      if (net.spine_ports <= 0) fail("network.spine_ports", "leaf uplinks need spine switches");
      if ((leaves * up) % net.spine_ports != 0) {
        fail("network.spine_ports",
             fmt::format("{} leaves x {} uplinks per rail cannot fill spines of {} ports", leaves,
                         up, net.spine_ports));
      }
      spines = leaves * up / net.spine_ports;
      if (up % spines != 0) {
        fail("network.leaf_up_ports",
             fmt::format("{} uplinks per leaf do not spread evenly over {} spines", up, spines));
      }
      links_per_pair = up / spines;
    }
    for (int rail = 0; rail < s_.scale_out.ports_per_chip; ++rail) {
      std::vector<int> leaf_nodes, spine_nodes;
      for (int l = 0; l < leaves; ++l) {
        leaf_nodes.push_back(add_switch(fmt::format("rail{}.leaf{}", rail, l), down + up, 0));
      }
      for (int sp = 0; sp < spines; ++sp) {
        spine_nodes.push_back(
            add_switch(fmt::format("rail{}.spine{}", rail, sp), net.spine_ports, 1));
      }
      for (int chip = 0; chip < chips; ++chip) {
        connect({t_.nic_of_chip(chip), t_.scale_out_port(rail)},
                {leaf_nodes[static_cast<std::size_t>(chip / down)], chip % down},
                s_.scale_out_rate(), net.endpoint_cable);
      }
      for (int l = 0; l < leaves; ++l) {
        for (int sp = 0; sp < spines; ++sp) {
          for (int k = 0; k < links_per_pair; ++k) {
            connect({leaf_nodes[static_cast<std::size_t>(l)], down + sp * links_per_pair + k},
                    {spine_nodes[static_cast<std::size_t>(sp)], l * links_per_pair + k},
                    uplink_rate(), net.switch_cable);
          }
        }
      }
    }
  }

  // k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores; k^3/4 endpoint ports, taken
  // from every chip's scale-out ports in chip order.
  void build_fat_tree() {
    const int k = s_.network.fat_tree_k, half = k / 2;
    if (k < 2 || k % 2 != 0) fail("network.fat_tree_k", "must be an even number of at least 2");
    const int hosts = k * k * k / 4;
    const int ports = t_.chips * s_.scale_out.ports_per_chip;
    if (ports != hosts) {
      fail("network.fat_tree_k",
           fmt::format("a k={} fat tree has {} host ports but the system has {} scale-out ports", k,
                       hosts, ports));
    }
    std::vector<int> edges, aggs, cores;
    for (int pod = 0; pod < k; ++pod) {
      for (int i = 0; i < half; ++i)
        edges.push_back(add_switch(fmt::format("pod{}.edge{}", pod, i), k, 0));
      for (int i = 0; i < half; ++i)
        aggs.push_back(add_switch(fmt::format("pod{}.agg{}", pod, i), k, 1));
    }
    for (int i = 0; i < half * half; ++i)
      cores.push_back(add_switch(fmt::format("core{}", i), k, 2));
    const auto& net = s_.network;
    for (int h = 0; h < hosts; ++h) {
      const int chip = h / s_.scale_out.ports_per_chip, rail = h % s_.scale_out.ports_per_chip;
      connect({t_.nic_of_chip(chip), t_.scale_out_port(rail)},
              {edges[static_cast<std::size_t>(h / half)], h % half}, s_.scale_out_rate(),
              net.endpoint_cable);
    }
    for (int pod = 0; pod < k; ++pod) {
      for (int e = 0; e < half; ++e) {
        for (int a = 0; a < half; ++a) {
          connect({edges[static_cast<std::size_t>(pod * half + e)], half + a},
                  {aggs[static_cast<std::size_t>(pod * half + a)], e}, uplink_rate(),
                  net.switch_cable);
        }
      }
      for (int a = 0; a < half; ++a) {
        for (int c = 0; c < half; ++c) {
          connect({aggs[static_cast<std::size_t>(pod * half + a)], half + c},
                  {cores[static_cast<std::size_t>(a * half + c)], pod}, uplink_rate(),
                  net.switch_cable);
        }
      }
    }
  }

  void check_switch_ports() const {
    for (std::size_t n = 0; n < t_.nodes.size(); ++n) {
      if (t_.nodes[n].kind != TopologyNode::Kind::kSwitch) continue;
      const auto& wired = t_.link_of_port[n];
      const auto open = std::count(wired.begin(), wired.end(), -1);
      if (open > 0) {
        fail("network", fmt::format("switch {} has {} unwired ports", t_.nodes[n].name, open));
      }
    }
  }

  // Each switch's parameters hold for its own port count (the buffer must cover every port's
  // PFC reserve and headroom).
  void check_switch_configs() const {
    std::vector<int> checked;
    for (const auto& node : t_.nodes) {
      if (node.kind != TopologyNode::Kind::kSwitch) continue;
      if (std::find(checked.begin(), checked.end(), node.ports) != checked.end()) continue;
      checked.push_back(node.ports);
      fabric::SwitchConfig sw = s_.network.switch_config;
      sw.ports = node.ports;
      try {
        core::validate_config(sw);
      } catch (const std::invalid_argument& e) {
        fail("network.switch",
             fmt::format("for switch {} with {} ports: {}", node.name, node.ports, e.what()));
      }
    }
  }

  // Shortest paths through the switches: a destination's candidates at a switch are the ports
  // whose neighbor is one hop closer to the leaf the destination hangs from. Destinations on one
  // leaf share their candidates, so each (switch, leaf) pair is computed once.
  void compute_routes() {
    t_.routes.assign(t_.nodes.size(), fabric::RouteTable());
    if (t_.switches == 0) return;
    for (std::size_t n = 0; n < t_.nodes.size(); ++n) {
      if (t_.nodes[n].kind == TopologyNode::Kind::kSwitch) {
        t_.routes[n] = fabric::RouteTable(t_.endpoints.size());
      }
    }
    // Endpoints grouped by the switch (and port) they hang from.
    std::vector<std::vector<std::pair<fabric::EndpointId, int>>> attached(t_.nodes.size());
    for (fabric::EndpointId id = 0; id < t_.endpoints.size(); ++id) {
      const PortRef nic = t_.endpoints[id];
      if (t_.link_of_port[nic.node][nic.port] < 0) continue;
      const PortRef other = t_.peer(nic);
      if (t_.nodes[other.node].kind == TopologyNode::Kind::kSwitch) {
        attached[other.node].push_back({id, other.port});
      }
    }
    for (std::size_t leaf = 0; leaf < t_.nodes.size(); ++leaf) {
      if (attached[leaf].empty()) continue;
      const auto distance = switch_distances(static_cast<int>(leaf));
      for (const auto& [id, port] : attached[leaf]) {
        t_.routes[leaf].set(id, {static_cast<std::uint16_t>(port)});
      }
      for (std::size_t sw = 0; sw < t_.nodes.size(); ++sw) {
        if (sw == leaf || distance[sw] <= 0) continue;
        std::vector<std::uint16_t> ports;
        for (int p = 0; p < t_.nodes[sw].ports; ++p) {
          const int link = t_.link_of_port[sw][static_cast<std::size_t>(p)];
          if (link < 0) continue;
          const PortRef next = t_.peer({static_cast<int>(sw), p});
          if (distance[static_cast<std::size_t>(next.node)] == distance[sw] - 1) {
            ports.push_back(static_cast<std::uint16_t>(p));
          }
        }
        if (ports.empty()) continue;
        const auto group = t_.routes[sw].add_group(std::move(ports));
        for (const auto& [id, port] : attached[leaf]) t_.routes[sw].set_group(id, group);
      }
    }
    for (auto& table : t_.routes) table.seal();
  }

  // Hops from `leaf` to every switch over switch-to-switch links; -1 when unreachable.
  std::vector<int> switch_distances(int leaf) const {
    std::vector<int> distance(t_.nodes.size(), -1);
    std::deque<int> queue{leaf};
    distance[static_cast<std::size_t>(leaf)] = 0;
    while (!queue.empty()) {
      const int n = queue.front();
      queue.pop_front();
      for (int p = 0; p < t_.nodes[static_cast<std::size_t>(n)].ports; ++p) {
        if (t_.link_of_port[static_cast<std::size_t>(n)][static_cast<std::size_t>(p)] < 0) continue;
        const PortRef next = t_.peer({n, p});
        if (t_.nodes[static_cast<std::size_t>(next.node)].kind != TopologyNode::Kind::kSwitch ||
            distance[static_cast<std::size_t>(next.node)] >= 0) {
          continue;
        }
        distance[static_cast<std::size_t>(next.node)] = distance[static_cast<std::size_t>(n)] + 1;
        queue.push_back(next.node);
      }
    }
    return distance;
  }

  const SystemConfig& s_;
  const core::ConfigNode* tree_;
  Topology t_;
};

}  // namespace

PortRef Topology::peer(PortRef p) const {
  const auto& link = links[static_cast<std::size_t>(
      link_of_port[static_cast<std::size_t>(p.node)][static_cast<std::size_t>(p.port)])];
  return link.a == p ? link.b : link.a;
}

int Topology::direct_port(int chip, int peer_chip, int k) const {
  const int self = chip % chips_per_box_, peer = peer_chip % chips_per_box_;
  if (ladder_) {
    // Ports: the rung's links, then those to the rung above, then those to the rung below.
    const ipulink::Ladder& l = ladder_config_;
    if (peer == (self ^ 1)) return k;
    const int rung = self / 2, other = peer / 2;
    const bool up = other == rung + 1 || (l.torus && rung == l.rungs - 1 && other == 0);
    return l.links_per_rung + (up ? 0 : l.links_per_column_neighbour) + k;
  }
  const int index = peer < self ? peer : peer - 1;
  return index * links_per_peer_ + k;
}

int direct_links(const SystemConfig& s, int a, int b) {
  if (a == b || a / s.box.chips != b / s.box.chips) return 0;
  switch (s.box.wiring) {
    case BoxWiring::kAllToAll:
      return s.box.links_per_peer;
    case BoxWiring::kLadder:
      return ipulink::links_between(s.box.ladder, a % s.box.chips, b % s.box.chips);
    case BoxWiring::kNone:
      break;
  }
  return 0;
}

std::pair<int, int> ports_between(const Topology& t, const SystemConfig& s, int a, int b,
                                  int lane) {
  if (const int links = direct_links(s, a, b); links > 0) {
    const int k = lane % links;
    return {t.direct_port(a, b, k), t.direct_port(b, a, k)};
  }
  if (s.network.kind == NetworkKind::kNone || s.scale_out.ports_per_chip == 0) {
    throw std::invalid_argument("chips " + std::to_string(a) + " and " + std::to_string(b) +
                                " are not connected: no link of their box joins them and the "
                                "system has no scale-out network");
  }
  const int rail = lane % s.scale_out.ports_per_chip;
  return {t.scale_out_port(rail), t.scale_out_port(rail)};
}

Topology build_topology(const SystemConfig& system, const core::ConfigNode* tree) {
  return Builder(system, tree).build();
}

std::uint64_t component_seed(std::uint64_t run_seed, std::uint64_t salt, std::uint64_t index) {
  return core::Random::mix(core::Random::mix(run_seed ^ (salt << 56)) + index);
}

std::uint64_t switch_ecmp_seed(std::uint64_t run_seed, int node) {
  return component_seed(run_seed, 1, static_cast<std::uint64_t>(node));
}

std::vector<int> flow_links(const Topology& t, PortRef from, const FlowTuple& flow,
                            std::uint64_t run_seed) {
  const auto at = [](auto& v, int i) -> auto& { return v[static_cast<std::size_t>(i)]; };
  std::vector<int> path;
  PortRef out = from;
  // A shortest path never visits a node twice; more hops than nodes means a loop.
  for (std::size_t hop = 0; hop <= t.nodes.size(); ++hop) {
    const int link = at(at(t.link_of_port, out.node), out.port);
    if (link < 0) {
      throw std::invalid_argument(fmt::format("flow from {} port {}: the port is not wired",
                                              at(t.nodes, out.node).name, out.port));
    }
    path.push_back(2 * link + (at(t.links, link).a == out ? 0 : 1));
    const PortRef in = t.peer(out);
    const TopologyNode& node = at(t.nodes, in.node);
    if (node.kind == TopologyNode::Kind::kNic) {
      if (at(at(t.endpoint_of_port, in.node), in.port) == flow.dst) return path;
      throw std::invalid_argument(
          fmt::format("flow to endpoint {}: arrived at {} instead", flow.dst, node.name));
    }
    const fabric::RouteTable::Group group = at(t.routes, in.node).lookup(flow.dst);
    if (group.count == 0) {
      throw std::invalid_argument(
          fmt::format("flow to endpoint {}: {} has no route", flow.dst, node.name));
    }
    const std::uint64_t hash = fabric::flow_hash(
        fabric::ipv4_of(flow.src), fabric::ipv4_of(flow.dst), flow.udp_source,
        fabric::kRoceV2UdpPort, fabric::kIpProtocolUdp, switch_ecmp_seed(run_seed, in.node));
    out = {in.node, group.ports[group.count == 1 ? 0 : fabric::ecmp_member(hash, group.count)]};
  }
  throw std::invalid_argument(fmt::format("flow to endpoint {}: the route loops", flow.dst));
}

}  // namespace podsim::system
