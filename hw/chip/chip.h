// One accelerator chip as a module: its blocks under the chip's name (system.box0.chip3.nic,
// .hbm, .dma2, .dma2_qman, ...) joined by the chip's address map, so that everything that reaches
// memory or a register goes through the NoC and a new block only adds a region and a binding.
// Captures: HBM (or host memory over PCIe for a chip without HBM) and SRAM at their configured
// bases; the PCIe endpoint, through which the host reaches the chip (BARs) and the engines reach
// host memory (the host window); Gaudi1's configuration space: the four sync managers, the DMA
// engines each fed by its QMAN (none of these on a network-side chip, Blocks), and the MSI
// doorbells; the RoCE NIC; error events from every
// block, kept, counted and, once the host has set up an event queue, written to it with an MSI;
// the NIC's work-request doorbell (nic_doorbell.h), through which command buffers post RDMA
// writes whose completions count on sync objects; an SRAM that keeps its contents even in a
// timing-only system, for command buffers and descriptors; host access to the address space
// outside simulated time (debug transport) and host register writes. Ignores: the NIC's QMANs
// (command buffers on the DMA QMANs post its work), TPC and MME (they arrive with their
// models), and Gaudi2's own register map (every preset uses Gaudi1's layout; docs/chip.md).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <systemc>
#include <vector>

#include "core/error_event.h"
#include "core/memory_target.h"
#include "hw/chip/chip_config.h"
#include "hw/chip/event_queue_regs.h"
#include "hw/chip/msi_doorbell.h"
#include "hw/chip/nic_doorbell.h"
#include "hw/chip/noc.h"
#include "hw/chip/qman.h"
#include "hw/chip/sync_manager.h"
#include "hw/dma/dma_core.h"
#include "hw/hbm/hbm.h"
#include "hw/mme/mme.h"
#include "hw/pcie/pcie_endpoint.h"
#include "hw/roce/nic.h"
#include "hw/tpc/tpc_core.h"

namespace podsim::chip {

// The memory behind a chip's engines: HBM when the chip has it, else host memory over PCIe.
// A simple memory at the rate of the chip's memory: HBM's peak, or for a chip without HBM the
// host memory it reaches over PCIe (which is what such a chip uses).
core::MemoryTargetConfig memory_config(const ChipConfig& config, bool functional);
// The bytes of the chip's memory (HBM, or host memory for a chip without HBM).
std::uint64_t memory_size(const ChipConfig& config);

class Chip : public sc_core::sc_module {
 public:
  // Where error events go once the host has set one up (through the EVENT_QUEUE registers,
  // event_queue_regs.h): a ring of 16-byte entries (u32 kind, u32 sequence number, u64 address)
  // at a chip address (usually in the host window), and the MSI-X vector rung after each entry.
  using EventQueueSetup = EventQueueRegs::Setup;
  static constexpr std::size_t kKeptErrors = 1024;  // the newest, for reports and tests

  // Which blocks a chip is built with. kNetworkSide: memory, SRAM, PCIe, MMU, NIC and the
  // doorbells, without the engines and the queues and sync managers that feed them: for software
  // that posts to the NIC itself and times the engines by rate (coarse chips in scale studies,
  // where the rest is most of what a chip takes to build and to hold).
  enum class Blocks { kAll, kNetworkSide };

  // `nic_ports`: the NIC ports the system wires (at most config.nic.ports); `functional`: the
  // system's mode (real bytes move, or only time). Throws std::invalid_argument on a bad
  // configuration, naming the key.
  Chip(sc_core::sc_module_name name, const ChipConfig& config, int nic_ports, bool functional,
       Blocks blocks = Blocks::kAll);

  const ChipConfig& config() const { return config_; }
  bool functional() const { return functional_; }
  roce::Nic& nic() { return nic_; }
  // The HBM, or nullptr for a chip without one (a host reaching memory over PCIe).
  hbm::Hbm* hbm() { return hbm_.get(); }
  // That host memory, or nullptr for a chip with HBM.
  core::MemoryTarget* host_memory() { return host_memory_.get(); }
  // The SRAM, or nullptr for a chip without one.
  core::MemoryTarget* sram() { return sram_.get(); }
  pcie::PcieEndpoint& pcie() { return pcie_; }
  // The DMA engines built (none on a network-side chip).
  int dma_engines() const { return static_cast<int>(dma_.size()); }
  // How many DMA engines the memory feeds at their rate beside the NIC at line rate: the engines
  // collective jobs are spread over, dma0 up to this count (of those the configuration names,
  // built or not).
  int collective_engines() const;
  dma::DmaCore& dma(int i) { return *dma_[static_cast<std::size_t>(i)]; }
  Qman& dma_qman(int i) { return *dma_qmans_[static_cast<std::size_t>(i)]; }
  // Sync manager 0..3: E_N, E_S, W_N, W_S (std::out_of_range on a network-side chip, which has
  // none).
  SyncManager& sync_manager(int i) { return *sync_managers_.at(static_cast<std::size_t>(i)); }
  NicDoorbell& nic_doorbell() { return nic_doorbell_; }
  MsiDoorbell& msi() { return msi_; }
  // Sync manager `i`'s register block base (0..3: E_N, E_S, W_N, W_S).
  static std::uint64_t sync_manager_base(int i);
  // Global sync object `sob` (manager sob / 2048, object sob % 2048): its manager's base, its
  // index there, and its SOB_OBJ register's address.
  static std::uint64_t sync_manager_of(std::uint32_t sob);
  static std::uint32_t sob_index(std::uint32_t sob);
  static std::uint64_t sob_address(std::uint32_t sob);
  static std::uint64_t dma_core_base(int i);
  static std::uint64_t dma_qman_base(int i);
  // The DMA engines a chip of `config` has: as many as asked, up to the 8 the map names.
  static int dma_engines_of(const ChipConfig& config);
  int tpc_cores() const { return static_cast<int>(tpcs_.size()); }
  tpc::TpcCore& tpc(int i) { return *tpcs_[static_cast<std::size_t>(i)]; }
  Qman& tpc_qman(int i) { return *tpc_qmans_[static_cast<std::size_t>(i)]; }
  // TPC i's configuration block and QMAN (Gaudi1's for 0-7, podsim's beyond; docs/chip.md).
  static std::uint64_t tpc_cfg_base(int i);
  static std::uint64_t tpc_qman_base(int i);
  int mme_engines() const { return static_cast<int>(mmes_.size()); }
  mme::Mme& mme(int i) { return *mmes_[static_cast<std::size_t>(i)]; }
  Qman& mme_qman(int i) { return *mme_qmans_[static_cast<std::size_t>(i)]; }
  // MME i's descriptor and QMAN (in Gaudi1's MME sections for 0-3, podsim's beyond).
  static std::uint64_t mme_desc_base(int i);
  static std::uint64_t mme_qman_base(int i);
  Noc& noc() { return *noc_; }
  Mmu& mmu() { return *mmu_; }
  const AddressMap& address_map() const { return noc_->address_map(); }
  // Where the chip's memory starts in its address space, and its size.
  std::uint64_t memory_base() const { return config_.address_map.hbm.value; }
  std::uint64_t memory_size() const { return memory_size_; }

  // Errors the blocks raised, newest last (at most kKeptErrors), and their count.
  const std::deque<core::ErrorEvent>& errors() const { return errors_; }
  std::uint64_t error_count() const { return stats_.errors.value(); }
  // From now on every error event is also written to the host's event queue.
  void set_event_queue(const EventQueueSetup& setup);

  // Host access outside simulated time, through the address map: loaders and checks. Throws
  // std::out_of_range naming the chip and the range when it is not mapped, and
  // std::logic_error when the block keeps no contents (in timing-only mode only the SRAM does) or
  // before sc_start.
  void debug_write(std::uint64_t address, const std::uint8_t* data, std::uint64_t length);
  void debug_read(std::uint64_t address, std::uint8_t* data, std::uint64_t length);
  // The host's 32-bit register write (a doorbell, a QMAN's setup), landing now: the PCIe path
  // the driver will take is not in between. Throws std::out_of_range when the block rejects it.
  void write_register(std::uint64_t address, std::uint32_t value);

  struct Stats {
    core::Counter& errors;
    core::Counter& events_written;
  };
  const Stats& stats() const { return stats_; }

 private:
  using TargetSocket = tlm::tlm_base_target_socket_b<>;
  struct Mapped {
    std::string name;
    std::uint64_t base, size;
    TargetSocket* socket;
  };
  std::vector<Mapped> build_blocks(Blocks which);
  void build_engines(const core::ErrorSink& sink, std::vector<Mapped>& blocks);
  void raise(const core::ErrorEvent& event);
  void write_event(const core::ErrorEvent& event);
  void debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
             std::uint64_t length);

  ChipConfig config_;
  bool functional_;
  std::unique_ptr<hbm::Hbm> hbm_;
  std::unique_ptr<core::MemoryTarget> host_memory_;
  std::uint64_t memory_size_;
  std::unique_ptr<core::MemoryTarget> sram_;
  pcie::PcieEndpoint pcie_;
  std::unique_ptr<Mmu> mmu_;
  std::vector<std::unique_ptr<SyncManager>> sync_managers_;
  std::vector<std::unique_ptr<dma::DmaCore>> dma_;
  std::vector<std::unique_ptr<Qman>> dma_qmans_;
  std::vector<std::unique_ptr<tpc::TpcCore>> tpcs_;
  std::vector<std::unique_ptr<Qman>> tpc_qmans_;
  std::vector<std::unique_ptr<mme::Mme>> mmes_;
  std::vector<std::unique_ptr<Qman>> mme_qmans_;
  MsiDoorbell msi_;
  EventQueueRegs event_queue_regs_;
  roce::Nic nic_;
  NicDoorbell nic_doorbell_;
  std::unique_ptr<Noc> noc_;
  tlm_utils::simple_initiator_socket<Chip> event_socket_;
  tlm_utils::simple_initiator_socket<Chip> host_socket_;  // write_register
  tlm::tlm_generic_payload event_trans_;
  EventQueueSetup event_queue_;
  std::uint32_t events_written_ = 0;
  std::deque<core::ErrorEvent> errors_;
  Stats stats_;
};

}  // namespace podsim::chip
