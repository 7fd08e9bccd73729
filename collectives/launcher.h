// Runs compiled collectives (command_compiler.h) on the chips of a system, as HCCL's runtime does
// through the driver: each chip lends the collectives one stream ("slot") of each of its DMA
// QMANs (and of its TPC QMANs, for collectives that reduce on TPCs: slots 0 to 2, the last
// stream being the compute runtime's), sync objects and the upper half of its SRAM; a collective
// takes a slot, a run of sync objects and an arena on every chip it runs on, all at once, when all
// are free (else it waits: two collectives never each hold half of what the other needs; those
// waiting start in launch order as their chips free up, one waiting for a busy chip holding none
// back); its images are written to the arenas and its sync objects cleared, then every queue's
// doorbell rung; each rank's done object reaching its queue count fires a monitor whose payload
// rings an MSI doorbell, the rank's completion interrupt, which frees its share. Captures: the
// setup a driver would do once per chip (PQ rings, DESC_BASE, WQE_BASE, the monitors' payloads, the
// QMAN enables), done through register writes; collectives in flight at once up to the chip's
// slots, each with its own objects and queues. Ignores: the host's time (writing images, ringing
// doorbells and taking interrupts cost no simulated time; the PCIe path arrives with the driver),
// and recovery: a collective whose chips raise an error event never completes, and its slot stays
// taken.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "collectives/command_compiler.h"
#include "hw/core/range_allocator.h"
#include "hw/system/system_model.h"

namespace podsim::collectives {

class Launcher {
 public:
  static constexpr int kSlots = 4;                  // a QMAN's streams
  static constexpr std::uint32_t kFirstSob = 1024;  // below: left to the driver and tests
  static constexpr std::uint32_t kSobs = 4 * 2048;  // four sync managers
  static constexpr std::uint32_t kFirstMonitor = 256;
  static constexpr std::uint32_t kMonitorsPerSlot = 64;  // one per queue, the done monitor last
  static constexpr int kFirstVector = 24;                // MSI vectors kFirstVector + slot
  static constexpr std::uint32_t kPqLog2 = 6;            // 64 buffers a queue may have queued

  explicit Launcher(system::SystemModel& model);
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // What the compiler needs of `chip`, with reductions on its TPCs when `reduce_on_tpcs` (as many
  // as the slot's monitors allow). Throws std::invalid_argument for a chip without SRAM or DMA
  // engines, or without TPCs to reduce on.
  ChipGeometry geometry(int chip, bool reduce_on_tpcs = false) const;
  // Whether `code` fits the chips at all (each rank's objects and arena within its chip's share).
  bool fits(const CommandCompiler& code, const std::vector<int>& chips) const;

  // Runs `code` (rank r on chips[r]) as soon as every chip has room; rank_done(r, ok) when rank
  // r's queues have all finished. Throws std::invalid_argument when it does not fit.
  void launch(std::vector<int> chips, std::shared_ptr<const CommandCompiler> code,
              std::function<void(int rank, bool ok)> rank_done);
  // Collectives waiting for room.
  std::size_t waiting() const { return pending_.size(); }

 private:
  struct Share {
    std::uint32_t first_sob = 0, sobs = 0;
    std::uint64_t arena = 0, arena_bytes = 0;
  };
  struct Running {
    std::vector<int> chips;
    std::shared_ptr<const CommandCompiler> code;
    std::function<void(int, bool)> rank_done;
    std::vector<Share> shares;
    std::vector<std::uint64_t> errors_before;
    int remaining = 0;
  };
  struct ChipState {
    bool ready = false;
    std::uint64_t region = 0, region_bytes = 0;  // the collectives' share of the SRAM
    std::array<Running*, kSlots> running{};
    std::array<int, kSlots> rank{};
    core::RangeAllocator sobs, arena;
    std::vector<std::array<std::uint32_t, kSlots>> pi;  // by queue
  };

  ChipState& state(int chip);
  // TPC queues a collective may have on `chip`, and all the queues it may have.
  int tpc_queues(int chip) const;
  int queues(int chip) const;
  static std::uint64_t qman_base(int queue, int dma_queues);
  void set_up(int chip, ChipState& s);
  bool try_start(Running& r);
  void start(Running& r, const std::vector<int>& slots);
  void queue_buffers(int chip, int slot, const ChipImage& image);
  void on_interrupt(int chip, int vector);
  std::uint64_t pq(const ChipState& s, int queue, int slot) const;
  void start_waiting();

  system::SystemModel& model_;
  std::vector<ChipState> chips_;
  std::deque<std::unique_ptr<Running>> pending_;
  std::vector<std::unique_ptr<Running>> running_;
};

}  // namespace podsim::collectives
