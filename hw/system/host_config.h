// The description of a box's host: sockets, the PCIe switch under each, the links, host memory,
// the CPU side, where the chips' BAR windows go in host physical memory (host_side.h wires it),
// and the hosts' own NICs on a front-end network (host_network.h builds it).
#pragma once

#include "core/config_binding.h"
#include "core/units.h"
#include "hw/fabric/link.h"
#include "hw/host/host_cpu.h"
#include "hw/host/host_memory.h"
#include "hw/host/root_complex.h"
#include "hw/pcie/pcie_config.h"
#include "hw/pcie/pcie_switch.h"
#include "hw/roce/congestion_window.h"

namespace podsim::system {

enum class HostTransport { kRoce, kTcp };
// Which switches the hosts' NICs plug into: front-end switches of their own, or the leaves and
// spines of the chips' scale-out network, beside their boxes' chips.
enum class HostAttach { kFrontEnd, kScaleOut };

// The hosts' NICs and the switches that join them, apart from the chips' scale-out network.
struct HostNetworkConfig {
  bool enabled = true;
  HostAttach attach = HostAttach::kFrontEnd;
  int ports = 2;
  core::Bandwidth port_speed{100e9};
  HostTransport transport = HostTransport::kRoce;
  std::uint32_t mtu = 4096;
  core::Duration stack_latency{10000000};  // 10 us
  roce::WindowConfig tcp;
  int switch_ports = 32;
  fabric::CableConfig cable{core::Duration{1000000}};

  template <class V>
  void describe(V& v) {
    v.field("enabled", enabled,
            core::Spec("whether the hosts have a front-end network (host-staged collectives "
                       "between boxes need it)"));
    v.choice("attach", attach,
             core::Choices<HostAttach>{{"front-end", HostAttach::kFrontEnd},
                                       {"scale-out", HostAttach::kScaleOut}},
             core::Spec("front-end: switches of the hosts' own (switch_ports, cable); "
                        "scale-out: the chips' leaf-spine switches, each host port on its rail's "
                        "leaf beside its box's chips (a converged fabric)"));
    v.field("ports", ports,
            core::Spec("Ethernet ports of each host's NICs, one rail of switches each (behind "
                       "gateways, also the ports every gateway reaches the host through)")
                .range(1, 16)
                .source("[S14]: a POD64 server's dual-port 100GbE card"));
    v.field("port_speed", port_speed,
            core::Spec("line rate of one host port").positive().source("[N2]: 100 Gb/s"));
    v.choice(
        "transport", transport,
        core::Choices<HostTransport>{{"roce", HostTransport::kRoce}, {"tcp", HostTransport::kTcp}},
        core::Spec("roce: RDMA as the chips' NICs do it; tcp: frames of the Ethernet MTU "
                   "(1500 bytes: 1024 of payload in the model) and the kernel's stack on each "
                   "side of every packet"));
    v.field("mtu", mtu,
            core::Spec("roce: the path MTU (tcp: what a 1500-byte frame holds, 1024)")
                .range(256, 4096)
                .source("[N2]: 4096-byte path MTU"));
    v.field("stack_latency", stack_latency,
            core::Spec("tcp: what the kernel's network stack adds to a packet, on each side")
                .min(0)
                .source("placeholder [U]: a socket's send or receive path, around 10 us"));
    v.section("tcp", tcp,
              core::Spec("tcp: the kernel's congestion control (each connection a QP of the "
                         "packet network; the flow network shares rates max-min instead)"));
    v.field("switch_ports", switch_ports,
            core::Spec("ports of each front-end switch: hosts up to this many share one per "
                       "rail, more take leaves of half of them under spines")
                .range(2, 4096)
                .source("[S14]: an IPU-POD64's top-of-rack switch, 32 x 100GbE"));
    v.section("cable", cable, core::Spec("host and switch links: 1us by default ([N2])"));
  }
};

// Gateways that stand between a host and its chips (an IPU-M2000's IPU-Gateway): each takes
// `chips` chips over their PCIe links and reaches the host over its RoCE host links, which
// host-staged copies then cross instead of the host sockets' PCIe uplinks.
struct GatewayConfig {
  int chips = 0;  // 0: no gateway, the chips sit on the host's PCIe tree
  int ports = 2;
  core::Bandwidth port_speed{100e9};
  std::uint32_t mtu = 4096;
  core::Duration latency{3500000};  // 3.5 us

  template <class V>
  void describe(V& v) {
    v.field("chips", chips,
            core::Spec("chips behind each gateway (0: none, the chips are on the host's PCIe "
                       "tree)")
                .range(0, 1024)
                .source("[S14]: an IPU-M2000's gateway serves its 4 IPUs"));
    v.field("ports", ports,
            core::Spec("the gateway's RoCE host links").range(1, 16).source("[S14]: 2 RNIC"));
    v.field("port_speed", port_speed,
            core::Spec("line rate of one host link").positive().source("[S14]: 100GbE"));
    v.field("mtu", mtu,
            core::Spec("RoCE path MTU of the host links (framing per packet)")
                .range(256, 4096)
                .source("[N2]: 4096-byte path MTU"));
    v.field("latency", latency,
            core::Spec("one copy's way from the gateway to host memory or back, beyond its "
                       "serialization")
                .min(0)
                .source("[D]: the NICs' 0.5 us pipelines on both sides, a 0.5 us switch and two "
                        "1 us cables (the network's defaults, [N2])"));
  }
};

struct HostConfig {
  int servers = 1;  // per box
  int sockets = 2;
  host::HostMemoryConfig memory;
  host::HostCpuConfig cpu;
  host::RootComplexConfig root;
  pcie::PcieSwitchConfig pcie_switch;
  pcie::PcieLinkConfig uplink;
  core::Address bar_windows{0x4000000000};
  HostNetworkConfig network;
  GatewayConfig gateway;

  template <class V>
  void describe(V& v) {
    v.field("servers", servers,
            core::Spec("host servers per box, each serving an equal block of its chips; more "
                       "than one only behind gateways (host.gateway), which disaggregate the "
                       "chips from their hosts")
                .range(1, 64)
                .source("[S14]: an IPU-POD64 takes one server by default, up to four"));
    v.field("sockets", sockets,
            core::Spec("CPU sockets, one root port and one PCIe switch each; the box's chips "
                       "split evenly behind them (a box of fewer chips uses one per chip)")
                .range(1, 16)
                .source("[S9]: dual Xeon, two PCIe Gen4 switches"));
    v.section("memory", memory, core::Spec("host memory"));
    v.section("cpu", cpu, core::Spec("the CPU side the driver runs on"));
    v.section("root", root, core::Spec("the root complex (its root_ports follow sockets)"));
    v.section("pcie_switch", pcie_switch,
              core::Spec("each socket's switch (its downstream_ports follow the chips)"));
    v.section("uplink", uplink, core::Spec("root port to switch links"));
    v.field("bar_windows", bar_windows,
            core::Spec("host physical address where the chips' BAR windows start, one window per "
                       "chip of the size of its BARs")
                .source("placeholder [U]: above a 256 GiB memory map"));
    v.section("network", network,
              core::Spec("the hosts' NICs and front-end network (host_network.h)"));
    v.section("gateway", gateway,
              core::Spec("gateways between the chips and the host (IPU-M2000), whose RoCE host "
                         "links host-staged copies cross (pcie_staging.h)"));
  }

  // The sockets a box of `chips` uses: each its share of the chips behind it (one socket per
  // chip when there are fewer chips than sockets).
  int sockets_used(int chips) const { return chips < 1 ? 1 : (chips < sockets ? chips : sockets); }
};

}  // namespace podsim::system
