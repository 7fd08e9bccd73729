#include "hw/system/system_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/event_queue.h"
#include "core/random.h"

namespace podsim::system {
namespace {

// SystemC names are one identifier per level: "rail0.leaf1" becomes "rail0_leaf1".
std::string module_name(const std::string& dotted) {
  std::string name = dotted;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// A box: the chips that share a chassis, built inside its constructor so that they take its
// name (system.box3.chip5).
class Box : public sc_core::sc_module {
 public:
  Box(sc_core::sc_module_name name, const std::function<void()>& build) : sc_module(name) {
    build();
  }
  std::unique_ptr<HostSide> host;
};

}  // namespace

SystemModel::SystemModel(sc_core::sc_module_name name, const SystemConfig& config,
                         Topology topology, const ModelOptions& options)
    : sc_module(name),
      config_(config),
      topology_(std::move(topology)),
      functional_(options.functional),
      chip_model_(options.chips) {
  build_chips();
  if (options.network == NetworkMode::kFlow) {
    build_flow_network(options);
  } else {
    build_switches(options);
    build_links(options);
  }
  // After the links, which take their keys first in every process.
  notices_ = std::make_unique<HostNotices>("notices", core::event_queue(), topology_.chips);
}

// Every cable's two directions as links; a switch at the far end adds its latency by mode.
void SystemModel::build_flow_network(const ModelOptions& options) {
  flow_ = std::make_unique<flow::FlowNetwork>("flow");
  flow_->set_solve_interval(static_cast<core::TimePs>(config_.network.flow_solve_interval.ps));
  const fabric::SwitchConfig& sw = config_.network.switch_config;
  for (const TopologyLink& link : topology_.links) {
    for (const PortRef to : {link.b, link.a}) {
      flow::FlowLink l;
      l.rate = link.config.rate;
      l.propagation_ps = static_cast<core::TimePs>(link.config.cable.propagation().ps);
      l.to_switch =
          topology_.nodes[static_cast<std::size_t>(to.node)].kind == TopologyNode::Kind::kSwitch;
      l.cut_through = sw.mode == fabric::SwitchMode::kCutThrough;
      l.switch_latency_ps = static_cast<core::TimePs>(sw.pipeline_latency.ps);
      flow_->add_link(l);
    }
  }
  const std::uint64_t seed = options.seed;
  flow_->set_router(
      [this, seed](fabric::EndpointId src, fabric::EndpointId dst, std::uint16_t entropy) {
        if (src >= topology_.endpoints.size()) {
          throw std::invalid_argument(fmt::format("flow from unknown endpoint {}", src));
        }
        // Directions are numbered as the links were added above.
        return flow_links(topology_, topology_.endpoints[src], {src, dst, entropy}, seed);
      });
  for (std::size_t i = 0; i < topology_.links.size(); ++i) {
    for (const PortRef end : {topology_.links[i].a, topology_.links[i].b}) {
      const auto& node = topology_.nodes[static_cast<std::size_t>(end.node)];
      if (node.kind != TopologyNode::Kind::kNic) continue;
      nic(node.chip).attach(end.port, *flow_, address(node.chip, end.port),
                            topology_.links[i].config.rate);
    }
  }
}

namespace {

template <class T>
void destroy_newest_first(std::vector<std::unique_ptr<T>>& objects) {
  while (!objects.empty()) objects.pop_back();
}

}  // namespace

// The kernel's registries look a module's ports up from the newest one registered: taken apart
// newest first, a 1024-chip system goes in well under a second; oldest first (a vector's own
// order) took seven.
SystemModel::~SystemModel() {
  attached_.clear();
  flow_.reset();
  destroy_newest_first(links_);
  destroy_newest_first(switches_);
  const auto per_box = static_cast<std::size_t>(config_.box.chips);
  while (!boxes_.empty()) {
    static_cast<Box&>(*boxes_.back()).host.reset();
    for (std::size_t i = 0; i < per_box && !chips_.empty(); ++i) chips_.pop_back();
    boxes_.pop_back();
  }
}

void SystemModel::build_chips() {
  const int per_box = config_.box.chips;
  // Nothing runs on a coarse chip's engines or queues (software talks to its NIC and times its
  // engines by rate), and they are most of what a chip takes to build.
  const auto blocks = chip_model_ == ChipModel::kCoarse ? chip::Chip::Blocks::kNetworkSide
                                                        : chip::Chip::Blocks::kAll;
  for (int box = 0; box * per_box < topology_.chips; ++box) {
    std::unique_ptr<HostSide> host;
    auto made = std::make_unique<Box>(fmt::format("box{}", box).c_str(), [&] {
      std::vector<chip::Chip*> chips;
      for (int local = 0; local < per_box; ++local) {
        const int index = box * per_box + local;
        const auto& node = topology_.nodes[static_cast<std::size_t>(topology_.nic_of_chip(index))];
        chips_.push_back(std::make_unique<chip::Chip>(
            fmt::format("chip{}", local).c_str(), config_.chip, node.ports, functional_, blocks));
        chips.push_back(chips_.back().get());
      }
      host = std::make_unique<HostSide>("host", config_.host, chips, functional_);
    });
    hosts_.push_back(host.get());
    made->host = std::move(host);
    boxes_.push_back(std::move(made));
  }
}

void SystemModel::build_switches(const ModelOptions& options) {
  switches_.resize(topology_.nodes.size());
  for (std::size_t n = 0; n < topology_.nodes.size(); ++n) {
    const auto& node = topology_.nodes[n];
    if (node.kind != TopologyNode::Kind::kSwitch) continue;
    fabric::SwitchConfig sw = config_.network.switch_config;
    sw.ports = node.ports;
    sw.ecmp_seed = switch_ecmp_seed(options.seed, static_cast<int>(n));
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

bool SystemModel::congestion_free() const {
  for (const auto& s : switches_) {
    if (s && s->red_decisions() > 0) return false;
  }
  for (const auto& l : links_) {
    const fabric::CableConfig& cable = l->config().cable;
    if (cable.loss_rate > 0 || cable.corruption_rate > 0) return false;
  }
  return true;
}

double SystemModel::link_bytes(int index, int side) {
  if (flow_) return flow_->carried_bytes(2 * index + side);
  return static_cast<double>(link(index).stats(side).bytes->value());
}

fabric::EndpointId SystemModel::address(int chip, int port) const {
  return topology_.endpoint_of_port[static_cast<std::size_t>(topology_.nic_of_chip(chip))]
                                   [static_cast<std::size_t>(port)];
}

}  // namespace podsim::system
