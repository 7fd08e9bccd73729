#include "hw/ipulink/ipu_wiring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

namespace podsim::ipulink {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

int total_links(const std::vector<IpuLink>& links) {
  int n = 0;
  for (const auto& l : links) n += l.links;
  return n;
}

// The ring is checked against the link list alone, not against links_between.
void expect_valid_ring(const Ladder& ladder, int replicas) {
  SCOPED_TRACE("ring of " + std::to_string(replicas));
  std::set<std::pair<int, int>> linked;
  for (const auto& l : ladder_links(ladder)) linked.insert({l.a, l.b});
  const std::vector<int> ring = ring_order(ladder, replicas);
  ASSERT_EQ(ring.size(), static_cast<std::size_t>(replicas));
  EXPECT_EQ(std::set<int>(ring.begin(), ring.end()).size(), ring.size()) << "an IPU repeats";
  for (const int ipu : ring) {
    EXPECT_GE(ipu, 0);
    EXPECT_LT(ipu, ladder.ipus());
  }
  if (replicas == 1) return;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const int a = ring[i], b = ring[(i + 1) % ring.size()];
    EXPECT_TRUE(linked.count({std::min(a, b), std::max(a, b)}))
        << "IPUs " << a << " and " << b << " are neighbours in the ring but not linked";
  }
}

TEST(IpuWiring, Pod16IsAnOpenLadderOfEightRungs) {
  const Ladder l = pod16_ladder();
  EXPECT_EQ(l.ipus(), 16);
  EXPECT_FALSE(l.torus);
  const auto links = ladder_links(l);
  // 8 rungs and 2 x 7 column pairs, two IPU-Links each.
  EXPECT_EQ(links.size(), 22u);
  EXPECT_EQ(total_links(links), 44);
  EXPECT_EQ(links.front(), (IpuLink{0, 1, 2}));
  EXPECT_EQ(links[1], (IpuLink{0, 2, 2}));
  EXPECT_EQ(links.back(), (IpuLink{14, 15, 2}));
  EXPECT_EQ(links_between(l, 13, 15), 2);
  EXPECT_EQ(links_between(l, 0, 14), 0);  // no torus
  EXPECT_EQ(links_between(l, 0, 3), 0);   // no diagonals
  EXPECT_EQ(links_between(l, 5, 5), 0);
  const std::vector<int> ports = ports_per_ipu(l);
  EXPECT_EQ(ports[0], 4);
  EXPECT_EQ(ports[1], 4);
  EXPECT_EQ(ports[2], 6);
  EXPECT_EQ(ports[15], 4);
}

TEST(IpuWiring, Pod64IsATorusOf32Rungs) {
  const Ladder l = pod64_ladder();
  EXPECT_EQ(l.ipus(), 64);
  EXPECT_TRUE(l.torus);
  const auto links = ladder_links(l);
  // 32 rungs and 2 x 32 column pairs (the last closing each column).
  EXPECT_EQ(links.size(), 96u);
  EXPECT_EQ(total_links(links), 192);
  EXPECT_EQ(links_between(l, 62, 0), 2);
  EXPECT_EQ(links_between(l, 1, 63), 2);
  for (const int p : ports_per_ipu(l)) EXPECT_EQ(p, 6);
}

TEST(IpuWiring, PresetsStayWithinTheChipsTenPorts) {
  for (const Ladder& l : {pod16_ladder(), pod64_ladder()}) {
    const std::vector<int> ports = ports_per_ipu(l);
    EXPECT_LE(*std::max_element(ports.begin(), ports.end()), gc200().ipu_links);
    EXPECT_NO_THROW(check_ports(l, gc200()));
  }
  // 4 to the rung partner, 3 up and 3 down: exactly ten.
  Ladder full = pod64_ladder();
  full.links_per_rung = 4;
  full.links_per_column_neighbour = 3;
  EXPECT_NO_THROW(check_ports(full, gc200()));
}

TEST(IpuWiring, TooManyLinksNameTheIpuAndThePorts) {
  Ladder l = pod16_ladder();
  l.links_per_column_neighbour = 5;  // 2 + 5 + 5 in the middle of a column; 7 at the ends
  EXPECT_THAT([&] { check_ports(l, gc200()); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("IPU 2 needs 12 IPU-Link ports")));
  EXPECT_THAT([&] { check_ports(l, gc200()); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("has 10 (ipu_links)")));
  l.links_per_column_neighbour = 4;
  EXPECT_NO_THROW(check_ports(l, gc200()));
}

TEST(IpuWiring, BadLaddersNameTheKey) {
  Ladder l;
  l.rungs = 2;
  l.torus = true;
  EXPECT_THAT([&] { ladder_links(l); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("torus: a torus needs")));
  l = Ladder{};
  l.rungs = 0;
  EXPECT_THAT([&] { ladder_links(l); }, ThrowsMessage<std::invalid_argument>(HasSubstr("rungs")));
  EXPECT_THROW(links_between(pod16_ladder(), 0, 16), std::invalid_argument);
}

TEST(IpuWiring, RingsGoUpOneColumnAndDownTheOther) {
  EXPECT_EQ(ring_order(pod16_ladder(), 1), (std::vector<int>{0}));
  EXPECT_EQ(ring_order(pod16_ladder(), 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(ring_order(pod16_ladder(), 8), (std::vector<int>{0, 2, 4, 6, 7, 5, 3, 1}));
  for (const int n : {1, 2, 4, 8, 16}) expect_valid_ring(pod16_ladder(), n);
  for (const int n : {1, 2, 4, 8, 16, 32, 64}) expect_valid_ring(pod64_ladder(), n);
}

TEST(IpuWiring, RingsRefuseWhatGclCannotBuild) {
  const auto fails = [](const Ladder& l, int n, const char* message) {
    EXPECT_THAT([&] { ring_order(l, n); }, ThrowsMessage<std::invalid_argument>(HasSubstr(message)))
        << n << " replicas";
  };
  fails(pod16_ladder(), 3, "power of two");
  fails(pod16_ladder(), 0, "power of two");
  fails(pod16_ladder(), -4, "power of two");
  fails(pod16_ladder(), 32, "the ladder has 16 IPUs");
  fails(pod64_ladder(), 128, "the ladder has 64 IPUs");
  Ladder no_rungs = pod16_ladder();
  no_rungs.links_per_rung = 0;
  fails(no_rungs, 2, "links_per_rung 0");
  Ladder no_columns = pod16_ladder();
  no_columns.links_per_column_neighbour = 0;
  fails(no_columns, 4, "links_per_column_neighbour 0");
  EXPECT_EQ(ring_order(no_columns, 2), (std::vector<int>{0, 1}));
}

TEST(GwLinks, Pod128JoinsEachMachineToItsTwinOverBothPorts) {
  const GwFabric f = pod128_fabric();
  EXPECT_EQ(f.ipus(), 128);
  EXPECT_EQ(f.machines_per_pod(), 16);
  EXPECT_EQ(f.global_ipu(1, 5), 69);
  const auto joins = gw_joins(f, 0, 1);
  ASSERT_EQ(joins.size(), 16u);
  for (int m = 0; m < 16; ++m) {
    const GwJoin& j = joins[static_cast<std::size_t>(m)];
    EXPECT_EQ(j.machine, m);
    EXPECT_EQ(j.first_ipu, 4 * m);
    EXPECT_EQ(j.ipus, 4);
    EXPECT_EQ(j.ports, 2);
    EXPECT_DOUBLE_EQ(j.bandwidth.bits_per_second, 200e9);
    EXPECT_FALSE(j.via_switch);
  }
  EXPECT_EQ(gw_joins(f, 1, 0).size(), 16u);
  // Two 100 Gb/s ports shared by four IPUs.
  EXPECT_DOUBLE_EQ(gw_bandwidth_per_ipu(f).bits_per_second, 50e9);
}

TEST(GwLinks, Pod256CrossConnectsARingOfPods) {
  const GwFabric f = pod256_fabric();
  EXPECT_EQ(f.ipus(), 256);
  const auto next = gw_joins(f, 0, 1);
  ASSERT_EQ(next.size(), 16u);
  EXPECT_EQ(next[3].ports, 1);
  EXPECT_DOUBLE_EQ(next[3].bandwidth.bits_per_second, 100e9);
  EXPECT_EQ(gw_joins(f, 3, 0).size(), 16u);  // the ring closes
  EXPECT_TRUE(gw_joins(f, 0, 2).empty());
  EXPECT_TRUE(gw_joins(f, 1, 3).empty());
}

TEST(GwLinks, BowPod256ReachesEveryPodThroughTwoSwitches) {
  const GwFabric f = bow_pod256_fabric();
  EXPECT_EQ(f.machine.streaming_memory.bytes, 256000000000u);
  for (int q = 1; q < 4; ++q) {
    const auto joins = gw_joins(f, 0, q);
    ASSERT_EQ(joins.size(), 16u) << "pod " << q;
    EXPECT_TRUE(joins[0].via_switch);
    EXPECT_EQ(joins[0].ports, 2);
    EXPECT_DOUBLE_EQ(joins[0].bandwidth.bits_per_second, 200e9);
  }
  EXPECT_DOUBLE_EQ(gw_bandwidth_per_ipu(f).bits_per_second, 50e9);
}

TEST(GwLinks, BadFabricsAndPodsAreRefused) {
  const GwFabric f = pod256_fabric();
  EXPECT_THAT([&] { gw_joins(f, 0, 0); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("IPU-Links, not GW")));
  EXPECT_THAT([&] { gw_joins(f, 0, 4); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("pod 4 is not one of the 4")));
  GwFabric odd = f;
  odd.machine.gw_link_ports = 3;
  EXPECT_THAT([&] { gw_joins(odd, 0, 1); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("machine.gw_link_ports")));
  GwFabric ragged = pod128_fabric();
  ragged.pod.rungs = 31;
  EXPECT_THAT([&] { gw_joins(ragged, 0, 1); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("pod.rungs")));
}

}  // namespace
}  // namespace podsim::ipulink
