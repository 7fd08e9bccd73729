// One DMA engine: copies, memsets and reductions of two sources between any memories of the
// chip's address map (host over PCIe, HBM, SRAM), linear or strided up to five dimensions,
// started through its Gaudi1 register block (a QMAN's LIN_DMA, or WREG writes and a COMMIT), by a
// descriptor posted with one doorbell write (dma_descriptor.h), or directly by models and tests
// through submit().
// Captures: jobs run one at a time in submission order; each is cut into bursts, each burst one
// bulk read per contiguous run (two for a reduction, combined with core::reduce_into) and then
// its write; up to `outstanding` bursts in flight, paced by the engine's bandwidth
// (issue_window.h), so one engine streams at the lower of its bandwidth and its path's and pays
// memory latency once per job; the optional completion write after the last write; status for
// the queue manager (core::EngineStatus, STS0); an access the NoC rejects ends the job with
// ok = false and an error event, and the engine goes on with its next job. Functional mode moves
// real bytes; timing-only mode moves none with the same timing.
// Ignores: Gaudi1's transpose and compression, CFG halt and flush, its own multi-dimensional
// registers (podsim has its own, dma_regs.h), protection, overlap between a job's source and
// destination, and a per-request cost beyond bandwidth.
// Steps run as callbacks of the shared core::EventQueue: no thread and no wait() on the hot path.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/stats.h"
#include "hw/dma/dma_config.h"
#include "hw/dma/dma_job.h"
#include "hw/dma/dma_registers.h"
#include "hw/dma/issue_window.h"
#include "hw/dma/stride_walker.h"
#include "hw/engine/engine_shell.h"

namespace podsim::dma {

// The engine's sockets (memory: bound to the chip's NoC, every address a job names a chip
// address; registers, dma_regs.h, at offsets from the block's base), its side band and error
// events are the engine shell's (hw/engine/engine_shell.h); its jobs queue here, with their
// completion callbacks.
class DmaCore : public engine::EngineShell {
 public:
  // `functional`: move real bytes; otherwise only time (the whole system is then timing-only).
  // Throws std::invalid_argument on a bad configuration, naming the key.
  DmaCore(sc_core::sc_module_name name, const DmaConfig& config, bool functional);

  // Queues a job; `done(ok)` runs when its last write (and completion write) has completed, or
  // when it failed. Throws std::invalid_argument if the job cannot run (check_job).
  void submit(const DmaJob& job, std::function<void(bool ok)> done);
  // Sources at or above `base` are the host's (the chip's host window and the MMU's virtual
  // range above it): in timing-only mode a job from there still moves its bytes, since what the
  // host uploads is command buffers and descriptors the chip goes on to run.
  void set_host_base(std::uint64_t base) { host_base_ = base; }
  std::size_t queued() const { return jobs_.size(); }
  const DmaConfig& config() const { return config_; }

  struct Stats {
    core::Counter& jobs;
    core::Counter& failed;
    core::Counter& bytes_read;
    core::Counter& bytes_written;
    core::Counter& busy_ps;
  };
  const Stats& stats() const { return stats_; }

 private:
  enum Tag : std::uint32_t { kIssue, kEnd, kFinish, kWrite };  // kWrite + slot
  struct Queued {
    DmaJob job;
    std::function<void(bool)> done;
    core::TimePs ready_at = 0;
  };
  // One burst in flight: its runs, and its bytes in functional mode.
  struct Burst {
    std::vector<Segment> runs;
    std::uint64_t stream_offset = 0, bytes = 0;
    std::vector<std::uint8_t> data, data2;
  };

  void enqueue(Queued queued);
  void begin_next();
  void on_fire(std::uint32_t tag) override;
  void schedule_issue();
  void issue_burst();
  void write_burst(int slot);
  bool read_burst(Burst& burst, core::TimePs& ready);
  std::uint8_t* payload(std::vector<std::uint8_t>& buffer, std::uint64_t offset) const;
  void fill_pattern(Burst& burst) const;
  void end_job();
  void try_end();
  void finish();
  // One bulk access issued now; false (and the job failed, the error reported) when rejected.
  bool access(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
              std::uint64_t bytes, core::TimePs& done);
  void fail(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);
  void report(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);
  void trace_job(core::TimePs start);
  std::uint32_t status_word() const;

  bool mapped(std::uint64_t offset) const override;
  std::uint32_t read_word(std::uint64_t offset) const override;
  void write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) override;
  void commit(core::TimePs at);
  // DESC_POST: reads descriptor `index` and queues its job.
  void post_descriptor(std::uint32_t index, core::TimePs at);

  Stats make_stats();

  DmaConfig config_;
  bool functional_;
  std::uint64_t host_base_ = ~0ull;
  bool carries_data_ = false;  // the current job's bytes move
  DmaRegisters registers_;
  IssueWindow window_;
  std::vector<Burst> bursts_;  // one per slot of the window
  std::deque<Queued> jobs_;

  // The job under way.
  Queued current_;
  std::optional<StrideWalker> walker_;
  bool issue_pending_ = false;  // an issue callback is scheduled
  bool slot_wait_ = false;      // the next burst waits for its slot's write to be issued
  bool ending_ = false;         // the end or finish callback is scheduled
  bool failed_ = false;
  core::TimePs job_start_ = 0;

  tlm::tlm_generic_payload trans_;
  Stats stats_;
};

}  // namespace podsim::dma
