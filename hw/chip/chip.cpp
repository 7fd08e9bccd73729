#include "hw/chip/chip.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "hw/dma/dma_regs.h"
#include "hw/pcie/pcie_timing.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace {

// Bytes of host physical address space the chip's host window reaches: 48 bits, ending where
// the MMU's virtual range starts so that no address is both physical and virtual.
std::uint64_t host_window(std::uint64_t base) {
  constexpr std::uint64_t kBits48 = 1ull << 48, kVirtual = PODSIM_GAUDI1_VA_HOST_SPACE_START;
  return base < kVirtual ? std::min(kBits48, kVirtual - base) : kBits48;
}

// Gaudi1's blocks in configuration space, in the order the chip builds them ([C2]).
constexpr std::uint64_t kSyncManagerBases[] = {
    PODSIM_GAUDI1_SYNC_MNGR_E_N_BASE, PODSIM_GAUDI1_SYNC_MNGR_E_S_BASE,
    PODSIM_GAUDI1_SYNC_MNGR_W_N_BASE, PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE};
constexpr const char* kSyncManagerNames[] = {"sync_manager_e_n", "sync_manager_e_s",
                                             "sync_manager_w_n", "sync_manager_w_s"};
constexpr std::uint64_t kDmaCoreBases[] = {
    PODSIM_GAUDI1_DMA0_CORE_BASE, PODSIM_GAUDI1_DMA1_CORE_BASE, PODSIM_GAUDI1_DMA2_CORE_BASE,
    PODSIM_GAUDI1_DMA3_CORE_BASE, PODSIM_GAUDI1_DMA4_CORE_BASE, PODSIM_GAUDI1_DMA5_CORE_BASE,
    PODSIM_GAUDI1_DMA6_CORE_BASE, PODSIM_GAUDI1_DMA7_CORE_BASE};
constexpr std::uint64_t kDmaQmanBases[] = {PODSIM_GAUDI1_DMA0_QM_BASE, PODSIM_GAUDI1_DMA1_QM_BASE,
                                           PODSIM_GAUDI1_DMA2_QM_BASE, PODSIM_GAUDI1_DMA3_QM_BASE,
                                           PODSIM_GAUDI1_DMA4_QM_BASE, PODSIM_GAUDI1_DMA5_QM_BASE,
                                           PODSIM_GAUDI1_DMA6_QM_BASE, PODSIM_GAUDI1_DMA7_QM_BASE};
constexpr int kMaxDmaEngines = sizeof(kDmaCoreBases) / sizeof(kDmaCoreBases[0]);
constexpr int kMsiVectors = PODSIM_GAUDI1_MSI_ENTRIES;

// What a chip without HBM reaches over PCIe: a sparse store costs nothing for its nominal size.
constexpr std::uint64_t kHostMemoryBytes = 64ull << 30;

bool has_hbm(const ChipConfig& config) { return config.hbm.bandwidth.bits_per_second > 0; }

// The SRAM keeps contents in either mode: command buffers and descriptors live there.
core::MemoryTargetConfig sram_config(const SramConfig& sram, bool functional) {
  core::MemoryTargetConfig c;
  c.size = sram.size;
  c.bandwidth = sram.bandwidth;
  c.latency = sram.latency;
  c.functional = true;
  c.timing_only_payload = !functional;
  return c;
}

std::vector<std::uint64_t> sync_manager_bases() {
  return {std::begin(kSyncManagerBases), std::end(kSyncManagerBases)};
}

QmanConfig qman_config(const ChipConfig& config, std::uint64_t engine_base) {
  QmanConfig q = config.qman;
  q.engine_base = core::Address{engine_base};
  return q;
}

// TPC i's section: Gaudi1's for the first eight, podsim's after them.
std::uint64_t tpc_section(int i) {
  constexpr int kGaudi1Tpcs = 8;
  return i < kGaudi1Tpcs ? PODSIM_GAUDI1_TPC0_CFG_BASE - 0x6000 +
                               PODSIM_GAUDI1_TPC_SECTION * static_cast<unsigned>(i)
                         : PODSIM_GAUDI1_TPC_EXTRA_BASE +
                               PODSIM_GAUDI1_TPC_SECTION * static_cast<unsigned>(i - kGaudi1Tpcs);
}

// MME i's section: Gaudi1's for the first four (MMEn_CTRL, where podsim's descriptor sits, at
// +0x7000 and the QMAN at +0x8000), podsim's after them.
// MME i takes Gaudi1's sections in the order of the driver's MME queues: the masters first
// (queue MME_0 is MME2's QMAN, MME_1 is MME0's [C9]), then the slaves.
std::uint64_t mme_section(int i) {
  constexpr int kGaudi1Order[] = {2, 0, 1, 3};
  constexpr int kGaudi1Mmes = 4;
  return i < kGaudi1Mmes ? PODSIM_GAUDI1_MME0_DESC_BASE - 0x7000 +
                               PODSIM_GAUDI1_MME_SECTION * static_cast<unsigned>(kGaudi1Order[i])
                         : PODSIM_GAUDI1_MME_EXTRA_BASE +
                               PODSIM_GAUDI1_MME_SECTION * static_cast<unsigned>(i - kGaudi1Mmes);
}

}  // namespace

core::Bandwidth pcie_dma_bandwidth(const PcieConfig& pcie) {
  constexpr std::uint64_t kLarge = 1ull << 30;  // long enough that the link's latency is noise
  const double to_device = pcie::dma_rate(pcie.link, pcie::Direction::kHostToDevice, kLarge);
  const double to_host = pcie::dma_rate(pcie.link, pcie::Direction::kDeviceToHost, kLarge);
  return core::Bandwidth{std::min(to_device, to_host) * 8};
}

std::uint64_t memory_size(const ChipConfig& config) {
  return has_hbm(config) ? config.hbm.detailed().capacity() : kHostMemoryBytes;
}

core::MemoryTargetConfig memory_config(const ChipConfig& config, bool functional) {
  core::MemoryTargetConfig memory;
  memory.bandwidth = has_hbm(config) ? config.hbm.bandwidth
                     : config.memory_bandwidth.bits_per_second > 0
                         ? config.memory_bandwidth
                         : pcie_dma_bandwidth(config.pcie);
  memory.size = core::ByteSize{memory_size(config)};
  memory.functional = functional;
  return memory;
}

Chip::Chip(sc_core::sc_module_name name, const ChipConfig& config, int nic_ports, bool functional,
           Blocks which)
    : sc_module(name),
      config_(config),
      functional_(functional),
      hbm_(has_hbm(config) ? std::make_unique<hbm::Hbm>("hbm", config.hbm.detailed(), functional)
                           : nullptr),
      host_memory_(has_hbm(config) ? nullptr
                                   : std::make_unique<core::MemoryTarget>(
                                         "host_memory", memory_config(config, functional))),
      memory_size_(chip::memory_size(config)),
      sram_(config.sram.size.bytes > 0
                ? std::make_unique<core::MemoryTarget>("sram", sram_config(config.sram, functional))
                : nullptr),
      pcie_("pcie", config.pcie.endpoint),
      msi_("msi", kMsiVectors, pcie_),
      event_queue_regs_(
          "event_queue",
          [this](const EventQueueSetup& s) {
            if (s.entries > 0 && (s.vector < 0 || s.vector >= kMsiVectors)) {
              raise({core::ErrorEvent::Kind::kMalformed, this->name(),
                     PODSIM_GAUDI1_EVENT_QUEUE_BASE, core::now_ps(),
                     fmt::format("event queue vector {} is not 0..{}", s.vector, kMsiVectors - 1)});
              return;
            }
            set_event_queue(s);
          },
          [this] { return events_written_; }),
      nic_("nic", nic_ports, config.nic.roce, functional),
      nic_doorbell_("nic_doorbell", nic_, sync_manager_bases()),
      event_socket_("event_socket"),
      host_socket_("host_socket"),
      stats_{core::StatsGroup(this->name()).counter("errors", "1", "error events raised"),
             core::StatsGroup(this->name())
                 .counter("events_written", "1", "error events written to the host's queue")} {
  const std::vector<Mapped> blocks = build_blocks(which);
  AddressMap map;
  for (std::size_t port = 0; port < blocks.size(); ++port) {
    map.add(blocks[port].name, blocks[port].base, blocks[port].size, static_cast<int>(port));
  }
  noc_ = std::make_unique<Noc>("noc", config.noc, std::move(map));
  noc_->set_mmu(mmu_.get());
  for (const Mapped& block : blocks) noc_->initiator_socket.bind(*block.socket);
  noc_->connect("pcie", pcie_.to_chip);
  noc_->connect("nic", nic_.memory_socket);
  noc_->connect("event_queue", event_socket_);
  noc_->connect("host_registers", host_socket_);
  noc_->connect("nic_doorbell", nic_doorbell_.initiator_socket);
  for (std::size_t i = 0; i < sync_managers_.size(); ++i) {
    noc_->connect(kSyncManagerNames[i], sync_managers_[i]->initiator_socket);
  }
  for (std::size_t i = 0; i < dma_.size(); ++i) {
    noc_->connect(fmt::format("dma{}", i), dma_[i]->memory_socket);
    noc_->connect(fmt::format("dma{}_qman", i), dma_qmans_[i]->initiator_socket);
  }
  for (std::size_t i = 0; i < tpcs_.size(); ++i) {
    noc_->connect(fmt::format("tpc{}", i), tpcs_[i]->memory_socket);
    noc_->connect(fmt::format("tpc{}_qman", i), tpc_qmans_[i]->initiator_socket);
  }
  for (std::size_t i = 0; i < mmes_.size(); ++i) {
    noc_->connect(fmt::format("mme{}", i), mmes_[i]->memory_socket);
    noc_->connect(fmt::format("mme{}_qman", i), mme_qmans_[i]->initiator_socket);
  }
}

// As many engines as the memory feeds at their rate once the NIC has its share (every port
// reading what it sends and writing what it receives at line rate), a reduction moving three
// bytes per byte of result (two reads and a write); at least one. More would only queue bursts
// in front of the NIC's packet reads, since the memory serves transfers in arrival order.
int Chip::collective_engines() const {
  const dma::DmaConfig& engine = config_.dma.engine;
  const double nic = 2 * config_.nic.ports * config_.nic.port_speed.bits_per_second;
  const double left = memory_config(config_, false).bandwidth.bits_per_second - nic;
  const double fed = std::floor(left / (3 * engine.bandwidth.bits_per_second));
  return std::min(dma_engines_of(config_), static_cast<int>(std::max(1.0, fed)));
}

// Makes the configuration-space blocks and lists every block the NoC routes to, in port order.
std::vector<Chip::Mapped> Chip::build_blocks(Blocks which) {
  const auto& at = config_.address_map;
  const core::ErrorSink sink = [this](const core::ErrorEvent& e) { raise(e); };
  std::vector<Mapped> blocks;
  TargetSocket* memory = hbm_ ? static_cast<TargetSocket*>(&hbm_->target_socket)
                              : static_cast<TargetSocket*>(&host_memory_->target_socket);
  blocks.push_back({hbm_ ? "hbm" : "host_memory", at.hbm.value, memory_size_, memory});
  blocks.push_back({"host", at.host.value, host_window(at.host.value), &pcie_.from_chip});
  mmu_ = std::make_unique<Mmu>("mmu", config_.mmu, [this](std::uint64_t address) {
    std::uint64_t pte = 0;
    noc_->debug(tlm::TLM_READ_COMMAND, address, reinterpret_cast<std::uint8_t*>(&pte), 8);
    return pte;
  });
  mmu_->set_error_sink(sink);
  blocks.push_back({"mmu", PODSIM_GAUDI1_MMU_UP_BASE, Mmu::kRegisterSpan, &mmu_->target_socket});
  if (sram_)
    blocks.push_back({"sram", at.sram.value, config_.sram.size.bytes, &sram_->target_socket});
  if (which == Blocks::kAll) build_engines(sink, blocks);
  nic_doorbell_.set_error_sink(sink);
  blocks.push_back({"nic_doorbell", PODSIM_GAUDI1_NIC_DOORBELL_BASE, NicDoorbell::kSpan,
                    &nic_doorbell_.target_socket});
  blocks.push_back({"msi", PODSIM_GAUDI1_PCIE_MSI_BASE, msi_.span(), &msi_.target_socket});
  blocks.push_back({"event_queue", PODSIM_GAUDI1_EVENT_QUEUE_BASE, EventQueueRegs::kSpan,
                    &event_queue_regs_.target_socket});
  return blocks;
}

// The sync managers, and every engine with the QMAN that feeds it.
void Chip::build_engines(const core::ErrorSink& sink, std::vector<Mapped>& blocks) {
  for (int i = 0; i < 4; ++i) {
    sync_managers_.push_back(
        std::make_unique<SyncManager>(kSyncManagerNames[i], config_.sync_manager));
    sync_managers_.back()->set_error_sink(sink);
    blocks.push_back({kSyncManagerNames[i], kSyncManagerBases[i], SyncManager::kRegisterSpan,
                      &sync_managers_.back()->target_socket});
  }
  const int engines = dma_engines_of(config_);
  for (int i = 0; i < engines; ++i) {
    dma_.push_back(std::make_unique<dma::DmaCore>(fmt::format("dma{}", i).c_str(),
                                                  config_.dma.engine, functional_));
    dma_qmans_.push_back(std::make_unique<Qman>(fmt::format("dma{}_qman", i).c_str(),
                                                qman_config(config_, kDmaCoreBases[i])));
    dma_.back()->set_error_sink(sink);
    dma_.back()->set_host_base(config_.address_map.host.value);
    dma_qmans_.back()->set_error_sink(sink);
    dma_qmans_.back()->attach_engine(*dma_.back());
    blocks.push_back({fmt::format("dma{}", i), kDmaCoreBases[i], dma::regs::kBlockSize,
                      &dma_.back()->register_socket});
    blocks.push_back({fmt::format("dma{}_qman", i), kDmaQmanBases[i], Qman::kRegisterSpan,
                      &dma_qmans_.back()->target_socket});
  }
  for (int i = 0; i < config_.tpc.cores; ++i) {
    tpcs_.push_back(std::make_unique<tpc::TpcCore>(fmt::format("tpc{}", i).c_str(),
                                                   config_.tpc.core, functional_));
    tpc_qmans_.push_back(std::make_unique<Qman>(fmt::format("tpc{}_qman", i).c_str(),
                                                qman_config(config_, tpc_cfg_base(i))));
    tpcs_.back()->set_error_sink(sink);
    tpc_qmans_.back()->set_error_sink(sink);
    tpc_qmans_.back()->attach_engine(*tpcs_.back());
    blocks.push_back({fmt::format("tpc{}", i), tpc_cfg_base(i), tpc::TpcCore::kRegisterSpan,
                      &tpcs_.back()->register_socket});
    blocks.push_back({fmt::format("tpc{}_qman", i), tpc_qman_base(i), Qman::kRegisterSpan,
                      &tpc_qmans_.back()->target_socket});
  }
  for (int i = 0; i < config_.mme.engines; ++i) {
    mmes_.push_back(std::make_unique<mme::Mme>(fmt::format("mme{}", i).c_str(), config_.mme.engine,
                                               functional_));
    mme_qmans_.push_back(std::make_unique<Qman>(fmt::format("mme{}_qman", i).c_str(),
                                                qman_config(config_, mme_desc_base(i))));
    mmes_.back()->set_error_sink(sink);
    mme_qmans_.back()->set_error_sink(sink);
    mme_qmans_.back()->attach_engine(*mmes_.back());
    blocks.push_back({fmt::format("mme{}", i), mme_desc_base(i), mme::Mme::kRegisterSpan,
                      &mmes_.back()->register_socket});
    blocks.push_back({fmt::format("mme{}_qman", i), mme_qman_base(i), Qman::kRegisterSpan,
                      &mme_qmans_.back()->target_socket});
  }
}

void Chip::raise(const core::ErrorEvent& event) {
  stats_.errors.add();
  errors_.push_back(event);
  if (errors_.size() > kKeptErrors) errors_.pop_front();
  if (event_queue_.entries > 0) write_event(event);
}

void Chip::set_event_queue(const EventQueueSetup& setup) {
  if (setup.entries > 0 && (setup.vector < 0 || setup.vector >= kMsiVectors)) {
    throw std::invalid_argument(fmt::format("{}: event queue vector {} is not 0..{}", name(),
                                            setup.vector, kMsiVectors - 1));
  }
  event_queue_ = setup;
  events_written_ = 0;
}

// The entry goes out through the NoC like any engine's write; the MSI follows once it has landed.
void Chip::write_event(const core::ErrorEvent& event) {
  std::uint8_t entry[16] = {};
  const auto kind = static_cast<std::uint32_t>(event.kind);
  const std::uint32_t sequence = events_written_;
  std::memcpy(entry, &kind, 4);
  std::memcpy(entry + 4, &sequence, 4);
  std::memcpy(entry + 8, &event.address, 8);
  const std::uint64_t slot = event_queue_.base + 16ull * (events_written_ % event_queue_.entries);
  ++events_written_;
  core::TimePs done = 0;
  if (!core::bulk_transfer(event_socket_, event_trans_, tlm::TLM_WRITE_COMMAND, slot,
                           functional_ ? entry : nullptr, sizeof entry, core::now_ps(), done)) {
    return;  // an event queue outside the map: nothing more to tell the host with
  }
  stats_.events_written.add();
  tlm::tlm_generic_payload ring;
  std::uint32_t one = 1;
  sc_core::sc_time delay = sc_core::sc_time::from_value(done - core::now_ps());
  ring.set_command(tlm::TLM_WRITE_COMMAND);
  ring.set_address(PODSIM_GAUDI1_PCIE_MSI_BASE + 4ull * static_cast<unsigned>(event_queue_.vector));
  ring.set_data_ptr(reinterpret_cast<std::uint8_t*>(&one));
  ring.set_data_length(4);
  ring.set_streaming_width(4);
  event_socket_->b_transport(ring, delay);
}

void Chip::debug(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                 std::uint64_t length) {
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
    if (noc_->debug(command, address + done, data + done, n) != n) {
      throw std::logic_error(fmt::format("{}: the block at {:#x} keeps no contents{}", name(),
                                         address + done, functional_ ? "" : " (timing-only mode)"));
    }
  }
}

void Chip::write_register(std::uint64_t address, std::uint32_t value) {
  tlm::tlm_generic_payload write;
  core::TimePs done = 0;
  if (!core::bulk_transfer(host_socket_, write, tlm::TLM_WRITE_COMMAND, address,
                           reinterpret_cast<std::uint8_t*>(&value), 4, core::now_ps(), done)) {
    throw std::out_of_range(fmt::format("{}: register write of {:#x} to {:#x} rejected ({})",
                                        name(), value, address, write.get_response_string()));
  }
}

std::uint64_t Chip::sync_manager_base(int i) { return kSyncManagerBases[i]; }
std::uint64_t Chip::sync_manager_of(std::uint32_t sob) {
  return sync_manager_base(static_cast<int>(sob / NicDoorbell::kObjectsPerManager));
}
std::uint32_t Chip::sob_index(std::uint32_t sob) { return sob % NicDoorbell::kObjectsPerManager; }
std::uint64_t Chip::sob_address(std::uint32_t sob) {
  return PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(sync_manager_of(sob), sob_index(sob));
}
std::uint64_t Chip::dma_core_base(int i) { return kDmaCoreBases[i]; }
std::uint64_t Chip::mme_desc_base(int i) { return mme_section(i) + 0x7000; }
std::uint64_t Chip::mme_qman_base(int i) { return mme_section(i) + 0x8000; }
std::uint64_t Chip::tpc_cfg_base(int i) { return tpc_section(i) + 0x6000; }
std::uint64_t Chip::tpc_qman_base(int i) { return tpc_section(i) + 0x8000; }

std::uint64_t Chip::dma_qman_base(int i) { return kDmaQmanBases[i]; }

int Chip::dma_engines_of(const ChipConfig& config) {
  return std::min(config.dma.engines, kMaxDmaEngines);
}

void Chip::debug_write(std::uint64_t address, const std::uint8_t* data, std::uint64_t length) {
  debug(tlm::TLM_WRITE_COMMAND, address, const_cast<std::uint8_t*>(data), length);
}

void Chip::debug_read(std::uint64_t address, std::uint8_t* data, std::uint64_t length) {
  debug(tlm::TLM_READ_COMMAND, address, data, length);
}

}  // namespace podsim::chip
