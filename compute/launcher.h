// Runs compute work on a chip's engines as a runtime does through the driver: a TPC kernel plan
// (hw/tpc/kernels/library.h) becomes one command buffer per TPC QMAN: each launch's registers
// written with WREG_BULK and started with TPC_EXECUTE, the launches chained on the chip (a core
// waits, by a monitor and a FENCE, until every core of the previous launch has written its
// sync object), and the last launch's sync object firing a monitor whose payload rings an MSI
// doorbell, the run's completion interrupt.
// Captures: the setup a driver does once per chip (a PQ ring per TPC QMAN stream, the monitors'
// payloads, the QMANs enabled), kernel binaries placed in SRAM once (a runtime's kernel cache),
// runs queued one after another per chip. Ignores: the host's time (writing command buffers and
// binaries, ringing doorbells and taking interrupts cost no simulated time until the driver
// model arrives) and memory management (the caller says where the plan's buffers are).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/core/range_allocator.h"
#include "hw/system/system_model.h"
#include "hw/tpc/kernels/library.h"

namespace podsim::compute {

class Launcher {
 public:
  // What the compute runtime takes of a chip, leaving the rest to the collectives: sync objects
  // and monitors of sync manager 0, an MSI vector, the lower half of the SRAM.
  static constexpr std::uint32_t kFirstSob = 512, kSobs = 256;
  static constexpr std::uint32_t kFirstMonitor = 128;  // one per TPC, then the done monitor
  static constexpr int kVector = 20;
  static constexpr std::uint32_t kPqLog2 = 4;

  explicit Launcher(system::SystemModel& model);
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Runs every launch of `plan` on chip `chip`'s first `cores` TPCs (all of them when 0), its
  // buffers at `addresses` (device addresses the caller filled); done(ok) when the last launch
  // has ended on every core, ok false when a block raised an error meanwhile. Throws
  // std::invalid_argument naming what the chip lacks (TPCs, SRAM) or what does not fit.
  void run(int chip, const tpc::KernelPlan& plan, const std::vector<std::uint64_t>& addresses,
           int cores, std::function<void(bool ok)> done);

 private:
  struct Run {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> buffers;  // per TPC: its command buffer
    std::uint64_t arena = 0, arena_bytes = 0;
    std::uint32_t launches = 0, last_count = 0;
    std::function<void(bool)> done;
    std::uint64_t errors_before = 0;
  };
  struct ChipState {
    bool ready = false;
    core::RangeAllocator arena;
    std::map<std::string, std::uint64_t> binaries;  // kernel binary key -> its SRAM address
    std::vector<std::uint32_t> pi;                  // per TPC QMAN stream 0
    std::deque<Run> waiting;
    bool running = false;
  };

  ChipState& state(int chip);
  void set_up(int chip, ChipState& s);
  std::uint64_t binary_address(int chip, ChipState& s, const std::string& key);
  Run compile(int chip, ChipState& s, const tpc::KernelPlan& plan,
              const std::vector<std::uint64_t>& addresses, int cores);
  void start(int chip, ChipState& s);
  void on_interrupt(int chip, int vector);
  std::uint64_t pq(int chip, int tpc) const;

  system::SystemModel& model_;
  std::vector<ChipState> chips_;
};

}  // namespace podsim::compute
