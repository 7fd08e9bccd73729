// Runs compiled collectives (command_compiler.h) on the chips of a system as HCCL does: as an
// application on each chip's host, through the driver's uAPI only (driver/host_drivers.h: the
// device's open compute node), never by reaching into the model.
// Each chip lends the collectives one stream ("slot") of each of its DMA QMANs: the internal ones
// (DMA 2 on) run the programs, whose buffers lie in SRAM, the host-facing DMA 0 and 1 launch and
// complete them (and of its TPC QMANs, for collectives that reduce on TPCs: streams 0 to 2, the
// last being the compute runtime's), sync objects of the first three sync managers (the fourth,
// W_S, is the driver's and the Synapse runtime's), monitors and the upper half of its SRAM; a
// collective takes a slot, a run of sync objects and an arena on every chip it runs on, all at
// once, when all are free (else it waits: two collectives never each hold half of what the other
// needs; those waiting start in launch order as their chips free up, one waiting for a busy chip
// holding none back). Then, for each rank, a program on its chip's host CPU:
// - once per chip, a set-up CS: a command buffer on DMA 0 of MSG_LONGs that set the DMA engines'
//   DESC_BASE and the NIC doorbell's WQE_BASE at the arena region, every queue monitor's payload
//   (one onto its queue's fence counter 0), clear the collectives' sync objects and write the
//   gate buffer (a FENCE on counter 1) at the region's start; the region's mirror in host memory
//   is mapped for DMA (MAP USERPTR);
// - per collective, one CS: on DMA 0 (stream = slot) a driver CB that uploads the rank's images
//   from the host mirror to its arena by LIN_DMA (unless they are there from the last run at
//   that place), arms its done monitor and then opens every program queue's gate; each program
//   queue runs the gate, then its command buffers where they lie in SRAM, which end with the
//   queues clearing the rank's objects between them once every write into them has been waited
//   for (so that ranks need not wait for each other before starting); on DMA 1 last, a
//   completion job fences until the done object says they have and clears it. WAIT_CS ends the
//   rank, which frees its share.
// Captures the host side's cost (ioctls, PCIe doorbells and fetches, the image upload) and a
// rank whose CS does not complete (timed out and reset by the driver: reported not ok, its chip
// set up again before the next collective).
// Ignores the CPU time of building images.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "collectives/command_compiler.h"
#include "core/range_allocator.h"
#include "hw/chip/resources.h"
#include "hw/system/system_model.h"

namespace podsim::driver {
class HostDrivers;
class File;
}  // namespace podsim::driver

namespace podsim::collectives {

class Launcher {
 public:
  // A slot is a QMAN stream of the collectives' share (chip.resources.collectives); its monitors
  // are the share's 64 from first_monitor + 64 * stream, one per queue, the done monitor last.
  static constexpr int kSlots = 4;  // a QMAN's streams
  static constexpr std::uint32_t kMonitorsPerSlot = 64;

  explicit Launcher(system::SystemModel& model);
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // What the compiler needs of `chip`, with reductions on its TPCs when `reduce_on_tpcs` (as many
  // as the slot's monitors allow). Throws std::invalid_argument for a chip without SRAM, without
  // the two host-facing DMA engines, or without TPCs to reduce on.
  ChipGeometry geometry(int chip, bool reduce_on_tpcs = false) const;
  // Whether `code` fits the chips at all (each rank's objects and arena within its chip's share).
  bool fits(const CommandCompiler& code, const std::vector<int>& chips) const;

  // From a thread: opens `chips`' devices and sets up the collectives' side of each, as a
  // communicator's initialisation does, and returns when all are ready (a collective on a chip
  // not yet ready does this first, inside its own time). Throws std::runtime_error naming the
  // chip when one cannot be opened.
  void open(const std::vector<int>& chips);

  // Runs `code` (rank r on chips[r]) as soon as every chip has room; rank_done(r, ok, end) when
  // every host has learnt that rank r's queues have all finished (a host notice, `notice_ps`
  // after `end`, the rank's own end), which also frees its share. Only ranks on chips this
  // process simulates run; the others' notices come from the processes that simulate them.
  // Throws std::invalid_argument when it does not fit.
  using RankDone = std::function<void(int rank, bool ok, core::TimePs end)>;
  void launch(std::vector<int> chips, std::shared_ptr<const CommandCompiler> code,
              RankDone rank_done, core::TimePs notice_ps);
  // Collectives waiting for room.
  std::size_t waiting() const { return pending_.size(); }
  // Why ranks failed (an ioctl refused, a CS that did not complete), the first few, for reports.
  const std::vector<std::string>& failures() const { return failures_; }
  static constexpr std::size_t kKeptFailures = 16;

 private:
  // The chip's share for the collectives (chip.resources.collectives) and its SRAM, [begin, end).
  const chip::ResourceShare& share(int chip) const;
  std::pair<std::uint64_t, std::uint64_t> region(int chip) const;
  struct Share {
    std::uint32_t first_sob = 0, sobs = 0;
    std::uint64_t arena = 0, arena_bytes = 0;
  };
  struct Running {
    std::vector<int> chips;
    std::shared_ptr<const CommandCompiler> code;
    RankDone rank_done;
    std::uint64_t channel = 0;  // of the ranks' host notices
    core::TimePs notice_ps = 0;
    std::vector<Share> shares;
    std::vector<int> slots;
    std::vector<ChipPlacement> placements;
    int remaining = 0;
  };
  struct ChipState {
    bool laid_out = false;
    std::uint64_t region = 0, region_bytes = 0;  // the collectives' share of the SRAM
    std::array<Running*, kSlots> running{};      // by stream; streams outside the share stay empty
    core::RangeAllocator sobs, arena;
    // The device side, set up by the chip's first collective.
    bool ready = false, setting_up = false, set_up_before = false;
    sc_core::sc_event set_up_done;
    std::uint64_t mirror = 0, mirror_va = 0;  // the region's copy in host memory, its device VA
    std::uint64_t gate = 0;                   // the internal queues' gate buffer, in SRAM
    std::uint32_t gate_bytes = 0;
    // Images known to lie in the arena, by address: their size and a 64-bit hash of their
    // bytes (a collective run again at the same place, a benchmark's iterations, finds its image
    // there and skips the upload, as a recorded program would; keeping the bytes themselves
    // would hold every image twice). Running an image leaves it unchanged; an upload drops those
    // it overlaps.
    struct Resident {
      std::uint64_t bytes = 0, hash = 0;
    };
    std::map<std::uint64_t, Resident> resident;
  };

  ChipState& state(int chip);
  // TPC queues a collective may have on `chip`, and all the queues it may have.
  int tpc_queues(int chip) const;
  int queues(int chip) const;
  bool try_start(Running& r);
  void start(Running& r, const std::vector<int>& slots);
  // The program of rank `rank` on its chip's host CPU.
  void run_rank(Running& run, int rank);
  // From a program of the chip's host: its open file, the chip set up.
  driver::File& ready(int chip);
  void set_up(int chip, ChipState& s, driver::File& file);
  std::vector<std::uint8_t> set_up_commands(int chip, const ChipState& s, bool again) const;
  bool resident(int chip, std::uint64_t arena, const std::vector<std::uint8_t>& bytes);
  // The rank's one CS: the upload, every queue's buffers behind its gate, the completion job.
  bool execute(Running& run, int rank, driver::File& file, const ChipImage& image);
  void finish(Running& run, int rank, bool ok, core::TimePs end);
  void start_waiting();

  system::SystemModel& model_;
  driver::HostDrivers& drivers_;
  std::vector<ChipState> chips_;
  std::deque<std::unique_ptr<Running>> pending_;
  std::vector<std::unique_ptr<Running>> running_;
  std::vector<std::string> failures_;
};

}  // namespace podsim::collectives
