#include "hw/chip/chip.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/pcie/pcie_timing.h"

namespace podsim::chip {
namespace {

// Regions' router ports, in the order the chip binds the blocks.
enum Port : int { kMemoryPort = 0, kHostPort, kSramPort };

// Bytes of host physical address space the chip's host window reaches.
constexpr std::uint64_t kHostWindow = 1ull << 48;

AddressMap make_address_map(const ChipConfig& config, const core::MemoryTargetConfig& memory) {
  AddressMap map;
  const bool has_hbm = config.hbm.bandwidth.bits_per_second > 0;
  const auto& at = config.address_map;
  map.add(has_hbm ? "hbm" : "host_memory", at.hbm.value, memory.size.bytes, kMemoryPort);
  map.add("host", at.host.value, kHostWindow, kHostPort);
  if (config.sram.size.bytes > 0) map.add("sram", at.sram.value, config.sram.size.bytes, kSramPort);
  return map;
}

core::MemoryTargetConfig sram_config(const SramConfig& sram, bool functional) {
  core::MemoryTargetConfig c;
  c.size = sram.size;
  c.bandwidth = sram.bandwidth;
  c.latency = sram.latency;
  c.functional = functional;
  return c;
}

}  // namespace

core::Bandwidth pcie_dma_bandwidth(const PcieConfig& pcie) {
  constexpr std::uint64_t kLarge = 1ull << 30;  // long enough that the link's latency is noise
  const double to_device = pcie::dma_rate(pcie.link, pcie::Direction::kHostToDevice, kLarge);
  const double to_host = pcie::dma_rate(pcie.link, pcie::Direction::kDeviceToHost, kLarge);
  return core::Bandwidth{std::min(to_device, to_host) * 8};
}

core::MemoryTargetConfig memory_config(const ChipConfig& config, bool functional) {
  core::MemoryTargetConfig memory;
  // A host without HBM moves payload over PCIe to host memory; a sparse store costs nothing
  // for its nominal size.
  const bool has_hbm = config.hbm.bandwidth.bits_per_second > 0;
  memory.bandwidth = has_hbm ? config.hbm.bandwidth : pcie_dma_bandwidth(config.pcie);
  memory.size = has_hbm ? config.hbm.capacity : core::ByteSize{64ull << 30};
  memory.functional = functional;
  return memory;
}

Chip::Chip(sc_core::sc_module_name name, const ChipConfig& config, int nic_ports, bool functional)
    : sc_module(name),
      config_(config),
      functional_(functional),
      memory_(config.hbm.bandwidth.bits_per_second > 0 ? "hbm" : "host_memory",
              memory_config(config, functional)),
      sram_(config.sram.size.bytes > 0
                ? std::make_unique<core::MemoryTarget>("sram", sram_config(config.sram, functional))
                : nullptr),
      pcie_("pcie", config.pcie.endpoint),
      noc_("noc", make_address_map(config, memory_.config())),
      nic_("nic", nic_ports, config.nic.roce, functional),
      reduction_("reduction", config.reduction, functional),
      sequencer_("sequencer", config.sequencer, nic_, reduction_) {
  noc_.initiator_socket.bind(memory_.target_socket);            // kMemoryPort
  noc_.initiator_socket.bind(pcie_.from_chip);                  // kHostPort
  if (sram_) noc_.initiator_socket.bind(sram_->target_socket);  // kSramPort
  pcie_.to_chip.bind(noc_.target_socket);
  nic_.memory_socket.bind(noc_.target_socket);
  reduction_.memory_socket.bind(noc_.target_socket);
}

void Chip::debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                 std::uint64_t length) {
  if (!functional_) {
    throw std::logic_error(fmt::format("{}: memory keeps no contents in timing-only mode", name()));
  }
  // The NoC's multi-sockets complete their bindings at the end of elaboration.
  if (sc_core::sc_get_status() &
      (sc_core::SC_ELABORATION | sc_core::SC_BEFORE_END_OF_ELABORATION)) {
    throw std::logic_error(
        fmt::format("{}: host access to memory before the simulation has started", name()));
  }
  if (length == 0) return;
  // One region per access, as the NoC routes it; loaders and checks stay within a buffer.
  if (address_map().decode(address, length) == nullptr) {
    throw std::out_of_range(fmt::format("{}: [{:#x}, {:#x}) is not mapped to one block", name(),
                                        address, address + length));
  }
  constexpr std::uint64_t kStep = 1u << 30;  // debug transport lengths are 32-bit
  for (std::uint64_t done = 0; done < length; done += kStep) {
    const auto n = static_cast<unsigned int>(std::min(kStep, length - done));
    noc_.debug(command, address + done, data + done, n);
  }
}

void Chip::debug_write(std::uint64_t address, const std::uint8_t* data, std::uint64_t length) {
  debug(tlm::TLM_WRITE_COMMAND, address, const_cast<std::uint8_t*>(data), length);
}

void Chip::debug_read(std::uint64_t address, std::uint8_t* data, std::uint64_t length) {
  debug(tlm::TLM_READ_COMMAND, address, data, length);
}

}  // namespace podsim::chip
