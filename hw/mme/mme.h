// One MME as a block of the chip: a systolic array fed through the NoC. Its QMAN writes the
// descriptor registers (podsim's MME_DESC in gaudi1.yaml: operands, shapes, operation, the rows
// this engine covers) and EXECUTE starts it. The engine walks the operation step by step
// (schedule.h): each step's operand panels are read as bulk transactions (one per contiguous
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

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "hw/core/engine_status.h"
#include "hw/core/error_event.h"
#include "hw/core/event_queue.h"
#include "hw/core/stats.h"
#include "hw/core/trace.h"
#include "hw/mme/mme_config.h"
#include "hw/mme/operation.h"
#include "hw/mme/schedule.h"

namespace podsim::mme {

class Mme : public sc_core::sc_module, public core::EngineStatus, private core::Timed {
 public:
  static constexpr std::uint64_t kRegisterSpan = 0x1000;

  // Operands, results and the sync object: absolute chip addresses through the NoC.
  tlm_utils::simple_initiator_socket<Mme> memory_socket;
  // The descriptor at offsets from the block's base.
  tlm_utils::simple_target_socket<Mme> register_socket;

  // Throws std::invalid_argument on a bad configuration, naming the key.
  Mme(sc_core::sc_module_name name, const MmeConfig& config, bool functional);
  ~Mme() override;

  bool busy() const override { return busy_; }
  void when_idle(std::function<void()> then) override;
  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }
  const MmeConfig& config() const { return config_; }
  std::uint32_t read_register(std::uint64_t offset) const;

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

  void register_access(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  Job latch() const;
  void queue(Job j);
  void fire(std::uint32_t tag) override;
  void start();
  void fetch();
  bool read_panel(const std::vector<Run>& runs, std::uint64_t base, std::vector<float>& panel,
                  core::TimePs& ready);
  void compute(const Step& step);
  void write_results();
  void end(bool ok);
  void finish();
  void fail(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);
  bool transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                std::uint32_t bytes, core::TimePs& done);

  MmeConfig config_;
  bool functional_;
  core::TimePs cycle_;
  std::vector<std::uint32_t> regs_;
  std::deque<Job> queued_;
  std::unique_ptr<Job> job_;
  bool busy_ = false, error_ = false;
  std::uint32_t generation_ = 0;
  core::IdleWaiters idle_waiters_;

  // The operation under way.
  std::unique_ptr<GemmView> view_;
  std::vector<Step> steps_;
  std::size_t next_ = 0;  // the step whose operands are fetched next
  core::TimePs start_ = 0, compute_end_ = 0, before_last_end_ = 0, writes_done_ = 0;
  std::vector<float> a_panel_, b_panel_, acc_;
  std::deque<Results> results_;  // blocks waiting to be written, in order
  std::vector<std::uint8_t> staging_;

  tlm::tlm_generic_payload trans_;
  core::ErrorSink error_sink_;
  Stats stats_;
  core::TrackId track_{};
};

}  // namespace podsim::mme
