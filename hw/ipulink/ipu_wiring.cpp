#include "hw/ipulink/ipu_wiring.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace podsim::ipulink {

namespace {

bool is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Sums parallel links per pair, so a pair listed twice is still one entry.
std::map<std::pair<int, int>, int> link_map(const Ladder& ladder) {
  core::validate_config(ladder);
  std::map<std::pair<int, int>, int> pairs;
  const auto add = [&](int a, int b, int links) {
    if (links > 0) pairs[{std::min(a, b), std::max(a, b)}] += links;
  };
  const int r = ladder.rungs;
  for (int rung = 0; rung < r; ++rung) {
    add(2 * rung, 2 * rung + 1, ladder.links_per_rung);
    if (rung + 1 < r) {
      add(2 * rung, 2 * rung + 2, ladder.links_per_column_neighbour);
      add(2 * rung + 1, 2 * rung + 3, ladder.links_per_column_neighbour);
    }
  }
  if (ladder.torus) {
    add(2 * (r - 1), 0, ladder.links_per_column_neighbour);
    add(2 * (r - 1) + 1, 1, ladder.links_per_column_neighbour);
  }
  return pairs;
}

void require_ipu(const Ladder& ladder, int ipu, const char* what) {
  if (ipu < 0 || ipu >= ladder.ipus()) {
    throw std::invalid_argument(std::string(what) + ": IPU " + std::to_string(ipu) +
                                " is not in a ladder of " + std::to_string(ladder.ipus()) +
                                " IPUs");
  }
}

}  // namespace

Ladder pod16_ladder() {
  Ladder l;
  l.rungs = 8;
  l.torus = false;
  return l;
}

Ladder pod64_ladder() {
  Ladder l;
  l.rungs = 32;
  l.torus = true;
  return l;
}

std::vector<IpuLink> ladder_links(const Ladder& ladder) {
  std::vector<IpuLink> out;
  for (const auto& [pair, links] : link_map(ladder))
    out.push_back({pair.first, pair.second, links});
  return out;
}

int links_between(const Ladder& ladder, int a, int b) {
  require_ipu(ladder, a, "links_between");
  require_ipu(ladder, b, "links_between");
  const auto pairs = link_map(ladder);
  const auto it = pairs.find({std::min(a, b), std::max(a, b)});
  return it == pairs.end() ? 0 : it->second;
}

std::vector<int> ports_per_ipu(const Ladder& ladder) {
  std::vector<int> ports(static_cast<std::size_t>(ladder.ipus()), 0);
  for (const auto& [pair, links] : link_map(ladder)) {
    ports[static_cast<std::size_t>(pair.first)] += links;
    ports[static_cast<std::size_t>(pair.second)] += links;
  }
  return ports;
}

void check_ports(const Ladder& ladder, const IpuConfig& ipu) {
  const std::vector<int> ports = ports_per_ipu(ladder);
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ports[i] > ipu.ipu_links) {
      throw std::invalid_argument(
          "IPU " + std::to_string(i) + " needs " + std::to_string(ports[i]) +
          " IPU-Link ports (links_per_rung " + std::to_string(ladder.links_per_rung) +
          ", links_per_column_neighbour " + std::to_string(ladder.links_per_column_neighbour) +
          (ladder.torus ? ", torus" : "") + ") but the IPU has " + std::to_string(ipu.ipu_links) +
          " (ipu_links)");
    }
  }
}

std::vector<int> ring_order(const Ladder& ladder, int replicas) {
  core::validate_config(ladder);
  if (!is_power_of_two(replicas)) {
    throw std::invalid_argument("ring of " + std::to_string(replicas) +
                                " replicas: GCL's rings take a power of two");
  }
  if (replicas > ladder.ipus()) {
    throw std::invalid_argument("ring of " + std::to_string(replicas) +
                                " replicas: the ladder has " + std::to_string(ladder.ipus()) +
                                " IPUs");
  }
  if (replicas == 1) return {0};
  if (ladder.links_per_rung == 0) {
    throw std::invalid_argument("ring of " + std::to_string(replicas) +
                                " replicas: the ring turns across rungs, which have no links "
                                "(links_per_rung 0)");
  }
  if (replicas > 2 && ladder.links_per_column_neighbour == 0) {
    throw std::invalid_argument("ring of " + std::to_string(replicas) +
                                " replicas: the ring runs along the columns, which have no links "
                                "(links_per_column_neighbour 0)");
  }
  const int rungs = replicas / 2;
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(replicas));
  for (int r = 0; r < rungs; ++r) order.push_back(2 * r);
  for (int r = rungs - 1; r >= 0; --r) order.push_back(2 * r + 1);
  return order;
}

void GwFabric::check(core::ConfigChecks& c) const {
  if (pod.ipus() % machine.ipus != 0) {
    c.fail("pod.rungs", "a pod's " + std::to_string(pod.ipus()) +
                            " IPUs must fill whole machines of " + std::to_string(machine.ipus));
  }
  if (pods > 1 && machine.gw_link_ports == 0) {
    c.fail("machine.gw_link_ports", "several pods need GW-Link ports to reach each other");
  }
  // In a ring of pods each machine splits its ports between two neighbours.
  if (wiring == GwWiring::kCrossConnected && pods > 2 && machine.gw_link_ports % 2 != 0) {
    c.fail("machine.gw_link_ports", "a cross-connected ring of " + std::to_string(pods) +
                                        " pods splits each machine's ports between two "
                                        "neighbours, so their number must be even");
  }
}

GwFabric pod128_fabric() {
  GwFabric f;
  f.pods = 2;
  return f;
}

GwFabric pod256_fabric() {
  GwFabric f;
  f.pods = 4;
  return f;
}

GwFabric bow_pod256_fabric() {
  GwFabric f;
  f.pods = 4;
  f.machine = bow2000();
  f.wiring = GwWiring::kSwitched;
  return f;
}

std::vector<GwJoin> gw_joins(const GwFabric& fabric, int p, int q) {
  core::validate_config(fabric);
  for (const int pod : {p, q}) {
    if (pod < 0 || pod >= fabric.pods) {
      throw std::invalid_argument("gw_joins: pod " + std::to_string(pod) + " is not one of the " +
                                  std::to_string(fabric.pods) + " pods");
    }
  }
  if (p == q) throw std::invalid_argument("gw_joins: a pod's IPUs meet over IPU-Links, not GW");

  const MachineConfig& m = fabric.machine;
  int ports = 0;
  bool via_switch = false;
  if (fabric.wiring == GwWiring::kSwitched) {
    ports = m.gw_link_ports;
    via_switch = true;
  } else if (fabric.pods == 2) {
    ports = m.gw_link_ports;
  } else {
    const int step = ((q - p) % fabric.pods + fabric.pods) % fabric.pods;
    const bool neighbours = step == 1 || step == fabric.pods - 1;
    if (!neighbours) return {};
    ports = m.gw_link_ports / 2;
  }

  std::vector<GwJoin> joins;
  for (int machine = 0; machine < fabric.machines_per_pod(); ++machine) {
    GwJoin j;
    j.machine = machine;
    j.first_ipu = machine * m.ipus;
    j.ipus = m.ipus;
    j.ports = ports;
    j.bandwidth = core::Bandwidth{m.gw_link_rate.bits_per_second * ports};
    j.via_switch = via_switch;
    joins.push_back(j);
  }
  return joins;
}

core::Bandwidth gw_bandwidth_per_ipu(const GwFabric& fabric) {
  core::validate_config(fabric);
  const MachineConfig& m = fabric.machine;
  return core::Bandwidth{m.gw_link_rate.bits_per_second * m.gw_link_ports / m.ipus};
}

}  // namespace podsim::ipulink
