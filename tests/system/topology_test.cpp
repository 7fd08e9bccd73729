// Topologies built from the presets: counts, wiring, addresses and forwarding tables.
#include "hw/system/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "collectives/system_file.h"
#include "hw/fabric/switch.h"

namespace podsim::system {
namespace {

using ::testing::HasSubstr;

Topology preset(const std::string& name, const std::vector<std::string>& overrides = {}) {
  const auto loaded = collectives::load_system_file(name, overrides);
  return build_topology(loaded.config, &loaded.tree);
}

int count_switches_in_tier(const Topology& t, int tier) {
  int n = 0;
  for (const auto& node : t.nodes)
    n += node.kind == TopologyNode::Kind::kSwitch && node.tier == tier;
  return n;
}

TEST(Topology, Hls2BoxIsAllToAllWithThreeLinksPerPeer) {
  const auto t = preset("hls2");
  EXPECT_EQ(t.chips, 8);
  EXPECT_EQ(t.switches, 0);
  EXPECT_EQ(t.links.size(), 84u);
  EXPECT_EQ(t.endpoints.size(), 8u * 24);
  // Chip 2's links to chip 5 land on chip 5's ports for chip 2.
  for (int k = 0; k < 3; ++k) {
    const PortRef a{t.nic_of_chip(2), t.direct_port(2, 5, k)};
    EXPECT_EQ(t.peer(a), (PortRef{t.nic_of_chip(5), t.direct_port(5, 2, k)}));
  }
  // 21 scale-up ports wired per chip, 3 scale-out ports left for a network.
  for (int chip = 0; chip < 8; ++chip) {
    const auto& wired = t.link_of_port[static_cast<std::size_t>(t.nic_of_chip(chip))];
    EXPECT_EQ(std::count(wired.begin(), wired.end(), -1), 3);
  }
  const auto& link = t.links.front();
  EXPECT_DOUBLE_EQ(link.config.rate.bits_per_second, 100e9);
  EXPECT_EQ(link.config.cable.propagation().ps, 100000);
}

TEST(Topology, Hls1AndHls3) {
  EXPECT_EQ(preset("hls1").links.size(), 28u);
  const auto t = preset("hls3");
  EXPECT_EQ(t.links.size(), 84u);
  EXPECT_DOUBLE_EQ(t.links.front().config.rate.bits_per_second, 200e9);
}

TEST(Topology, Pod128HasOneLeafPerRail) {
  const auto t = preset("hls2-pod128");
  EXPECT_EQ(t.chips, 128);
  EXPECT_EQ(t.switches, 3);
  EXPECT_EQ(t.links.size(), 16u * 84 + 3 * 128);
  // Rail 1's leaf reaches every chip's scale-out port 1 directly, and no other port.
  int leaf = -1;
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].name == "rail1.leaf0") leaf = static_cast<int>(n);
  }
  ASSERT_GE(leaf, 0);
  const auto& table = t.routes[static_cast<std::size_t>(leaf)];
  for (int chip = 0; chip < 128; ++chip) {
    const auto nic = static_cast<std::size_t>(t.nic_of_chip(chip));
    const auto rail1 = t.endpoint_of_port[nic][static_cast<std::size_t>(t.scale_out_port(1))];
    const auto rail0 = t.endpoint_of_port[nic][static_cast<std::size_t>(t.scale_out_port(0))];
    const auto group = table.lookup(rail1);
    ASSERT_EQ(group.count, 1u);
    EXPECT_EQ(group.ports[0], chip);
    EXPECT_EQ(table.lookup(rail0).count, 0u);
  }
}

TEST(Topology, RackLeafSpineSpreadsUplinksOverEverySpine) {
  const auto t = preset("hls2-rack8x");
  EXPECT_EQ(t.chips, 512);
  EXPECT_EQ(count_switches_in_tier(t, 0), 3 * 8);
  EXPECT_EQ(count_switches_in_tier(t, 1), 3 * 8);
  // A leaf reaches another rack's chips over all 64 uplinks; a spine over its 8 links to that
  // rack's leaf.
  std::size_t leaf0 = 0, spine0 = 0;
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].name == "rail0.leaf0") leaf0 = n;
    if (t.nodes[n].name == "rail0.spine0") spine0 = n;
  }
  const auto far_chip = static_cast<std::size_t>(t.nic_of_chip(500));
  const auto far = t.endpoint_of_port[far_chip][static_cast<std::size_t>(t.scale_out_port(0))];
  EXPECT_EQ(t.routes[leaf0].lookup(far).count, 64u);
  const auto down = t.routes[spine0].lookup(far);
  ASSERT_EQ(down.count, 8u);
  for (std::uint32_t i = 0; i < down.count; ++i) {
    EXPECT_EQ(
        t.nodes[static_cast<std::size_t>(t.peer({static_cast<int>(spine0), down.ports[i]}).node)]
            .name,
        "rail0.leaf7");
  }
}

TEST(Topology, FatTreeK16) {
  const auto t = preset("fattree-k16");
  EXPECT_EQ(t.chips, 1024);
  EXPECT_EQ(t.switches, 320);  // 5k^2/4
  EXPECT_EQ(count_switches_in_tier(t, 2), 64);
  EXPECT_EQ(t.links.size(), 3u * 1024);  // host-edge, edge-aggregation, aggregation-core
  // An edge switch reaches a host in another pod over its 8 uplinks; a core over one port.
  const auto host = t.endpoint_of_port[static_cast<std::size_t>(t.nic_of_chip(1000))][0];
  const auto ports_towards = [&](const std::string& name) {
    for (std::size_t n = 0; n < t.nodes.size(); ++n) {
      if (t.nodes[n].name == name) return t.routes[n].lookup(host).count;
    }
    return 0u;
  };
  EXPECT_EQ(ports_towards("pod0.edge0"), 8u);
  EXPECT_EQ(ports_towards("pod0.agg0"), 8u);
  EXPECT_EQ(ports_towards("core0"), 1u);
  EXPECT_EQ(ports_towards("pod15.agg0"), 1u);
}

TEST(Topology, AddressesAreUniqueAndDense) {
  const auto t = preset("hls2-pod128");
  std::set<std::pair<int, int>> seen;
  for (const auto& e : t.endpoints) seen.insert({e.node, e.port});
  EXPECT_EQ(seen.size(), t.endpoints.size());
  for (fabric::EndpointId id = 0; id < t.endpoints.size(); ++id) {
    const auto& e = t.endpoints[id];
    EXPECT_EQ(
        t.endpoint_of_port[static_cast<std::size_t>(e.node)][static_cast<std::size_t>(e.port)], id);
  }
}

std::string topology_error(const std::string& name, const std::vector<std::string>& overrides) {
  try {
    preset(name, overrides);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TopologyErrors, LeafPortsLeftUnwired) {
  EXPECT_THAT(topology_error("hls2-pod128", {"network.leaf_down_ports=96"}),
              HasSubstr("key 'network.leaf_down_ports': 128 chips per rail do not fill leaves of "
                        "96 ports: the last leaf would have 64 unwired ports"));
}

TEST(TopologyErrors, SpinePortsThatCannotBeFilled) {
  EXPECT_THAT(topology_error("hls2-rack8x", {"network.spine_ports=48"}),
              HasSubstr("key 'network.spine_ports'"));
  EXPECT_THAT(topology_error("hls2-rack8x", {"network.leaf_up_ports=20"}),
              HasSubstr("8 leaves x 20 uplinks per rail cannot fill spines of 64 ports"));
  EXPECT_THAT(topology_error("hls2-rack8x", {"network.leaf_up_ports=17", "network.spine_ports=68"}),
              HasSubstr("17 uplinks per leaf do not spread evenly over 2 spines"));
}

TEST(TopologyErrors, FatTreeSizeMustMatchTheHosts) {
  EXPECT_THAT(topology_error("fattree-k16", {"boxes=1000"}),
              HasSubstr("a k=16 fat tree has 1024 host ports but the system has 1000"));
  EXPECT_THAT(topology_error("fattree-k16", {"network.fat_tree_k=15"}), HasSubstr("even"));
}

TEST(TopologyErrors, BoxesWithoutANetworkAndPortOverflow) {
  EXPECT_THAT(topology_error("hls2", {"boxes=2"}), HasSubstr("key 'network.kind'"));
  EXPECT_THAT(topology_error("hls1", {"scale_out.ports_per_chip=4"}),
              HasSubstr("needs 11 NIC ports per chip"));
}

// A flow's path through a k=4 fat tree, as the switches forward it: two links under one edge
// switch, four within a pod, six across pods, ending at the destination; the group member at
// each switch is the one the switch's own hash picks; and different flows spread over the cores.
TEST(Topology, FlowLinksFollowTheSwitchesTablesAndHashes) {
  const auto t = preset("fattree-k16", {"boxes=16", "network.fat_tree_k=4"});
  const auto from = [&](int chip) { return PortRef{t.nic_of_chip(chip), t.scale_out_port(0)}; };
  const auto endpoint = [&](int chip) {
    const PortRef p = from(chip);
    return t.endpoint_of_port[static_cast<std::size_t>(p.node)][static_cast<std::size_t>(p.port)];
  };
  const auto path = [&](int a, int b, std::uint16_t udp) {
    std::vector<int> links;  // the directions' links
    for (int d : flow_links(t, from(a), {endpoint(a), endpoint(b), udp}, 7)) links.push_back(d / 2);
    return links;
  };
  EXPECT_EQ(path(0, 1, 0xc000).size(), 2u);   // one edge switch
  EXPECT_EQ(path(0, 2, 0xc000).size(), 4u);   // the same pod
  EXPECT_EQ(path(0, 15, 0xc000).size(), 6u);  // another pod
  const auto& last = t.links[static_cast<std::size_t>(path(0, 15, 0xc000).back())];
  EXPECT_TRUE(last.a == from(15) || last.b == from(15));
  // The first switch's choice is its own hash of the flow under its seed.
  const auto p = path(0, 15, 0xc123);
  const PortRef edge = t.peer(from(0));
  const auto group = t.routes[static_cast<std::size_t>(edge.node)].lookup(endpoint(15));
  ASSERT_EQ(group.count, 2u);
  const auto hash = fabric::flow_hash(fabric::ipv4_of(endpoint(0)), fabric::ipv4_of(endpoint(15)),
                                      0xc123, fabric::kRoceV2UdpPort, fabric::kIpProtocolUdp,
                                      switch_ecmp_seed(7, edge.node));
  const int port = group.ports[fabric::ecmp_member(hash, group.count)];
  EXPECT_EQ(p[1],
            t.link_of_port[static_cast<std::size_t>(edge.node)][static_cast<std::size_t>(port)]);
  // Sixty-four flows between the same two pods cross more than one core link.
  std::set<int> second_hops;
  for (std::uint16_t udp = 0xc000; udp < 0xc040; ++udp) second_hops.insert(path(0, 15, udp)[2]);
  EXPECT_GT(second_hops.size(), 1u);
  // Each hop is a direction: the first leaves chip 0's port, whichever end of its link that is.
  const int first = flow_links(t, from(0), {endpoint(0), endpoint(15), 0xc000}, 7)[0];
  EXPECT_EQ(first % 2, t.links[static_cast<std::size_t>(first / 2)].a == from(0) ? 0 : 1);
  EXPECT_THROW(flow_links(t, from(0), {endpoint(0), 99999, 0xc000}, 7), std::invalid_argument);
}

// IPU-POD16: a ladder of 8 rungs, 2 IPU-Links per rung and per column neighbour; every link
// lands on the port its peer reserves for it.
TEST(Topology, IpuPod16IsAnIpuLinkLadder) {
  const auto loaded = collectives::load_system_file("ipu-pod16", {});
  const Topology t = build_topology(loaded.config, &loaded.tree);
  EXPECT_EQ(t.chips, 16);
  EXPECT_EQ(t.switches, 0);
  EXPECT_EQ(t.links.size(), 44u);  // 8 rungs + 2 x 7 column pairs, 2 links each
  const SystemConfig& s = loaded.config;
  for (int a = 0; a < 16; ++a) {
    for (int b = 0; b < 16; ++b) {
      const int links = direct_links(s, a, b);
      EXPECT_EQ(links, ipulink::links_between(s.box.ladder, a, b)) << a << " " << b;
      for (int k = 0; k < links; ++k) {
        const PortRef from{t.nic_of_chip(a), t.direct_port(a, b, k)};
        EXPECT_EQ(t.peer(from), (PortRef{t.nic_of_chip(b), t.direct_port(b, a, k)}));
      }
    }
  }
  EXPECT_TRUE(directly_linked(s, 0, 1));    // a rung
  EXPECT_TRUE(directly_linked(s, 0, 2));    // column neighbours
  EXPECT_FALSE(directly_linked(s, 0, 3));   // diagonal
  EXPECT_FALSE(directly_linked(s, 0, 14));  // an open ladder's ends
  EXPECT_THROW(ports_between(t, s, 0, 3, 0), std::invalid_argument);
}

// IPU-POD64 closes the ladder into a torus; IPU-POD256 joins four of them by GW-Links through
// switches at an IPU's 50 Gb/s share.
TEST(Topology, IpuPodsCloseIntoToriAndJoinOverGwLinks) {
  const auto pod64 = collectives::load_system_file("ipu-pod64", {});
  const Topology t64 = build_topology(pod64.config);
  EXPECT_EQ(t64.links.size(), 2u * (32 + 32 * 2));
  EXPECT_TRUE(directly_linked(pod64.config, 0, 62));
  const auto pod256 = collectives::load_system_file("ipu-pod256", {});
  const Topology t = build_topology(pod256.config);
  EXPECT_EQ(t.chips, 256);
  EXPECT_EQ(t.switches, 1);
  int gw = 0;
  for (const TopologyLink& l : t.links) {
    if (t.nodes[static_cast<std::size_t>(l.b.node)].kind == TopologyNode::Kind::kSwitch) {
      ++gw;
      EXPECT_DOUBLE_EQ(l.config.rate.bits_per_second, 50e9);
    } else {
      EXPECT_DOUBLE_EQ(l.config.rate.bits_per_second, 128e9);
    }
  }
  EXPECT_EQ(gw, 256);
  EXPECT_EQ(ports_between(t, pod256.config, 0, 64, 0).first, t.scale_out_port(0));
}

TEST(Topology, ALadderMustHoldTheBoxsChips) {
  try {
    collectives::load_system_file("ipu-pod16", {"box.chips=12"});
    FAIL() << "no error";
  } catch (const core::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("box.ladder.rungs"));
  }
}

}  // namespace
}  // namespace podsim::system
