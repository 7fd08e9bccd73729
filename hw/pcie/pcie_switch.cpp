#include "hw/pcie/pcie_switch.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/kernel.h"

namespace podsim::pcie {

PcieSwitch::PcieSwitch(sc_core::sc_module_name name, const PcieSwitchConfig& config)
    : sc_module(name),
      from_host("from_host"),
      to_host("to_host"),
      to_device("to_device"),
      from_device("from_device"),
      config_(config) {
  core::validate_config(config_);
  from_host.register_b_transport(this, &PcieSwitch::from_host_transport);
  from_device.register_b_transport(this, &PcieSwitch::from_device_transport);
}

void PcieSwitch::check_port(int port) const {
  if (port < 0 || port >= config_.downstream_ports) {
    throw std::invalid_argument(fmt::format("{}: downstream port {} is not within 0-{}", name(),
                                            port, config_.downstream_ports - 1));
  }
}

void PcieSwitch::map(int port, std::uint64_t base, std::uint64_t size) {
  check_port(port);
  router_.add_window(port, base, size);
}

void PcieSwitch::map_buses(int port, int first_bus, int last_bus) {
  check_port(port);
  router_.add_buses(port, first_bus, last_bus);
}

void PcieSwitch::end_of_elaboration() {
  if (static_cast<int>(to_device.size()) != config_.downstream_ports) {
    throw std::invalid_argument(fmt::format("{}: {} downstream ports configured, {} bound", name(),
                                            config_.downstream_ports, to_device.size()));
  }
}

void PcieSwitch::from_host_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const auto port = router_.route(trans);
  if (!port) return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  delay += core::to_sc_time(config_.latency);
  to_device[*port]->b_transport(trans, delay);
}

// A device's request goes to a peer when a downstream window holds it, else toward the host.
void PcieSwitch::from_device_transport(int port, tlm::tlm_generic_payload& trans,
                                       sc_core::sc_time& delay) {
  delay += core::to_sc_time(config_.latency);
  const auto peer = config_request(trans) ? std::nullopt : router_.route(trans);
  if (peer && *peer != port) return to_device[*peer]->b_transport(trans, delay);
  to_host->b_transport(trans, delay);
}

}  // namespace podsim::pcie
