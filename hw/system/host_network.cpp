#include "hw/system/host_network.h"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/pcie/pcie_config.h"

namespace podsim::system {
namespace {

[[noreturn]] void fail(const std::string& key, const std::string& message) {
  throw std::invalid_argument(fmt::format("host.network.{}: {}", key, message));
}

// A host as the network sees it: its NICs, PCIe to its memory, and its CPU's reduction rate as
// the one engine a collective's reductions take.
chip::ChipConfig host_endpoint(const HostConfig& host) {
  const HostNetworkConfig& n = host.network;
  chip::ChipConfig c;
  c.name = "host";
  c.description = "a host's NICs on the front-end network and its CPU's reductions";
  c.nic.ports = n.ports;
  c.nic.port_speed = n.port_speed;
  const bool tcp = n.transport == HostTransport::kTcp;
  // A 1500-byte Ethernet frame carries at most 1024 bytes in the NIC model's power-of-two
  // payloads (as RoCE's path MTU over such a network is 1024).
  c.nic.roce.mtu = tcp ? kTcpPayload : n.mtu;
  if (tcp) {
    c.nic.roce.tx_pipeline_latency = n.stack_latency;
    c.nic.roce.rx_pipeline_latency = n.stack_latency;
    // The kernel's congestion window instead of DCQCN, in the best-effort class: TCP runs
    // without PFC, so congested switches drop its frames (or mark them, with ECN).
    c.nic.roce.dcqcn.enabled = false;
    c.nic.roce.window_control = true;
    c.nic.roce.window = n.tcp;
    c.nic.roce.data_priority = kTcpPriority;
  }
  c.pcie.link = pcie::gen4_x16();
  c.dma.engines = 1;
  c.dma.engine.bandwidth = host.cpu.reduce_bandwidth;
  return c;
}

// Rail-aligned switches: one per rail when the hosts fit its ports, else leaves of half its
// ports and as many spines as their uplinks fill.
NetworkConfig front_end(const HostNetworkConfig& n, int hosts) {
  NetworkConfig net;
  net.kind = NetworkKind::kLeafSpine;
  net.endpoint_cable = n.cable;
  net.switch_cable = n.cable;
  if (hosts <= n.switch_ports) {
    net.leaf_down_ports = hosts;
    return net;
  }
  const int half = n.switch_ports / 2;
  const int leaves = hosts / half;
  if (hosts % half != 0 || (leaves * half) % n.switch_ports != 0 ||
      half % (leaves * half / n.switch_ports) != 0) {
    fail("switch_ports",
         fmt::format("{} hosts do not spread over leaves of {} host ports under spines of {}; "
                     "use switches of more ports (or a host count that fills them)",
                     hosts, half, n.switch_ports));
  }
  net.leaf_down_ports = half;
  net.leaf_up_ports = half;
  net.spine_ports = n.switch_ports;
  return net;
}

// The chips' scale-out leaves and spines with each host in its chips' place: host port r on
// rail r's leaf that holds the host's chips, the same uplinks, spines, cables and switch
// settings. Simulated apart from the chips' traffic, which no strategy runs beside the hosts'
// (training/host_staging.h).
NetworkConfig chips_switches(const SystemConfig& system) {
  const NetworkConfig& chips = system.network;
  const int per_host = system.chips_per_host();
  if (chips.kind != NetworkKind::kLeafSpine) {
    fail("attach", fmt::format("scale-out needs the chips' leaf-spine switches; {}'s scale-out "
                               "network is not one (use front-end)",
                               system.name));
  }
  if (chips.leaf_down_ports % per_host != 0) {
    fail("attach",
         fmt::format("scale-out puts each host on its chips' leaf, but {}'s leaves of {} chip "
                     "ports split its hosts' blocks of {} chips (use front-end)",
                     system.name, chips.leaf_down_ports, per_host));
  }
  if (system.host.network.ports > system.scale_out.ports_per_chip) {
    fail("attach",
         fmt::format("scale-out gives each host port a rail of the chips' switches, but "
                     "the hosts' {} ports outnumber {}'s {} rails",
                     system.host.network.ports, system.name, system.scale_out.ports_per_chip));
  }
  NetworkConfig net = chips;
  net.leaf_down_ports = chips.leaf_down_ports / per_host;
  net.uplink_rate = system.uplink_rate();
  return net;
}

}  // namespace

SystemConfig host_network_system(const SystemConfig& system) {
  const HostNetworkConfig& n = system.host.network;
  if (!n.enabled) {
    fail("enabled",
         fmt::format("{}'s hosts have no front-end network to reach each other over", system.name));
  }
  SystemConfig h;
  h.name = system.name + "-hosts";
  const int hosts = system.hosts();
  h.description = fmt::format("the front-end network of {}'s {} hosts", system.name, hosts);
  h.chip = host_endpoint(system.host);
  h.box.chips = 1;
  h.box.wiring = BoxWiring::kNone;
  h.boxes = hosts;
  h.scale_out.ports_per_chip = hosts > 1 ? n.ports : 0;
  h.host = system.host;
  h.host.servers = 1;  // each host is a box of its own here
  if (hosts > 1) {
    h.network = n.attach == HostAttach::kScaleOut ? chips_switches(system) : front_end(n, hosts);
  }
  h.network.flow_solve_interval = system.network.flow_solve_interval;
  return h;
}

}  // namespace podsim::system
