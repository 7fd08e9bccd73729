// One MME as a block of the chip: a systolic array fed through the NoC. Its QMAN writes the
// descriptor registers (podsim's MME_DESC in gaudi1.yaml: operands, shapes, operation, the rows
// and columns this engine covers) and EXECUTE starts it. The engine walks the operation step by
// step (schedule.h): each step's operand panels are read as bulk transactions (one per contiguous
// run) while the previous step computes (two panel sets), the array computes for the step's
// cycles, and a block's results are written once its last step is done; the time of an
// operation is the larger of the array's cycles and its operand traffic, step by step. In
// functional mode the panels carry real bytes and the array really multiplies (f32 accumulation
// in k order); at the end the engine writes the sync object.
// Captures: operands in HBM or SRAM through the NoC, partial tiles, fill and drain,
// accumulation into the result, error events for a bad descriptor or a rejected access, stats,
// a trace span per operation. Ignores: Gaudi's real MME registers and their meaning (not
// published), the array's internal pipeline stalls, power.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "core/stats.h"
#include "hw/engine/engine_shell.h"
#include "hw/mme/mme_config.h"
#include "hw/mme/operation.h"
#include "hw/mme/schedule.h"

namespace podsim::mme {

// The engine's sockets, registers (the descriptor, at offsets from the block's base), job queue
// and side band are the engine shell's (hw/engine/engine_shell.h).
class Mme : public engine::EngineShell {
 public:
  static constexpr std::uint64_t kRegisterSpan = 0x1000;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  Mme(sc_core::sc_module_name name, const MmeConfig& config, bool functional);
  ~Mme() override;

  const MmeConfig& config() const { return config_; }

  struct Stats {
    core::Counter& operations;
    core::Counter& failed;
    core::Counter& busy_ps;
    core::Counter& array_cycles;
    core::Counter& operand_stall_ps;
    core::Counter& bytes_read;
    core::Counter& bytes_written;
    core::Counter& flops;
  };
  const Stats& stats() const { return stats_; }

 private:
  enum Tag : std::uint32_t { kStart, kFetch, kWrite, kEnd };
  // Callbacks carry the operation's generation, so one left over from a failed operation does
  // not act on the next.
  std::uint32_t tag(Tag kind) const { return (generation_ & 0xFFFFF) << 2 | kind; }
  struct Job;
  struct Results;

  std::uint32_t read_word(std::uint64_t offset) const override;
  void write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) override;
  Job latch() const;
  void on_fire(std::uint32_t tag) override;
  void start_job() override;
  void fetch();
  bool read_panel(const std::vector<Run>& runs, std::uint64_t base, std::vector<float>& panel,
                  core::TimePs& ready);
  void compute(const Step& step);
  void write_results();
  void end(bool ok);
  void finish();
  bool transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                std::uint32_t bytes, core::TimePs& done);

  MmeConfig config_;
  bool functional_;
  core::TimePs cycle_;
  std::deque<Job> queued_;
  std::unique_ptr<Job> job_;
  bool error_ = false;
  std::uint32_t generation_ = 0;

  // The operation under way.
  std::unique_ptr<GemmView> view_;
  std::vector<Step> steps_;
  std::size_t next_ = 0;  // the step whose operands are fetched next
  core::TimePs start_ = 0, compute_end_ = 0, before_last_end_ = 0, writes_done_ = 0;
  std::vector<float> a_panel_, b_panel_, acc_;
  std::deque<Results> results_;  // blocks waiting to be written, in order
  std::vector<std::uint8_t> staging_;

  tlm::tlm_generic_payload trans_;
  Stats stats_;
};

}  // namespace podsim::mme
