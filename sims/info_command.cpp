// `podsim info`: the resolved system, its chips, ports, links and switches, and the ceilings its
// wiring puts on communication.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "hw/chip/chip.h"
#include "hw/system/system_ceilings.h"
#include "hw/system/topology.h"
#include "sims/command.h"

namespace podsim::sims {
namespace {

using core::format_gbytes_per_second;
using core::to_string;

std::string wiring_text(const system::BoxConfig& box) {
  if (box.wiring == system::BoxWiring::kNone) return "none (chips not wired to each other)";
  if (box.wiring == system::BoxWiring::kLadder) {
    return fmt::format(
        "IPU-Link {} of {} rungs of two, {} links per rung, {} to each column "
        "neighbour",
        box.ladder.torus ? "torus" : "ladder", box.ladder.rungs, box.ladder.links_per_rung,
        box.ladder.links_per_column_neighbour);
  }
  return fmt::format("all-to-all, {} link{} per peer", box.links_per_peer,
                     box.links_per_peer == 1 ? "" : "s");
}

// The chip's address map as the chip builds it (a chip is elaborated for this, never run).
std::vector<chip::Region> address_map(const chip::ChipConfig& c) {
  chip::Chip chip("info_chip", c, c.nic.ports, false);
  return chip.address_map().regions();
}

// One line of a section: its label in a column, then the value.
void row(const char* label, const std::string& value) { fmt::print("  {:<22}{}\n", label, value); }

std::string port_limit(core::Bandwidth b) {
  return b.bits_per_second > 0 ? format_gbytes_per_second(b) : std::string("no limit");
}

void print_chip(const chip::ChipConfig& c, const std::vector<chip::Region>& map) {
  fmt::print("chip      {}: {}\n", c.name, c.description);
  row("TPC cores", c.tpc.cores == 0
                       ? std::string("none")
                       : fmt::format("{} with a QMAN each, {:.2f} GHz, VLM {}, SLM {}", c.tpc.cores,
                                     c.tpc.core.clock.hertz / 1e9, to_string(c.tpc.core.vlm),
                                     to_string(c.tpc.core.slm)));
  row("MME engines", fmt::format("{} ({} BF16 peak)", c.mme.engines, to_string(c.mme.peak_bf16)));
  row("SRAM", c.sram.size.bytes == 0 ? std::string("none")
                                     : fmt::format("{}, {}", to_string(c.sram.size),
                                                   format_gbytes_per_second(c.sram.bandwidth)));
  row("HBM", fmt::format("{}, {} stacks, {}, {}, {} model", c.hbm.generation, c.hbm.stacks,
                         to_string(c.hbm.capacity), format_gbytes_per_second(c.hbm.bandwidth),
                         core::choice_name(hbm::HbmConfig::model_choices(), c.hbm.model)));
  row("NoC",
      fmt::format("{} per access, ports: {} per engine, {} per block", to_string(c.noc.latency),
                  port_limit(c.noc.initiator_port), port_limit(c.noc.target_port)));
  row("PCIe",
      fmt::format("Gen{} x{}, {} DMA per direction", static_cast<int>(c.pcie.link.generation),
                  c.pcie.link.lanes, format_gbytes_per_second(chip::pcie_dma_bandwidth(c.pcie))));
  row("NIC", fmt::format("{} x {} RoCE v2, MTU {}", c.nic.ports, to_string(c.nic.port_speed),
                         c.nic.roce.mtu));
  const int engines =
      static_cast<int>(std::count_if(map.begin(), map.end(), [](const chip::Region& r) {
        return r.name.rfind("dma", 0) == 0 && r.name.find("_qman") != r.name.npos;
      }));
  row("DMA engines", fmt::format("{} with a QMAN each, {} each", engines,
                                 format_gbytes_per_second(c.dma.engine.bandwidth)));
  row("sync managers",
      fmt::format("4 x {} objects, {} monitors", c.sync_manager.sobs, c.sync_manager.monitors));
  fmt::print("  address map\n");
  for (const auto& r : map) {
    fmt::print("    {:<20}{:#014x}  {}\n", r.name, r.base, to_string(core::ByteSize{r.size}));
  }
}

// An IPU as the IPU roofline sees it (hw/ipulink/ipu_config.h): its blocks are not modeled, so
// the Gaudi-shaped lines (TPCs, MME, HBM, queues, address map) would describe nothing real.
void print_ipu_chip(const system::SystemConfig& s) {
  const ipulink::IpuConfig& ipu = s.ipu;
  fmt::print("chip      {}: {}\n", s.chip.name, s.chip.description);
  row("compute", fmt::format("IPU roofline (bulk-synchronous): {} tiles, {} FP16 peak", ipu.tiles,
                             to_string(ipu.peak_fp16)));
  row("In-Processor memory",
      fmt::format("{} ({} per tile), {}", to_string(core::ByteSize{ipu.memory_bytes()}),
                  to_string(ipu.memory_per_tile), format_gbytes_per_second(ipu.memory_bandwidth)));
  row("exchange",
      fmt::format("{} all to all, {} to start", format_gbytes_per_second(ipu.exchange_bandwidth),
                  to_string(ipu.exchange_latency)));
  row("sync", fmt::format("{} on chip, {} over the Sync-Links", to_string(ipu.sync_latency),
                          to_string(ipu.sync_link_latency)));
  row("IPU-Links", fmt::format("{} x {} each way", ipu.ipu_links,
                               format_gbytes_per_second(ipu.ipu_link_rate_each_way())));
  row("host link", format_gbytes_per_second(ipu.host_link_rate));
  row("streaming memory", format_gbytes_per_second(ipu.streaming_memory_bandwidth));
  row("fabric ports", fmt::format("{} x {} (IPU-Links and GW-Link on the NIC transport)",
                                  s.chip.nic.ports, to_string(s.chip.nic.port_speed)));
}

// Links by what they join, and switches by tier, counted in the wired graph.
struct GraphCounts {
  int in_box_links = 0, endpoint_links = 0, switch_links = 0;
  int switches_by_tier[3] = {0, 0, 0};
};

GraphCounts count(const system::Topology& t) {
  GraphCounts g;
  using Kind = system::TopologyNode::Kind;
  for (const auto& link : t.links) {
    const bool a_switch = t.nodes[static_cast<std::size_t>(link.a.node)].kind == Kind::kSwitch;
    const bool b_switch = t.nodes[static_cast<std::size_t>(link.b.node)].kind == Kind::kSwitch;
    (a_switch && b_switch   ? g.switch_links
     : a_switch || b_switch ? g.endpoint_links
                            : g.in_box_links)++;
  }
  for (const auto& node : t.nodes) {
    if (node.kind == Kind::kSwitch) g.switches_by_tier[std::min(node.tier, 2)]++;
  }
  return g;
}

std::string network_text(const system::NetworkConfig& n) {
  switch (n.kind) {
    case system::NetworkKind::kNone:
      return "none: scale-out ports are not connected";
    case system::NetworkKind::kLeafSpine:
      return n.leaf_up_ports == 0
                 ? fmt::format("rail-aligned leaves of {} ports, one tier", n.leaf_down_ports)
                 : fmt::format(
                       "rail-aligned leaf-spine: leaves {} down + {} up ({:.2g}:1), spines of {} "
                       "ports",
                       n.leaf_down_ports, n.leaf_up_ports,
                       static_cast<double>(n.leaf_down_ports) / n.leaf_up_ports, n.spine_ports);
    case system::NetworkKind::kFatTree:
      return fmt::format("k={} fat tree", n.fat_tree_k);
  }
  return "";
}

void print_topology(const system::SystemConfig& s, const system::SystemCeilings& c,
                    const GraphCounts& g) {
  fmt::print("topology\n");
  row("chips", fmt::format("{} ({} box{} of {})", c.chips, c.boxes, c.boxes == 1 ? "" : "es",
                           c.chips_per_box));
  row("box wiring", wiring_text(s.box));
  row("network", network_text(s.network));
  row("links", fmt::format("{} in-box point-to-point, {} chip-to-switch, {} switch-to-switch",
                           g.in_box_links, g.endpoint_links, g.switch_links));
  row("scale-out ports",
      fmt::format("{} ({} per chip)", c.scale_out_ports, c.scale_out_ports_per_chip));
  row("switches", fmt::format("{} ({} leaf/edge, {} spine/aggregation, {} core)",
                              g.switches_by_tier[0] + g.switches_by_tier[1] + g.switches_by_tier[2],
                              g.switches_by_tier[0], g.switches_by_tier[1], g.switches_by_tier[2]));
  row("NIC ports per chip",
      fmt::format("{} scale-up + {} scale-out of {} ({} unused)", c.scale_up_ports_per_chip,
                  c.scale_out_ports_per_chip, s.chip.nic.ports, c.unused_ports_per_chip));
}

void print_ceilings(const system::SystemConfig& s, const system::SystemCeilings& c) {
  // A wider label column: the ceilings' labels are longer.
  const auto row = [](const char* label, const std::string& value) {
    fmt::print("  {:<32}{}\n", label, value);
  };
  fmt::print("derived ceilings (one direction; goodput after RoCE v2 framing at MTU {}: {:.2f}%)\n",
             s.chip.nic.roce.mtu, 100 * c.roce_efficiency);
  row("scale-up per chip",
      fmt::format("{} line, {} goodput", format_gbytes_per_second(c.scale_up_line),
                  format_gbytes_per_second(c.scale_up_goodput)));
  row("scale-out per chip",
      fmt::format("{} line, {} goodput", format_gbytes_per_second(c.scale_out_line),
                  format_gbytes_per_second(c.scale_out_goodput)));
  row("scale-out per box", format_gbytes_per_second(c.box_scale_out_line) + " line");
  if (s.box.wiring == system::BoxWiring::kAllToAll) {
    row(fmt::format("in-box all-reduce algbw (n={})", c.chips_per_box).c_str(),
        format_gbytes_per_second(c.all_reduce_algbw_ceiling) + " (goodput x n / 2(n-1))");
  } else {
    row("in-box all-reduce", "rings over neighbours' links (podsim collective measures them)");
  }
  if (s.compute == system::ComputeModel::kIpuRoofline) {
    row("In-Processor memory per chip", format_gbytes_per_second(s.ipu.memory_bandwidth));
  } else {
    row("HBM per chip", format_gbytes_per_second(s.chip.hbm.bandwidth));
  }
  row("host PCIe per chip", format_gbytes_per_second(chip::pcie_dma_bandwidth(s.chip.pcie)));
}

double gbytes(core::Bandwidth b) { return b.bytes_per_second() / 1e9; }

nlohmann::json to_json(const system::SystemConfig& s, const system::SystemCeilings& c,
                       const GraphCounts& g, const std::vector<chip::Region>& map,
                       std::uint64_t seed) {
  nlohmann::json j;
  j["system"] = {{"name", s.name}, {"description", s.description}, {"seed", seed}};
  j["chip"] = {{"name", s.chip.name},
               {"tpc_cores", s.chip.tpc.cores},
               {"mme_engines", s.chip.mme.engines},
               {"hbm_bytes", s.chip.hbm.capacity.bytes},
               {"hbm_gbytes_per_second", gbytes(s.chip.hbm.bandwidth)},
               {"nic_ports", s.chip.nic.ports},
               {"nic_port_gbits_per_second", s.chip.nic.port_speed.bits_per_second / 1e9},
               {"mtu", s.chip.nic.roce.mtu},
               {"sram_bytes", s.chip.sram.size.bytes},
               {"pcie_dma_gbytes_per_second", gbytes(chip::pcie_dma_bandwidth(s.chip.pcie))}};
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& r : map) {
    regions.push_back({{"name", r.name}, {"base", r.base}, {"size", r.size}});
  }
  j["chip"]["address_map"] = regions;
  if (s.compute == system::ComputeModel::kIpuRoofline) {
    j["ipu"] = {{"tiles", s.ipu.tiles},
                {"memory_bytes", s.ipu.memory_bytes()},
                {"memory_gbytes_per_second", gbytes(s.ipu.memory_bandwidth)},
                {"exchange_gbytes_per_second", gbytes(s.ipu.exchange_bandwidth)},
                {"peak_fp16_flops", s.ipu.peak_fp16.flops},
                {"ipu_links", s.ipu.ipu_links}};
  }
  j["topology"] = {
      {"chips", c.chips},
      {"boxes", c.boxes},
      {"chips_per_box", c.chips_per_box},
      {"in_box_links", g.in_box_links},
      {"chip_to_switch_links", g.endpoint_links},
      {"switch_to_switch_links", g.switch_links},
      {"scale_out_ports", c.scale_out_ports},
      {"switches", g.switches_by_tier[0] + g.switches_by_tier[1] + g.switches_by_tier[2]},
      {"scale_up_ports_per_chip", c.scale_up_ports_per_chip},
      {"scale_out_ports_per_chip", c.scale_out_ports_per_chip},
      {"unused_ports_per_chip", c.unused_ports_per_chip}};
  j["ceilings_gbytes_per_second"] = {
      {"scale_up_line_per_chip", gbytes(c.scale_up_line)},
      {"scale_up_goodput_per_chip", gbytes(c.scale_up_goodput)},
      {"scale_out_line_per_chip", gbytes(c.scale_out_line)},
      {"scale_out_goodput_per_chip", gbytes(c.scale_out_goodput)},
      {"scale_out_line_per_box", gbytes(c.box_scale_out_line)},
      {"in_box_all_reduce_algbw", gbytes(c.all_reduce_algbw_ceiling)}};
  j["roce_efficiency"] = c.roce_efficiency;
  return j;
}

class InfoCommand : public Command {
 public:
  int run(const GlobalOptions& options) override {
    const auto system = options.load_system();
    const auto& s = system.config;
    const auto ceilings = system::compute_ceilings(s);
    const auto graph = count(system::build_topology(s, &system.tree));
    const auto map = address_map(s.chip);
    if (!options.json_file.empty()) {
      write_output_file(options.json_file,
                        to_json(s, ceilings, graph, map, options.seed).dump(2) + "\n");
    }
    fmt::print("system    {}: {}\n", s.name, s.description);
    if (s.compute == system::ComputeModel::kIpuRoofline) {
      print_ipu_chip(s);
    } else {
      print_chip(s.chip, map);
    }
    print_topology(s, ceilings, graph);
    print_ceilings(s, ceilings);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_info_command(CLI::App& app) {
  auto command = std::make_unique<InfoCommand>();
  command->subcommand = app.add_subcommand(
      "info", "Show the resolved system: chips, ports, links, switches and derived ceilings");
  return command;
}

}  // namespace podsim::sims
