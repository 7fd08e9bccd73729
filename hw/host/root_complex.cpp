#include "hw/host/root_complex.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/kernel.h"

namespace podsim::host {

namespace {

constexpr std::uint64_t kEcamSize = 256ull << 20;

}  // namespace

RootComplex::RootComplex(sc_core::sc_module_name name, const RootComplexConfig& config)
    : sc_module(name),
      from_cpu("from_cpu"),
      to_device("to_device"),
      from_device("from_device"),
      to_memory("to_memory"),
      config_(config) {
  core::validate_config(config_);
  core::event_queue();  // made now: modules cannot be created once the simulation runs
  from_cpu.register_b_transport(this, &RootComplex::cpu_transport);
  from_device.register_b_transport(this, &RootComplex::device_transport);
}

void RootComplex::check_port(int port) const {
  if (port < 0 || port >= config_.root_ports) {
    throw std::invalid_argument(
        fmt::format("{}: root port {} is not within 0-{}", name(), port, config_.root_ports - 1));
  }
}

void RootComplex::end_of_elaboration() {
  if (static_cast<int>(to_device.size()) != config_.root_ports) {
    throw std::invalid_argument(fmt::format("{}: {} root ports configured, {} bound", name(),
                                            config_.root_ports, to_device.size()));
  }
}

void RootComplex::map(int port, std::uint64_t base, std::uint64_t size) {
  check_port(port);
  router_.add_window(port, base, size);
}

void RootComplex::map_buses(int port, int first_bus, int last_bus) {
  check_port(port);
  router_.add_buses(port, first_bus, last_bus);
}

void RootComplex::add_interrupt_handler(InterruptHandler handler) {
  handlers_.push_back(std::move(handler));
}

bool RootComplex::is_configuration(std::uint64_t address) const {
  return address >= config_.ecam_base && address - config_.ecam_base < kEcamSize;
}

std::uint64_t RootComplex::ecam_address(int bus, int device, int function,
                                        std::uint32_t offset) const {
  return config_.ecam_base + (static_cast<std::uint64_t>(bus) << 20) +
         (static_cast<std::uint64_t>(device) << 15) + (static_cast<std::uint64_t>(function) << 12) +
         offset;
}

void RootComplex::cpu_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  if (address >= config_.ecam_base && address - config_.ecam_base < kEcamSize) {
    return config_transport(trans, delay);
  }
  const auto port = router_.route(address, trans.get_data_length());
  if (!port) return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  delay += core::to_sc_time(config_.latency);
  to_device[*port]->b_transport(trans, delay);
}

// An ECAM access becomes a configuration request: bus, device and function from the address,
// the register offset as the transaction's address on the way down [P1].
void RootComplex::config_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t address = trans.get_address();
  const std::uint64_t local = address - config_.ecam_base;
  pcie::ConfigRequest request;
  request.bus = static_cast<std::uint8_t>(local >> 20);
  request.device = static_cast<std::uint8_t>(local >> 15 & 31);
  request.function = static_cast<std::uint8_t>(local >> 12 & 7);
  const auto port = router_.route_bus(request.bus);
  if (!port) return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  trans.set_extension(&request);
  trans.set_address(local & 0xFFF);
  delay += core::to_sc_time(config_.latency);
  to_device[*port]->b_transport(trans, delay);
  trans.clear_extension(&request);
  trans.set_address(address);
}

void RootComplex::device_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  delay += core::to_sc_time(config_.latency);
  const std::uint64_t address = trans.get_address();
  const bool msi = address >= config_.msi_base && address - config_.msi_base < config_.msi_size;
  if (!msi) return to_memory->b_transport(trans, delay);
  if (!trans.is_write() || trans.get_data_length() != 4 || trans.get_data_ptr() == nullptr) {
    return trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  }
  const std::uint8_t* d = trans.get_data_ptr();
  const std::uint32_t data =
      static_cast<std::uint32_t>(d[0]) | static_cast<std::uint32_t>(d[1]) << 8 |
      static_cast<std::uint32_t>(d[2]) << 16 | static_cast<std::uint32_t>(d[3]) << 24;
  const std::uint32_t tag = next_tag_++ & 0xFFFFFF;
  in_flight_[tag] = Message{address, data};
  core::event_queue().schedule(core::now_ps() + delay.value(), *this, tag);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void RootComplex::fire(std::uint32_t tag) {
  const auto it = in_flight_.find(tag);
  if (it == in_flight_.end()) return;
  const Message message = it->second;
  in_flight_.erase(it);
  ++interrupts_;
  for (const InterruptHandler& handler : handlers_) handler(message.address, message.data);
}

}  // namespace podsim::host
