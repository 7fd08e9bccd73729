// Runs compute work on a chip's engines as a runtime does through the driver. Work is a chain
// of stages: a TPC kernel launch split over cores (a plan of hw/tpc/kernels/library.h gives one
// stage per launch) or an MME operation split by rows over engines. It becomes one command
// buffer per engine QMAN: each stage's registers written with WREG_BULK and the engine started
// by its EXECUTE register, the stages chained on the chip (an engine waits, by a monitor and a
// FENCE, until every engine of the previous stage has written its sync object), and the last
// stage's sync object firing a monitor whose payload rings an MSI doorbell, the run's
// completion interrupt.
// Captures: the setup a driver does once per chip (a PQ ring per engine QMAN stream, the
// monitors' payloads, the QMANs enabled), kernel binaries placed in SRAM once (a runtime's
// kernel cache), runs queued one after another per chip. Ignores: the host's time (writing command
// buffers and binaries, ringing doorbells and taking interrupts cost no simulated time until the
// driver model arrives) and memory management (the caller says where the plan's buffers are).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/core/range_allocator.h"
#include "hw/core/register_run.h"
#include "hw/mme/operation.h"
#include "hw/system/system_model.h"
#include "hw/tpc/kernels/library.h"

namespace podsim::compute {

class Launcher {
 public:
  // What the compute runtime takes of a chip, leaving the rest to the collectives: sync objects
  // and monitors of sync manager 0, an MSI vector, the lower half of the SRAM, stream kStream of
  // the engine QMANs.
  static constexpr std::uint32_t kFirstSob = 512, kSobs = 256;
  static constexpr std::uint32_t kDoneMonitor = 127;
  static constexpr std::uint32_t kFirstMonitor = 128;  // one per engine queue (queue())
  static constexpr int kVector = 20;
  static constexpr std::uint32_t kPqLog2 = 4;
  // The engine QMANs' stream the runtime uses: the last, since collectives reducing on TPCs take
  // the TPC QMANs' others (collectives/launcher.h).
  static constexpr int kStream = 3;

  // An engine's place among the chip's compute queues: TPCs first, then MMEs.
  enum class Engine { kTpc, kMme };
  static int queue(Engine e, int index) { return e == Engine::kTpc ? index : kMaxTpcs + index; }

  explicit Launcher(system::SystemModel& model);
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Runs every launch of `plan` on chip `chip`'s first `cores` TPCs (all of them when 0), its
  // buffers at `addresses` (device addresses the caller filled); done(ok) when the last launch
  // has ended on every core, ok false when a block raised an error meanwhile. Throws
  // std::invalid_argument naming what the chip lacks (TPCs, SRAM) or what does not fit.
  void run(int chip, const tpc::KernelPlan& plan, const std::vector<std::uint64_t>& addresses,
           int cores, std::function<void(bool ok)> done);
  // Runs `op` (its addresses device addresses the caller filled) on chip `chip`'s first
  // `engines` MMEs (all when 0), its rows split among them; done(ok) as above. Throws
  // std::invalid_argument naming what is wrong with the operation or what the chip lacks.
  void run(int chip, const mme::MmeOperation& op, int engines, std::function<void(bool ok)> done);

 private:
  static constexpr int kMaxTpcs = 64, kMaxQueues = 128;
  // One engine's part of a stage: its registers and the register that starts it.
  struct Work {
    int queue;
    std::vector<core::RegisterRun> registers;
    std::uint32_t execute;
  };
  using Stage = std::vector<Work>;
  // A stage's sync object, which each of its engines adds one to.
  static std::uint64_t stage_sob(std::uint32_t stage);
  static std::uint32_t stage_message();

  struct Run {
    struct Buffer {
      int queue;
      std::uint64_t address;
      std::uint32_t length;
    };
    std::vector<Buffer> buffers;  // per engine queue the run uses
    std::uint64_t arena = 0, arena_bytes = 0;
    std::uint32_t stages = 0, last_count = 0;
    std::function<void(bool)> done;
    std::uint64_t errors_before = 0;
  };
  struct ChipState {
    bool ready = false;
    core::RangeAllocator arena;
    std::map<std::string, std::uint64_t> binaries;  // kernel binary key -> its SRAM address
    std::vector<std::uint32_t> pi;                  // per engine queue, its QMAN's stream 0
    std::deque<Run> waiting;
    bool running = false;
  };

  ChipState& state(int chip);
  void set_up(int chip, ChipState& s);
  std::uint64_t binary_address(int chip, ChipState& s, const std::string& key);
  std::vector<Stage> kernel_stages(int chip, ChipState& s, const tpc::KernelPlan& plan,
                                   const std::vector<std::uint64_t>& addresses, int cores);
  Run compile(int chip, ChipState& s, const std::vector<Stage>& stages);
  void submit(int chip, ChipState& s, Run r, std::function<void(bool)> done);
  void start(int chip, ChipState& s);
  void on_interrupt(int chip, int vector);
  std::uint64_t pq(int chip, int queue) const;
  std::uint64_t qman_base(int queue) const;
  bool present(chip::Chip& c, int queue) const;

  system::SystemModel& model_;
  std::vector<ChipState> chips_;
};

}  // namespace podsim::compute
