// One accelerator chip as a module: its blocks under the chip's name (system.box0.chip3.nic,
// .hbm, .noc, ...) and joined by the chip's address map, so that everything that reaches memory
// goes through the NoC and a new block only adds a region and a binding here.
// Captures: the chip's memory (HBM, or host memory over PCIe for a chip without HBM) and SRAM at
// their configured bases; the PCIe endpoint, through which the host reaches the chip (BARs) and
// the chip's engines reach host memory (the host window); the RoCE NIC; the reduction engine and
// sequencer that run collective programs until the queue managers, sync manager and DMA engines
// replace them; host access to the address space outside simulated time (debug transport), as
// loaders and checks use it. Ignores: QMANs, the sync manager, TPC and MME (they arrive with
// their models).
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "hw/chip/chip_config.h"
#include "hw/chip/noc.h"
#include "hw/chip/reduction_engine.h"
#include "hw/chip/sequencer.h"
#include "hw/core/memory_target.h"
#include "hw/pcie/pcie_endpoint.h"
#include "hw/roce/nic.h"

namespace podsim::chip {

// The memory behind a chip's engines: HBM when the chip has it, else host memory over PCIe.
core::MemoryTargetConfig memory_config(const ChipConfig& config, bool functional);

class Chip : public sc_core::sc_module {
 public:
  // `nic_ports`: the NIC ports the system wires (at most config.nic.ports); `functional`: the
  // system's mode (real bytes move, or only time). Throws std::invalid_argument on a bad
  // configuration, naming the key.
  Chip(sc_core::sc_module_name name, const ChipConfig& config, int nic_ports, bool functional);

  const ChipConfig& config() const { return config_; }
  bool functional() const { return functional_; }
  roce::Nic& nic() { return nic_; }
  core::MemoryTarget& memory() { return memory_; }
  // The SRAM, or nullptr for a chip without one.
  core::MemoryTarget* sram() { return sram_.get(); }
  pcie::PcieEndpoint& pcie() { return pcie_; }
  ReductionEngine& reduction_engine() { return reduction_; }
  Sequencer& sequencer() { return sequencer_; }
  Noc& noc() { return noc_; }
  const AddressMap& address_map() const { return noc_.address_map(); }
  // Where the chip's memory starts in its address space, and its size.
  std::uint64_t memory_base() const { return config_.address_map.hbm.value; }
  std::uint64_t memory_size() const { return memory_.config().size.bytes; }

  // Host access outside simulated time, through the address map: loaders and checks. Throws
  // std::out_of_range naming the chip and the range when it is not mapped, and
  // std::logic_error in timing-only mode (memories keep no contents) or before sc_start.
  void debug_write(std::uint64_t address, const std::uint8_t* data, std::uint64_t length);
  void debug_read(std::uint64_t address, std::uint8_t* data, std::uint64_t length);

 private:
  void debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
             std::uint64_t length);

  ChipConfig config_;
  bool functional_;
  core::MemoryTarget memory_;
  std::unique_ptr<core::MemoryTarget> sram_;
  pcie::PcieEndpoint pcie_;
  Noc noc_;
  roce::Nic nic_;
  ReductionEngine reduction_;
  Sequencer sequencer_;
};

}  // namespace podsim::chip
