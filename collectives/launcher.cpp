#include "collectives/launcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/dma/dma_regs.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::collectives {
namespace {

constexpr std::uint64_t kPqEntryBytes = PODSIM_GAUDI1_PQ_ENTRY_SIZE;

std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }

void write64(chip::Chip& c, std::uint64_t lo_register, std::uint64_t hi_register,
             std::uint64_t value) {
  c.write_register(lo_register, lo(value));
  c.write_register(hi_register, hi(value));
}

}  // namespace

Launcher::Launcher(system::SystemModel& model)
    : model_(model), chips_(static_cast<std::size_t>(model.chips())) {}

int Launcher::tpc_queues(int chip) const {
  const chip::Chip& c = model_.chip(chip);
  return std::max(
      0, std::min(c.tpc_cores(), static_cast<int>(kMonitorsPerSlot) - 1 - c.dma_engines()));
}

int Launcher::queues(int chip) const { return model_.chip(chip).dma_engines() + tpc_queues(chip); }

std::uint64_t Launcher::qman_base(int queue, int dma_queues) {
  return queue < dma_queues ? chip::Chip::dma_qman_base(queue)
                            : chip::Chip::tpc_qman_base(queue - dma_queues);
}

ChipGeometry Launcher::geometry(int chip, bool reduce_on_tpcs) const {
  chip::Chip& c = model_.chip(chip);
  if (c.sram() == nullptr) {
    throw std::invalid_argument(fmt::format(
        "{}: collectives keep their command buffers in SRAM, and chip.sram.size is 0", c.name()));
  }
  if (c.dma_engines() == 0) {
    throw std::invalid_argument(
        fmt::format("{}: collectives run on the DMA QMANs, and chip.dma.engines is 0", c.name()));
  }
  ChipGeometry g;
  g.queues = c.dma_engines();
  g.engines = c.collective_engines();
  const dma::DmaConfig& engine = c.config().dma.engine;
  // A slice smaller than what one engine keeps in flight would not reach its streaming rate.
  g.min_slice = engine.burst.bytes * static_cast<std::uint64_t>(engine.outstanding);
  g.max_buffer = static_cast<std::uint32_t>(c.config().qman.max_cb_size.bytes);
  if (reduce_on_tpcs) {
    g.tpcs = tpc_queues(chip);
    if (g.tpcs == 0) {
      throw std::invalid_argument(fmt::format(
          "{}: reductions on TPCs asked for, and chip.tpc.cores is 0 (reduce on DMA engines)",
          c.name()));
    }
  }
  return g;
}

bool Launcher::fits(const CommandCompiler& code, const std::vector<int>& chips) const {
  for (int r = 0; r < code.ranks(); ++r) {
    const chip::Chip& c = model_.chip(chips[static_cast<std::size_t>(r)]);
    const std::uint64_t sram = c.config().sram.size.bytes;
    const std::uint64_t rings =
        static_cast<std::uint64_t>(queues(chips[static_cast<std::size_t>(r)])) * kSlots *
        (1u << kPqLog2) * kPqEntryBytes;
    const std::uint64_t room = sram - sram / 2 - std::min(rings, sram - sram / 2);
    if (code.sobs(r) > kSobs - kFirstSob || code.arena_bytes(r) > room) return false;
  }
  return true;
}

std::uint64_t Launcher::pq(const ChipState& s, int queue, int slot) const {
  return s.region +
         (static_cast<std::uint64_t>(queue) * kSlots + static_cast<std::uint64_t>(slot)) *
             (1u << kPqLog2) * kPqEntryBytes;
}

Launcher::ChipState& Launcher::state(int chip) {
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  if (!s.ready) set_up(chip, s);
  return s;
}

// What a driver does once: PQ rings, where descriptors and WQEs live, the monitors' payloads
// (a queue's fence counter; the MSI doorbell for the done monitor), the QMANs enabled.
void Launcher::set_up(int chip, ChipState& s) {
  chip::Chip& c = model_.chip(chip);
  const std::uint64_t sram = c.config().sram.size.bytes;
  s.region = c.config().address_map.sram.value + sram / 2;
  s.region_bytes = sram - sram / 2;
  const int dma_queues = c.dma_engines(), all_queues = queues(chip);
  const std::uint64_t rings = pq(s, all_queues, 0) - s.region;
  s.sobs = core::RangeAllocator(kFirstSob, kSobs - kFirstSob);
  s.arena = core::RangeAllocator(s.region + rings, s.region_bytes - rings);
  s.pi.assign(static_cast<std::size_t>(all_queues), {});
  for (int h = 0; h < all_queues; ++h) {
    const std::uint64_t qman = qman_base(h, dma_queues);
    for (int slot = 0; slot < (h < dma_queues ? kSlots : kSlots - 1); ++slot) {
      write64(c, PODSIM_GAUDI1_QMAN_PQ_BASE_LO(qman, slot),
              PODSIM_GAUDI1_QMAN_PQ_BASE_HI(qman, slot), pq(s, h, slot));
      c.write_register(PODSIM_GAUDI1_QMAN_PQ_SIZE(qman, slot), kPqLog2);
    }
    c.write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG0(qman),
                     podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
    if (h >= dma_queues) continue;
    const std::uint64_t core = chip::Chip::dma_core_base(h);
    write64(c, core + dma::regs::kExtDescBaseLo, core + dma::regs::kExtDescBaseHi, s.region);
  }
  const std::uint64_t doorbell = PODSIM_GAUDI1_NIC_DOORBELL_BASE;
  write64(c, doorbell + chip::NicDoorbell::kWqeBaseLo, doorbell + chip::NicDoorbell::kWqeBaseHi,
          s.region);
  for (int m = 0; m < 4; ++m) {
    const std::uint64_t manager = chip::Chip::sync_manager_base(m);
    for (int slot = 0; slot < kSlots; ++slot) {
      const std::uint32_t first =
          kFirstMonitor + static_cast<std::uint32_t>(slot) * kMonitorsPerSlot;
      auto payload = [&](std::uint32_t monitor, std::uint64_t address) {
        write64(c, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(manager, monitor),
                PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(manager, monitor), address);
        c.write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(manager, monitor), 1);
      };
      for (int h = 0; h < all_queues; ++h) {
        payload(first + static_cast<std::uint32_t>(h),
                PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(qman_base(h, dma_queues), slot));
      }
      payload(first + kMonitorsPerSlot - 1,
              PODSIM_GAUDI1_PCIE_MSI_BASE + 4ull * static_cast<unsigned>(kFirstVector + slot));
    }
  }
  c.msi().listen([this, chip](int vector) { on_interrupt(chip, vector); });
  s.ready = true;
}

void Launcher::launch(std::vector<int> chips, std::shared_ptr<const CommandCompiler> code,
                      std::function<void(int, bool)> rank_done) {
  if (!fits(*code, chips)) {
    throw std::invalid_argument(
        "the collective's command buffers or sync objects do not fit a chip (half its SRAM, "
        "7168 sync objects): use larger chunks");
  }
  auto run = std::make_unique<Running>();
  run->chips = std::move(chips);
  run->code = std::move(code);
  run->rank_done = std::move(rank_done);
  pending_.push_back(std::move(run));
  start_waiting();
}

// Every waiting collective whose chips all have room starts, in the order they were launched:
// one that waits for a busy chip holds back none on other chips.
void Launcher::start_waiting() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!try_start(**it)) {
      ++it;
      continue;
    }
    running_.push_back(std::move(*it));
    it = pending_.erase(it);
  }
}

bool Launcher::try_start(Running& run) {
  const int ranks = run.code->ranks();
  std::vector<int> slots;
  run.shares.assign(static_cast<std::size_t>(ranks), {});
  auto undo = [&](int upto) {
    for (int r = 0; r < upto; ++r) {
      ChipState& s = state(run.chips[static_cast<std::size_t>(r)]);
      const Share& share = run.shares[static_cast<std::size_t>(r)];
      s.sobs.release(share.first_sob, share.sobs);
      s.arena.release(share.arena, share.arena_bytes);
    }
    return false;
  };
  for (int r = 0; r < ranks; ++r) {
    ChipState& s = state(run.chips[static_cast<std::size_t>(r)]);
    // The TPC QMANs' last stream is the compute runtime's.
    const auto slots_end =
        run.code->queues(r) > run.code->dma_queues(r) ? s.running.end() - 1 : s.running.end();
    const auto free = std::find(s.running.begin(), slots_end, nullptr);
    if (free == slots_end) return undo(r);
    Share& share = run.shares[static_cast<std::size_t>(r)];
    share.sobs = run.code->sobs(r);
    share.arena_bytes = std::max<std::uint64_t>(run.code->arena_bytes(r), 1);
    const auto sob = s.sobs.allocate(share.sobs);
    const auto arena = sob ? s.arena.allocate(share.arena_bytes, 256) : std::nullopt;
    if (!arena) {
      if (sob) s.sobs.release(*sob, share.sobs);
      return undo(r);
    }
    share.first_sob = static_cast<std::uint32_t>(*sob);
    share.arena = *arena;
    slots.push_back(static_cast<int>(free - s.running.begin()));
  }
  start(run, slots);
  return true;
}

void Launcher::start(Running& run, const std::vector<int>& slots) {
  const int ranks = run.code->ranks();
  std::vector<ChipPlacement> placements(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const ChipState& s = chips_[static_cast<std::size_t>(run.chips[i])];
    placements[i] = {run.shares[i].first_sob,
                     run.shares[i].arena,
                     s.region,
                     s.region,
                     slots[i],
                     kFirstMonitor + static_cast<std::uint32_t>(slots[i]) * kMonitorsPerSlot};
  }
  run.remaining = ranks;
  run.errors_before.resize(static_cast<std::size_t>(ranks));
  std::vector<ChipImage> images;
  const std::uint32_t zero = chip::spec::encode_sob_write({0, false, false});
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const int chip_index = run.chips[i];
    chip::Chip& c = model_.chip(chip_index);
    ChipState& s = chips_[static_cast<std::size_t>(chip_index)];
    s.running[static_cast<std::size_t>(slots[i])] = &run;
    s.rank[static_cast<std::size_t>(slots[i])] = r;
    run.errors_before[i] = c.error_count();
    images.push_back(run.code->encode(r, placements));
    if (!images.back().bytes.empty()) {
      c.debug_write(placements[i].arena, images.back().bytes.data(), images.back().bytes.size());
    }
    const std::uint32_t first = placements[i].first_sob;
    for (std::uint32_t g = first; g < first + run.code->sobs(r); ++g) {
      c.write_register(chip::Chip::sob_address(g), zero);
    }
    const std::uint32_t done = first + run.code->done_sob(r);
    const auto arm = chip::spec::MonitorArm::single(chip::Chip::sob_index(done),
                                                    static_cast<std::uint32_t>(run.code->queues(r)),
                                                    chip::spec::MonitorOp::kGreaterOrEqual);
    c.write_register(
        PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(chip::Chip::sync_manager_of(done),
                                             placements[i].monitor + kMonitorsPerSlot - 1),
        chip::spec::encode_monitor_arm(arm));
  }
  // Every rank's objects are cleared before any queue runs: a fast peer's first write may land
  // as soon as its queue starts.
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    queue_buffers(run.chips[i], slots[i], images[i]);
  }
}

void Launcher::queue_buffers(int chip, int slot, const ChipImage& image) {
  chip::Chip& c = model_.chip(chip);
  const int dma_queues = c.dma_engines();
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  for (std::size_t h = 0; h < image.buffers.size(); ++h) {
    std::uint32_t& pi = s.pi[h][static_cast<std::size_t>(slot)];
    for (const auto& [address, bytes] : image.buffers[h]) {
      chip::PqEntry entry;
      entry.address = address;
      entry.length = bytes;
      std::uint8_t raw[kPqEntryBytes];
      chip::encode_pq_entry(entry, raw);
      c.debug_write(pq(s, static_cast<int>(h), slot) + kPqEntryBytes * chip::pq_slot(pi, kPqLog2),
                    raw, sizeof raw);
      pi = chip::pq_next(pi, kPqLog2);
    }
    c.write_register(PODSIM_GAUDI1_QMAN_PQ_PI(qman_base(static_cast<int>(h), dma_queues), slot),
                     pi);
  }
}

// A rank's done monitor fired: its queues have finished; its share goes back.
void Launcher::on_interrupt(int chip, int vector) {
  const int slot = vector - kFirstVector;
  if (slot < 0 || slot >= kSlots) return;
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  Running* run = s.running[static_cast<std::size_t>(slot)];
  if (run == nullptr) return;
  const int rank = s.rank[static_cast<std::size_t>(slot)];
  const Share& share = run->shares[static_cast<std::size_t>(rank)];
  s.running[static_cast<std::size_t>(slot)] = nullptr;
  s.sobs.release(share.first_sob, share.sobs);
  s.arena.release(share.arena, share.arena_bytes);
  const bool ok =
      model_.chip(chip).error_count() == run->errors_before[static_cast<std::size_t>(rank)];
  const bool last = --run->remaining == 0;
  auto rank_done = run->rank_done;
  if (last) {
    auto it = std::find_if(running_.begin(), running_.end(),
                           [run](const std::unique_ptr<Running>& p) { return p.get() == run; });
    std::unique_ptr<Running> finished = std::move(*it);
    running_.erase(it);
    start_waiting();
    if (rank_done) rank_done(rank, ok);
    return;
  }
  start_waiting();
  if (rank_done) rank_done(rank, ok);
}

}  // namespace podsim::collectives
