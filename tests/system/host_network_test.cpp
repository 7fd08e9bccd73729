// The hosts' side of training's host-staged strategies, without the kernel: the front-end network
// a system's hosts get (host_network.h) and PCIe staging over each box's tree (pcie_staging.h).
#include "hw/system/host_network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/system_file.h"
#include "hw/system/pcie_staging.h"
#include "hw/system/topology.h"

namespace podsim::system {
namespace {

using ::testing::HasSubstr;

SystemConfig hls2(int boxes, const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {"boxes=" + std::to_string(boxes)};
  if (boxes > 1) {
    overrides.insert(overrides.end(), {"network.kind=leaf-spine",
                                       "network.leaf_down_ports=" + std::to_string(8 * boxes)});
  }
  if (boxes > 32) {
    overrides.insert(overrides.end(), {"network.leaf_down_ports=64", "network.leaf_up_ports=64",
                                       "network.spine_ports=64"});
  }
  overrides.insert(overrides.end(), more.begin(), more.end());
  return collectives::load_system_file("hls2", overrides).config;
}

TEST(HostNetwork, HostsThatFitOneSwitchShareOnePerRail) {
  const SystemConfig h = host_network_system(hls2(4));
  EXPECT_EQ(h.chips(), 4);
  EXPECT_EQ(h.chip.nic.ports, 2);
  EXPECT_EQ(h.chip.nic.roce.mtu, 4096u);
  const Topology t = build_topology(h);
  EXPECT_EQ(t.chips, 4);
  EXPECT_EQ(t.switches, 2);  // one per rail
  EXPECT_EQ(t.links.size(), 8u);
}

TEST(HostNetwork, ManyHostsTakeLeavesOfHalfTheirPortsUnderSpines) {
  const SystemConfig h = host_network_system(hls2(64));
  const Topology t = build_topology(h);
  EXPECT_EQ(t.chips, 64);
  // Per rail: 4 leaves of 16 hosts and 16 uplinks, 2 spines of 32 ports.
  EXPECT_EQ(t.switches, 2 * (4 + 2));
  EXPECT_EQ(t.links.size(), 2u * (64 + 4 * 16));
}

TEST(HostNetwork, OneHostNeedsNoSwitch) {
  const SystemConfig h = host_network_system(hls2(1));
  EXPECT_EQ(build_topology(h).switches, 0);
}

TEST(HostNetwork, TcpTakesEthernetFramesAndTheStackOnEachPacket) {
  const SystemConfig h = host_network_system(
      hls2(2, {"host.network.transport=tcp", "host.network.stack_latency=5us"}));
  EXPECT_EQ(h.chip.nic.roce.mtu, kTcpPayload);
  // Regression: TCP's hosts took a 1500-byte MTU the NIC refuses (powers of two only), and every
  // TCP run failed.
  EXPECT_NO_THROW(core::validate_config(h.chip));
  EXPECT_EQ(h.chip.nic.roce.tx_pipeline_latency.ps, 5'000'000);
  EXPECT_EQ(h.chip.nic.roce.rx_pipeline_latency.ps, 5'000'000);
  // The kernel's congestion window, not DCQCN, in the lossy best-effort class.
  EXPECT_TRUE(h.chip.nic.roce.window_control);
  EXPECT_FALSE(h.chip.nic.roce.dcqcn.enabled);
  EXPECT_EQ(h.chip.nic.roce.data_priority, kTcpPriority);
  EXPECT_NE(h.chip.nic.roce.data_priority, h.network.switch_config.pfc.lossless_priority);
  const SystemConfig reno = host_network_system(
      hls2(2, {"host.network.transport=tcp", "host.network.tcp.algorithm=reno"}));
  EXPECT_EQ(reno.chip.nic.roce.window.algorithm, roce::WindowAlgorithm::kReno);
  // RoCE keeps DCQCN.
  EXPECT_FALSE(host_network_system(hls2(2)).chip.nic.roce.window_control);
}

TEST(HostNetwork, TheHostsReductionIsItsEngine) {
  const SystemConfig h = host_network_system(hls2(2, {"host.cpu.reduce_bandwidth=10GB/s"}));
  EXPECT_EQ(h.chip.dma.engines, 1);
  EXPECT_DOUBLE_EQ(h.chip.dma.engine.bandwidth.bits_per_second, 80e9);
}

TEST(HostNetwork, HostsThatCannotBeWiredAreRefusedNamingTheKey) {
  try {
    host_network_system(hls2(2, {"host.network.enabled=false"}));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("host.network.enabled"));
  }
  // 48 hosts: 3 leaves of 16 cannot fill spines of 32 ports.
  try {
    host_network_system(hls2(48, {"network.leaf_down_ports=384"}));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("host.network.switch_ports"));
  }
}

// A converged fabric: each host's port r on the leaf of rail r that holds its box's chips, under
// the chips' spines, at their uplinks' rate, with their switches' settings.
TEST(HostNetwork, OnTheChipsSwitchesEachHostJoinsItsBoxsLeaf) {
  const SystemConfig chips =
      hls2(64, {"host.network.attach=scale-out", "network.switch.ecn.kmin=20KB",
                "network.uplink_rate=400Gbps"});
  const SystemConfig h = host_network_system(chips);
  EXPECT_EQ(h.network.leaf_down_ports, 8);  // the 64 chips of a leaf are 8 boxes
  EXPECT_EQ(h.network.leaf_up_ports, 64);
  EXPECT_EQ(h.network.spine_ports, 64);
  EXPECT_DOUBLE_EQ(h.network.uplink_rate.bits_per_second, 400e9);
  EXPECT_EQ(h.network.switch_config.ecn.kmin.bytes, chips.network.switch_config.ecn.kmin.bytes);
  const Topology t = build_topology(h);
  EXPECT_EQ(t.chips, 64);
  // Per host rail (2 of the chips' 3): 8 leaves of 8 hosts and 64 uplinks, 8 spines of 64 ports,
  // as the chips' rails.
  EXPECT_EQ(t.switches, 2 * (8 + 8));
  EXPECT_EQ(t.links.size(), 2u * (64 + 8 * 64));
  // The front-end network of the same hosts: leaves of 16 under spines of 32.
  EXPECT_EQ(build_topology(host_network_system(hls2(64))).switches, 2 * (4 + 2));
}

TEST(HostNetwork, HostsTheChipsSwitchesCannotTakeAreRefusedNamingTheKey) {
  const auto refused = [](const std::vector<std::string>& more, const std::string& why) {
    std::vector<std::string> all = {"host.network.attach=scale-out"};
    all.insert(all.end(), more.begin(), more.end());
    try {
      host_network_system(hls2(2, all));
      ADD_FAILURE() << "no error for " << why;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr("host.network.attach: "));
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  };
  refused({"network.leaf_down_ports=12"}, "split its hosts' blocks of 8 chips");
  refused({"host.network.ports=4"}, "outnumber hls2's 3 rails");
  refused({"network.kind=fat-tree", "network.fat_tree_k=4"}, "not one");
}

TEST(PcieStaging, ACopyTakesItsLinksOccupancyAndLatency) {
  const SystemConfig s = hls2(1);
  PcieStaging staging(s);
  const pcie::LinkTiming chip(s.chip.pcie.link), up(s.host.uplink);
  const std::uint64_t bytes = 64 << 20;
  const core::TimePs want = std::max(chip.write_occupancy(bytes), up.write_occupancy(bytes)) +
                            chip.latency() + up.latency();
  EXPECT_EQ(staging.book(0, bytes, pcie::Direction::kDeviceToHost, 1000), 1000 + want);
}

// HLS-2: 8 chips behind two switches, 4 per uplink.
TEST(PcieStaging, ASocketsChipsShareItsUplinkAndDirectionsAreApart) {
  const SystemConfig s = hls2(2);
  PcieStaging staging(s);
  const std::uint64_t bytes = 64 << 20;
  const auto d2h = pcie::Direction::kDeviceToHost;
  const core::TimePs one = staging.book(0, bytes, d2h, 0);
  core::TimePs last = 0;
  for (int chip = 1; chip < 4; ++chip) last = staging.book(chip, bytes, d2h, 0);
  EXPECT_GT(last, 3 * one);
  EXPECT_LT(last, 4 * one);
  // Another socket, another box, the other direction: none waits.
  EXPECT_EQ(staging.book(4, bytes, d2h, 0), one);
  EXPECT_EQ(staging.book(8, bytes, d2h, 0), one);
  EXPECT_LT(staging.book(0, bytes, pcie::Direction::kHostToDevice, 0), 2 * one);
  EXPECT_THROW(staging.book(16, bytes, d2h, 0), std::out_of_range);
}

// IPU-POD16: four IPU-M2000s, each gateway's 4 IPUs sharing its two 100GbE RoCE host links, and
// the four gateways sharing the host's own two 100GbE NIC ports.
TEST(PcieStaging, BehindAGatewayItsChipsShareItsHostLinksAndTheGatewaysTheHostsNic) {
  const SystemConfig s = collectives::load_system_file("ipu-pod16", {}).config;
  ASSERT_EQ(s.host.gateway.chips, 4);
  ASSERT_EQ(s.host.network.ports, 2);
  PcieStaging staging(s);
  const pcie::LinkTiming chip(s.chip.pcie.link);
  const std::uint64_t bytes = 64 << 20;
  // 4096 payload bytes a packet in 4178 on the wire, over 2 x 100 Gb/s.
  const auto ethernet =
      static_cast<core::TimePs>(std::ceil(bytes * 4178.0 / 4096.0 * 8e12 / 200e9));
  const core::TimePs one = std::max(chip.write_occupancy(bytes), ethernet) + chip.latency() +
                           static_cast<core::TimePs>(s.host.gateway.latency.ps);
  const auto d2h = pcie::Direction::kDeviceToHost;
  // To the picosecond, give or take the rounding of the rate's arithmetic.
  const auto near = [](core::TimePs got, core::TimePs want) {
    EXPECT_NEAR(static_cast<double>(got), static_cast<double>(want), 3.0);
  };
  near(staging.book(0, bytes, d2h, 0), one);
  EXPECT_GT(ethernet, chip.write_occupancy(bytes));  // the host links are the narrower way
  // The gateway's other IPUs wait for its links and the host's NIC; the next gateway's for the
  // host's NIC, which both gateways fill.
  near(staging.book(3, bytes, d2h, 0), one + ethernet);
  near(staging.book(4, bytes, d2h, 0), one + 2 * ethernet);
  // The other direction is apart.
  EXPECT_LT(staging.book(4, bytes, pcie::Direction::kHostToDevice, 0), one + ethernet);
  // A host with a port for each of the gateways' links keeps the gateways apart.
  PcieStaging wide(collectives::load_system_file("ipu-pod16", {"host.network.ports=8"}).config);
  near(wide.book(0, bytes, d2h, 0), one);
  near(wide.book(4, bytes, d2h, 0), one);
  EXPECT_THAT(staging.description(), HasSubstr("into each host's 2 x 100 Gb/s NIC ports"));
}

// An IPU-POD64 with four servers (host.servers): each serves four IPU-M2000s through its own NIC
// ports, so gateways of different servers do not wait for each other, those of one server do.
TEST(PcieStaging, EachServerOfABoxHasItsOwnNic) {
  const SystemConfig s = collectives::load_system_file("ipu-pod64", {"host.servers=4"}).config;
  EXPECT_EQ(s.hosts(), 4);
  EXPECT_EQ(s.chips_per_host(), 16);
  PcieStaging staging(s);
  const std::uint64_t bytes = 64 << 20;
  const auto d2h = pcie::Direction::kDeviceToHost;
  const core::TimePs one = staging.book(0, bytes, d2h, 0);
  EXPECT_EQ(staging.book(16, bytes, d2h, 0), one);  // the second server's first gateway
  EXPECT_GT(staging.book(4, bytes, d2h, 0), one);   // the first server's second gateway
  const SystemConfig hosts = host_network_system(s);
  EXPECT_EQ(hosts.chips(), 4);
  EXPECT_EQ(hosts.host.servers, 1);
}

TEST(PcieStaging, GatewaysThatSplitABoxAreRefusedNamingTheKey) {
  try {
    collectives::load_system_file("ipu-pod16", {"host.gateway.chips=3"});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("host.gateway.chips"));
    EXPECT_THAT(e.what(), HasSubstr("gateways of 3"));
  }
  // Several servers per box serve whole gateways, and only behind gateways.
  for (const auto& [system, set, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"ipu-pod16", "host.servers=3", "split evenly over 3 servers"},
           {"ipu-pod16", "host.servers=8", "each serving whole gateways"},
           {"ipu-server", "host.servers=2", "needs gateways"}}) {
    try {
      collectives::load_system_file(system, {set});
      ADD_FAILURE() << set << ": no error";
    } catch (const std::exception& e) {
      EXPECT_THAT(e.what(), HasSubstr("host.servers")) << set;
      EXPECT_THAT(e.what(), HasSubstr(message)) << set;
    }
  }
  // IPU-Servers' PCIe cards have none: copies take the sockets' uplinks.
  EXPECT_EQ(collectives::load_system_file("ipu-server", {}).config.host.gateway.chips, 0);
  EXPECT_EQ(collectives::load_system_file("ipu-pod64", {}).config.host.gateway.chips, 4);
}

}  // namespace
}  // namespace podsim::system
