#include "hw/system/host_side.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace podsim::system {
namespace {

// A chip's window: its BARs side by side, each aligned to its size, rounded up to a power of two.
std::uint64_t window_bytes(const pcie::PcieEndpointConfig& endpoint) {
  std::uint64_t total = 0;
  for (const auto& bar : endpoint.bars) total += bar.size.bytes;
  std::uint64_t window = 1;
  while (window < total) window <<= 1;
  return window;
}

host::HostMemoryConfig memory_config(host::HostMemoryConfig memory, bool functional) {
  memory.functional = functional;
  return memory;
}

host::RootComplexConfig root_config(host::RootComplexConfig root, int sockets) {
  root.root_ports = sockets;
  return root;
}

}  // namespace

HostSide::HostSide(sc_core::sc_module_name name, const HostConfig& config,
                   std::vector<chip::Chip*> chips, bool functional)
    : sc_module(name),
      config_(config),
      window_(chips.empty() ? 0 : window_bytes(chips.front()->config().pcie.endpoint)),
      memory_(
          std::make_unique<host::HostMemory>("memory", memory_config(config.memory, functional))),
      root_(std::make_unique<host::RootComplex>(
          "root", root_config(config.root, config.sockets_used(static_cast<int>(chips.size()))))),
      cpu_(std::make_unique<host::HostCpu>("cpu", config.cpu, *root_)) {
  const int n = static_cast<int>(chips.size());
  const int sockets = config.sockets_used(n);
  if (n % sockets != 0) {
    throw std::invalid_argument(
        fmt::format("{}: {} chips do not split evenly over {} sockets (host.sockets)", this->name(),
                    n, sockets));
  }
  root_->to_memory.bind(memory_->target_socket);
  const int per_socket = n / sockets;
  for (int s = 0; s < sockets; ++s) wire_socket(s, chips, s * per_socket, per_socket);
}

std::uint64_t HostSide::window_base(int local) const {
  return config_.bar_windows.value + static_cast<std::uint64_t>(local) * window_;
}

// Root port `socket` -> uplink -> the socket's switch -> one link per chip.
void HostSide::wire_socket(int socket, const std::vector<chip::Chip*>& chips, int first,
                           int count) {
  pcie::PcieSwitchConfig sw = config_.pcie_switch;
  sw.downstream_ports = count;
  switches_.push_back(
      std::make_unique<pcie::PcieSwitch>(fmt::format("switch{}", socket).c_str(), sw));
  pcie::PcieSwitch& down = *switches_.back();
  links_.push_back(
      std::make_unique<pcie::PcieLink>(fmt::format("uplink{}", socket).c_str(), config_.uplink));
  pcie::PcieLink& up = *links_.back();
  root_->to_device.bind(up.from_host);
  up.to_device.bind(down.from_host);
  down.to_host.bind(up.from_device);
  up.to_host.bind(root_->from_device);
  root_->map(socket, window_base(first), window_ * static_cast<std::uint64_t>(count));
  root_->map_buses(socket, bus(first), bus(first + count - 1));
  for (int port = 0; port < count; ++port) {
    const int local = first + port;
    chip::Chip& chip = *chips[static_cast<std::size_t>(local)];
    links_.push_back(std::make_unique<pcie::PcieLink>(fmt::format("link{}", local).c_str(),
                                                      chip.config().pcie.link));
    pcie::PcieLink& link = *links_.back();
    down.to_device.bind(link.from_host);
    link.to_device.bind(chip.pcie().from_host);
    chip.pcie().to_host.bind(link.from_device);
    link.to_host.bind(down.from_device);
    down.map(port, window_base(local), window_);
    down.map_buses(port, bus(local), bus(local));
  }
}

}  // namespace podsim::system
