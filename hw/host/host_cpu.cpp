#include "hw/host/host_cpu.h"

#include <algorithm>
#include <string>

#include "core/kernel.h"

namespace podsim::host {

HostCpu::HostCpu(sc_core::sc_module_name name, const HostCpuConfig& config, RootComplex& root)
    : sc_module(name), to_root("to_root"), config_(config), root_(root) {
  core::validate_config(config_);
  to_root.bind(root.from_cpu);
  root.add_interrupt_handler([this](std::uint64_t, std::uint32_t data) { interrupt(data); });
}

void HostCpu::run(Program program) {
  sc_core::sc_spawn_options options;
  // A program spawned from a process is named under it: the CPU's own name keeps programs of
  // several hosts that one process starts apart.
  std::string cpu = name();
  std::replace(cpu.begin(), cpu.end(), '.', '_');
  sc_core::sc_spawn([this, program = std::move(program)] { program(*this); },
                    (cpu + "_program" + std::to_string(programs_++)).c_str(), &options);
}

tlm::tlm_response_status HostCpu::access(tlm::tlm_command command, std::uint64_t address,
                                         std::uint8_t* data, std::uint32_t length) {
  tlm::tlm_generic_payload trans;
  trans.set_command(command);
  trans.set_address(address);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = core::to_sc_time(config_.uncore_latency);
  to_root->b_transport(trans, delay);
  // A memory write is posted: the core goes on once it has left, while the write travels on
  // (PCIe keeps later requests behind it). Reads and configuration writes wait for completion.
  if (command == tlm::TLM_WRITE_COMMAND && !root_.is_configuration(address)) {
    core::sleep(config_.uncore_latency);
  } else {
    core::sleep(core::Duration{core::to_duration(delay).ps + config_.uncore_latency.ps});
  }
  return trans.get_response_status();
}

tlm::tlm_response_status HostCpu::read(std::uint64_t address, void* data, std::uint32_t length) {
  return access(tlm::TLM_READ_COMMAND, address, static_cast<std::uint8_t*>(data), length);
}

tlm::tlm_response_status HostCpu::write(std::uint64_t address, const void* data,
                                        std::uint32_t length) {
  // TLM's payload points at mutable data, but a write target only reads it.
  return access(tlm::TLM_WRITE_COMMAND, address,
                const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(data)), length);
}

tlm::tlm_response_status HostCpu::config_read32(int bus, std::uint32_t offset,
                                                std::uint32_t& value) {
  std::uint8_t bytes[4] = {};
  const auto status = read(root_.ecam_address(bus, 0, 0, offset), bytes, 4);
  value = static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
          static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
  return status;
}

tlm::tlm_response_status HostCpu::config_write32(int bus, std::uint32_t offset,
                                                 std::uint32_t value) {
  const std::uint8_t bytes[4] = {
      static_cast<std::uint8_t>(value), static_cast<std::uint8_t>(value >> 8),
      static_cast<std::uint8_t>(value >> 16), static_cast<std::uint8_t>(value >> 24)};
  return write(root_.ecam_address(bus, 0, 0, offset), bytes, 4);
}

void HostCpu::on_interrupt(std::uint32_t data, Handler handler) {
  if (!handler) {
    handlers_.erase(data);
    return;
  }
  handlers_[data] = std::move(handler);
}

void HostCpu::interrupt(std::uint32_t data) {
  const auto it = handlers_.find(data);
  if (it == handlers_.end()) {
    ++spurious_;
    return;
  }
  it->second();
}

}  // namespace podsim::host
