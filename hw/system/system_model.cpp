#include "hw/system/system_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "hw/core/random.h"

namespace podsim::system {
namespace {

// SystemC names are one identifier per level: "box3.chip5.nic" becomes "box3_chip5_nic".
std::string module_name(const std::string& dotted) {
  std::string name = dotted;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// Independent streams per component: the run seed mixed with a salt and the component's index.
std::uint64_t component_seed(std::uint64_t run_seed, std::uint64_t salt, std::uint64_t index) {
  return core::Random::mix(core::Random::mix(run_seed ^ (salt << 56)) + index);
}

}  // namespace

SystemModel::SystemModel(sc_core::sc_module_name name, const SystemConfig& config,
                         Topology topology, const ModelOptions& options)
    : sc_module(name), config_(config), topology_(std::move(topology)) {
  build_chips(options);
  build_switches(options);
  build_links(options);
}

core::MemoryTargetConfig chip_memory_config(const SystemConfig& config) {
  const auto& chip = config.chip;
  core::MemoryTargetConfig memory;
  // A host without HBM moves payload over PCIe to host memory; a sparse store costs nothing
  // for its nominal size.
  const bool has_hbm = chip.hbm.bandwidth.bits_per_second > 0;
  memory.bandwidth = has_hbm ? chip.hbm.bandwidth : chip.pcie.bandwidth;
  memory.size = has_hbm ? chip.hbm.capacity : core::ByteSize{64ull << 30};
  memory.functional = chip.nic.roce.functional;
  return memory;
}

void SystemModel::build_chips(const ModelOptions&) {
  const auto memory = chip_memory_config(config_);
  for (int chip = 0; chip < topology_.chips; ++chip) {
    const auto& node = topology_.nodes[static_cast<std::size_t>(topology_.nic_of_chip(chip))];
    const std::string base = module_name(node.name.substr(0, node.name.rfind('.')));
    memories_.push_back(std::make_unique<core::MemoryTarget>((base + "_memory").c_str(), memory));
    nics_.push_back(
        std::make_unique<roce::Nic>((base + "_nic").c_str(), node.ports, config_.chip.nic.roce));
    nics_.back()->memory_socket.bind(memories_.back()->target_socket);
    engines_.push_back(std::make_unique<chip::ReductionEngine>(
        (base + "_reduction").c_str(), config_.chip.reduction, memory.functional));
    engines_.back()->memory_socket.bind(memories_.back()->target_socket);
    sequencers_.push_back(std::make_unique<chip::Sequencer>(
        (base + "_sequencer").c_str(), config_.chip.sequencer, *nics_.back(), *engines_.back()));
  }
}

void SystemModel::build_switches(const ModelOptions& options) {
  switches_.resize(topology_.nodes.size());
  for (std::size_t n = 0; n < topology_.nodes.size(); ++n) {
    const auto& node = topology_.nodes[n];
    if (node.kind != TopologyNode::Kind::kSwitch) continue;
    fabric::SwitchConfig sw = config_.network.switch_config;
    sw.ports = node.ports;
    sw.ecmp_seed = component_seed(options.seed, 1, n);
    switches_[n] = std::make_unique<fabric::Switch>(module_name(node.name).c_str(), sw);
    switches_[n]->routes() = std::move(topology_.routes[n]);
  }
}

void SystemModel::build_links(const ModelOptions& options) {
  for (std::size_t i = 0; i < topology_.links.size(); ++i) {
    auto config = topology_.links[i].config;
    config.seed = component_seed(options.seed, 2, i);
    links_.push_back(std::make_unique<fabric::Link>(fmt::format("link{}", i).c_str(), config));
    const PortRef ends[2] = {topology_.links[i].a, topology_.links[i].b};
    for (int side = 0; side < 2; ++side) {
      const PortRef end = ends[side];
      if (auto* sw = switches_[static_cast<std::size_t>(end.node)].get()) {
        sw->attach(end.port, *links_.back(), side);
      } else {
        const int chip = topology_.nodes[static_cast<std::size_t>(end.node)].chip;
        nic(chip).attach(end.port, *links_.back(), side, address(chip, end.port));
      }
    }
  }
}

fabric::EndpointId SystemModel::address(int chip, int port) const {
  return topology_.endpoint_of_port[static_cast<std::size_t>(topology_.nic_of_chip(chip))]
                                   [static_cast<std::size_t>(port)];
}

}  // namespace podsim::system
