#include "hw/pcie/routing.h"

#include <fmt/format.h>

#include <stdexcept>

namespace podsim::pcie {

void AddressRouter::add_window(int port, std::uint64_t base, std::uint64_t size) {
  if (size == 0 || base + size < base) {
    throw std::invalid_argument(fmt::format(
        "AddressRouter: window {:#x}+{:#x} for port {} is empty or wraps", base, size, port));
  }
  windows_.push_back({port, base, size});
}

void AddressRouter::add_buses(int port, int first_bus, int last_bus) {
  if (first_bus < 0 || last_bus > 255 || first_bus > last_bus) {
    throw std::invalid_argument(
        fmt::format("AddressRouter: bus range {}-{} for port {} is not within 0-255", first_bus,
                    last_bus, port));
  }
  buses_.push_back({port, first_bus, last_bus});
}

std::optional<int> AddressRouter::route(std::uint64_t address, std::uint64_t length) const {
  for (const Window& w : windows_) {
    if (address >= w.base && address - w.base < w.size && length <= w.size - (address - w.base)) {
      return w.port;
    }
  }
  return std::nullopt;
}

std::optional<int> AddressRouter::route_bus(int bus) const {
  for (const Buses& b : buses_) {
    if (bus >= b.first && bus <= b.last) return b.port;
  }
  return std::nullopt;
}

std::optional<int> AddressRouter::route(const tlm::tlm_generic_payload& trans) const {
  if (const ConfigRequest* config = config_request(trans)) return route_bus(config->bus);
  return route(trans.get_address(), trans.get_data_length());
}

}  // namespace podsim::pcie
