// The description of a system: which chip, how many in a box, how the box wires them, how many
// boxes, how many ports each chip keeps for scale-out and the network those ports join.
// Captures the box-level facts of [S3], [S9], [S10] (HLS-1, HLS-2, HLS-3) and rail-aligned
// leaf-spine or fat-tree scale-out networks; each box's host (host_config.h), whose own NICs and
// front-end network are a system of their own (host_network.h). The topology builder
// (topology.h) wires what this describes.
#pragma once

#include <string>

#include "core/config_binding.h"
#include "core/config_tree.h"
#include "hw/chip/chip_config.h"
#include "hw/fabric/link.h"
#include "hw/fabric/switch.h"
#include "hw/ipulink/ipu_config.h"
#include "hw/ipulink/ipu_wiring.h"
#include "hw/system/host_config.h"

namespace podsim::system {

enum class BoxWiring { kAllToAll, kLadder, kNone };

struct BoxConfig {
  int chips = 8;
  BoxWiring wiring = BoxWiring::kAllToAll;
  int links_per_peer = 1;
  ipulink::Ladder ladder;
  fabric::CableConfig cable{core::Duration{100000}};
  template <class V>
  void describe(V& v) {
    v.field("chips", chips, core::Spec("chips in one box").range(1, 256).source("[S3], [S10]"));
    v.choice("wiring", wiring,
             core::Choices<BoxWiring>{{"all-to-all", BoxWiring::kAllToAll},
                                      {"ladder", BoxWiring::kLadder},
                                      {"none", BoxWiring::kNone}},
             core::Spec("how the box joins its chips' scale-up ports: every pair directly, an "
                        "IPU-Link ladder (or torus) of rungs of two, or not at all"));
    v.field("links_per_peer", links_per_peer,
            core::Spec("direct links between each pair of chips (all-to-all wiring)")
                .range(1, 64)
                .source("[S3], [S10]"));
    v.section("ladder", ladder,
              core::Spec("ladder wiring: its rungs (box.chips / 2), the links of each rung and "
                         "of column neighbours, and whether it closes into a torus"));
    v.section("cable", cable, core::Spec("in-box links: delay 100ns by default ([N2])"));
  }
};

enum class NetworkKind { kNone, kLeafSpine, kFatTree };

// How scale-out ports reach each other. Leaf-spine is rail-aligned: scale-out port r of every
// chip goes to a leaf of rail r, and each rail has its own spines.
struct NetworkConfig {
  NetworkKind kind = NetworkKind::kNone;
  int leaf_down_ports = 0;
  int leaf_up_ports = 0;
  int spine_ports = 0;
  int fat_tree_k = 0;
  core::Bandwidth uplink_rate{};
  fabric::CableConfig endpoint_cable{core::Duration{1000000}};
  fabric::CableConfig switch_cable{core::Duration{1000000}};
  fabric::SwitchConfig switch_config;
  // Flow mode: rates recomputed at most once per interval (0: at every instant a flow starts or
  // ends), so that a flow starting or ending waits for the next multiple of it.
  core::Duration flow_solve_interval{0};

  template <class V>
  void describe(V& v) {
    v.choice("kind", kind,
             core::Choices<NetworkKind>{{"none", NetworkKind::kNone},
                                        {"leaf-spine", NetworkKind::kLeafSpine},
                                        {"fat-tree", NetworkKind::kFatTree}},
             core::Spec("scale-out network: none, rail-aligned leaf-spine, or k-ary fat tree"));
    v.field("leaf_down_ports", leaf_down_ports,
            core::Spec("leaf-spine: chip ports per leaf switch").range(0, 4096));
    v.field("leaf_up_ports", leaf_up_ports,
            core::Spec("leaf-spine: uplinks per leaf (0: a single tier)").range(0, 4096));
    v.field("spine_ports", spine_ports, core::Spec("leaf-spine: ports per spine").range(0, 4096));
    // Every switch keeps a forwarding entry per endpoint: k = 48 is 27648 hosts and 2880
    // switches, a few hundred MB of tables.
    v.field("fat_tree_k", fat_tree_k,
            core::Spec("fat-tree: switch radix k (even; at most 48)").range(0, 48));
    v.field("uplink_rate", uplink_rate,
            core::Spec("rate of switch-to-switch links; 0 means the NIC port speed").min(0));
    v.section("endpoint_cable", endpoint_cable,
              core::Spec("chip-to-leaf links: 1us by default, as in network.md's anchors"));
    v.section("switch_cable", switch_cable,
              core::Spec("switch-to-switch links: 1us by default ([N2])"));
    v.section("switch", switch_config,
              core::Spec("every switch's parameters (ports and ECMP seed are set per switch)"));
    v.field("flow_solve_interval", flow_solve_interval,
            core::Spec("--network flow: links' shares recomputed at most once per this interval, "
                       "a flow's start and end taking effect at the next multiple of it (0: at "
                       "once, exact); batches many changes into one recomputation, which seldom "
                       "saves time since each recomputes only what its changes reach")
                .min(0)
                .source("[D] 0; docs/network.md (Flow-level network) measures what 100 ns costs "
                        "in accuracy and saves in time"));
  }
};

struct ScaleOutConfig {
  int ports_per_chip = 0;
  core::Bandwidth port_speed{};
  template <class V>
  void describe(V& v) {
    v.field("ports_per_chip", ports_per_chip,
            core::Spec("NIC ports per chip reserved for scale-out")
                .range(0, 256)
                .source("[S3], [S10]"));
    v.field("port_speed", port_speed,
            core::Spec("line rate of a scale-out port and its link, when not the NIC's port "
                       "speed (0), e.g. an IPU's share of its machine's GW-Links")
                .min(0));
  }
};

// Where a training step's compute comes from: Synapse recipes run on the modeled chip, or the
// IPU's bulk-synchronous roofline (hw/ipulink/bsp_roofline.h) over the `ipu` section.
enum class ComputeModel { kSynapse, kIpuRoofline };

struct SystemConfig {
  std::string name;
  std::string description;
  chip::ChipConfig chip;
  BoxConfig box;
  int boxes = 1;
  ScaleOutConfig scale_out;
  NetworkConfig network;
  HostConfig host;
  ComputeModel compute = ComputeModel::kSynapse;
  ipulink::IpuConfig ipu;

  template <class V>
  void describe(V& v) {
    v.field("name", name, core::Spec("system name").required());
    v.field("description", description, core::Spec("one line about the system"));
    v.section("chip", chip, core::Spec("the chip preset and its overrides").required());
    v.section("box", box, core::Spec("chips per box and their wiring"));
    v.field("boxes", boxes, core::Spec("boxes in the system").range(1, 65536));
    v.section("scale_out", scale_out, core::Spec("ports that leave the box"));
    v.section("network", network, core::Spec("the switches that join the boxes"));
    v.section("host", host, core::Spec("each box's host: sockets, PCIe switches, memory, CPU"));
    v.choice("compute", compute,
             core::Choices<ComputeModel>{{"synapse", ComputeModel::kSynapse},
                                         {"ipu-roofline", ComputeModel::kIpuRoofline}},
             core::Spec("training's compute: recipes run on the modeled chip, or the IPU "
                        "roofline of the ipu section"));
    v.section("ipu", ipu, core::Spec("the IPU whose roofline ipu-roofline compute takes"));
  }

  int chips() const { return boxes * box.chips; }
  // The hosts: each box's servers, each serving an equal block of its chips.
  int hosts() const { return boxes * host.servers; }
  int chips_per_host() const { return box.chips / host.servers; }
  // The rate of switch-to-switch links: the network's uplink rate, or the NICs' port speed.
  core::Bandwidth uplink_rate() const {
    return network.uplink_rate.bits_per_second > 0 ? network.uplink_rate : chip.nic.port_speed;
  }

  // NIC ports a chip needs for its box wiring.
  int scale_up_ports_per_chip() const {
    if (box.wiring == BoxWiring::kLadder) {
      return box.ladder.links_per_rung + 2 * box.ladder.links_per_column_neighbour;
    }
    return box.wiring == BoxWiring::kAllToAll ? (box.chips - 1) * box.links_per_peer : 0;
  }
  // The rate of a chip's scale-out links.
  core::Bandwidth scale_out_rate() const {
    return scale_out.port_speed.bits_per_second > 0 ? scale_out.port_speed : chip.nic.port_speed;
  }

  void check(core::ConfigChecks& c) const {
    const int needed = scale_up_ports_per_chip() + scale_out.ports_per_chip;
    if (needed > chip.nic.ports) {
      c.fail("chip.nic.ports",
             "the system needs " + std::to_string(needed) + " NIC ports per chip (" +
                 std::to_string(scale_up_ports_per_chip()) + " scale-up + " +
                 std::to_string(scale_out.ports_per_chip) + " scale-out) but the chip has " +
                 std::to_string(chip.nic.ports));
    }
    if (box.wiring == BoxWiring::kLadder && box.chips != 2 * box.ladder.rungs) {
      c.fail("box.ladder.rungs", std::to_string(box.ladder.rungs) + " rungs of two hold " +
                                     std::to_string(2 * box.ladder.rungs) +
                                     " chips but the box has " + std::to_string(box.chips));
    }
    if (host.gateway.chips > 0 && box.chips % host.gateway.chips != 0) {
      c.fail("host.gateway.chips", "the box's " + std::to_string(box.chips) +
                                       " chips must split evenly over gateways of " +
                                       std::to_string(host.gateway.chips));
    }
    if (host.servers > 1 && host.gateway.chips == 0) {
      c.fail("host.servers",
             "more than one host server per box needs gateways (host.gateway.chips): chips on a "
             "host's PCIe tree belong to that one host");
    }
    if (box.chips % host.servers != 0 ||
        (host.gateway.chips > 0 && (box.chips / host.servers) % host.gateway.chips != 0)) {
      c.fail("host.servers", "the box's " + std::to_string(box.chips) +
                                 " chips must split evenly over " + std::to_string(host.servers) +
                                 " servers, each serving whole gateways");
    }
    if (box.chips > host.sockets && box.chips % host.sockets != 0) {
      c.fail("host.sockets", "the box's " + std::to_string(box.chips) +
                                 " chips must split evenly over the host's sockets");
    }
    // Boxes whose chips keep no scale-out ports meet only through their hosts (IPU-Servers).
    if (boxes > 1 && network.kind == NetworkKind::kNone && scale_out.ports_per_chip > 0) {
      c.fail("network.kind",
             "several boxes whose chips keep scale-out ports need a scale-out network to reach "
             "each other");
    }
    if (network.kind != NetworkKind::kNone && scale_out.ports_per_chip == 0) {
      c.fail("scale_out.ports_per_chip", "a scale-out network needs at least one port per chip");
    }
  }
};

// Presets and files for systems; a system's `chip:` key holds a chip preset. A system file also
// holds the collectives' section, so files are bound by collectives::load_system_file.
core::ConfigLoader make_system_loader();

}  // namespace podsim::system
