// Splitting systems among processes: whole boxes per process, switches with the ports they
// serve, the cut cables and the lookahead they give.
#include "sims/parallel/partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "collectives/system_file.h"

namespace podsim::parallel {
namespace {

using ::testing::HasSubstr;
using Kind = system::TopologyNode::Kind;

system::Topology preset(const std::string& name, const std::vector<std::string>& overrides = {}) {
  const auto loaded = collectives::load_system_file(name, overrides);
  return system::build_topology(loaded.config, &loaded.tree);
}

TEST(Partition, SplitsThePodIntoRunsOfBoxes) {
  const auto t = preset("hls2-pod128");
  const auto p = partition_by_box(t, 3);
  EXPECT_EQ(p.first_box, (std::vector<int>{0, 5, 10}));
  for (int chip = 0; chip < t.chips; ++chip) {
    const int box = chip / 8;
    EXPECT_EQ(p.part_of_chip[static_cast<std::size_t>(chip)], box < 5 ? 0 : box < 10 ? 1 : 2);
    EXPECT_EQ(p.part_of_node[static_cast<std::size_t>(t.nic_of_chip(chip))],
              p.part_of_chip[static_cast<std::size_t>(chip)]);
  }
  EXPECT_EQ(p.describe(),
            "3 processes, by box: boxes 0-4 | 5-9 | 10-15; 240 cables cut, lookahead 1us");
}

// The three rail leaves reach both halves alike: ties go to the part with fewer switches, and
// every chip's cable to a leaf of the other part is cut (in-box links never are).
TEST(Partition, SpreadsTiedSwitchesAndCutsTheirCablesToTheOtherPart) {
  const auto t = preset("hls2-pod128");
  const auto p = partition_by_box(t, 2);
  std::vector<int> leaves;
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind == Kind::kSwitch) leaves.push_back(p.part_of_node[n]);
  }
  EXPECT_EQ(leaves, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(p.cut_links.size(), 3u * 64);
  for (int link : p.cut_links) {
    const auto& l = t.links[static_cast<std::size_t>(link)];
    EXPECT_NE(p.part_of_node[static_cast<std::size_t>(l.a.node)],
              p.part_of_node[static_cast<std::size_t>(l.b.node)]);
  }
  EXPECT_EQ(p.lookahead_ps, 1'000'000u);
}

// Spines and cores follow the switches below them.
TEST(Partition, PlacesUpperTiersWithTheSwitchesTheyServe) {
  const auto t = preset("fattree-k16");
  const auto p = partition_by_box(t, 2);
  std::vector<int> per_part(2, 0);
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    ASSERT_GE(p.part_of_node[n], 0) << t.nodes[n].name;
    if (t.nodes[n].kind == Kind::kSwitch) ++per_part[static_cast<std::size_t>(p.part_of_node[n])];
  }
  EXPECT_EQ(per_part[0], per_part[1]);
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    if (t.nodes[n].kind != Kind::kSwitch || t.nodes[n].tier != 0) continue;
    for (int link : t.link_of_port[n]) {  // an edge switch's hosts are all in its part
      const auto& l = t.links[static_cast<std::size_t>(link)];
      const int other = l.a.node == static_cast<int>(n) ? l.b.node : l.a.node;
      if (t.nodes[static_cast<std::size_t>(other)].kind == Kind::kNic) {
        EXPECT_EQ(p.part_of_node[static_cast<std::size_t>(other)], p.part_of_node[n]);
      }
    }
  }
}

TEST(Partition, OneProcessCutsNothing) {
  const auto p = partition_by_box(preset("hls2-pod128"), 1);
  EXPECT_TRUE(p.cut_links.empty());
  EXPECT_EQ(p.describe(), "1 process, by box: boxes 0-15; 0 cables cut");
}

TEST(Partition, RefusesMoreProcessesThanBoxes) {
  try {
    partition_by_box(preset("hls2"), 2);
    FAIL() << "one box split in two";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 processes: the system has 1 box,"));
  }
}

TEST(Partition, RefusesACutCableWithoutDelay) {
  const auto t = preset("hls2-pod128", {"network.endpoint_cable.delay=1ps"});
  try {
    partition_by_box(t, 2);
    FAIL() << "no lookahead";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no propagation delay"));
  }
}

}  // namespace
}  // namespace podsim::parallel
