// A stand-in for the on-chip engines that combine collective data (TPCs running a reduction
// kernel, DMA engines with reduction), until their models land: it reads operand buffers from
// chip memory through TLM, combines them element by element (core/numeric.h) and writes the
// result back, so memory bandwidth shared with the NIC costs time.
// Captures: three bytes of memory traffic per byte reduced (two reads, one write; two for a
// copy), a compute rate, a start latency per job, jobs served one at a time in submission
// order, and work in tiles so the NIC's traffic interleaves with it. Ignores: the TPC's VLIW
// pipeline and local memories, SRAM staging, and several engines working side by side.
// Each step runs as a callback of the shared core::EventQueue rather than in a thread: a
// thread's timed wait per tile put a kernel event and a context switch behind every 32 KiB, a
// large share of a 1024-chip run.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/chip/program.h"
#include "hw/core/config_binding.h"
#include "hw/core/event_queue.h"
#include "hw/core/numeric.h"
#include "hw/core/stats.h"
#include "hw/core/trace.h"
#include "hw/core/units.h"

namespace podsim::chip {

struct ReductionEngineConfig {
  core::Bandwidth throughput{422.4e9 * 8};
  core::Duration latency{500000};
  core::ByteSize tile{32 * 1024};

  template <class V>
  void describe(V& v) {
    v.field("throughput", throughput,
            core::Spec("bytes of result produced per second, memory aside")
                .positive()
                .source("[S2]: one TPC's 256-byte vector per cycle x 1.65 GHz "
                        "([S6], Gaudi2 [D]) = 422.4 GB/s"));
    v.field("latency", latency,
            core::Spec("from a job's start to its first memory access")
                .min(0)
                .source("placeholder [U]: a kernel launch, until the TPC model lands"));
    v.field("tile", tile,
            core::Spec("bytes per step: small enough that the NIC's packet reads interleave with "
                       "the engine's (the memory serves transfers in arrival order), large enough "
                       "that each step's memory latency stays hidden")
                .range(256, 1e9)
                .source("podsim: 32 KiB keeps hls1 and hls2 direct all-reduce within 3% of link "
                        "goodput; 8 KiB starves the engine, 256 KiB stalls the NICs"));
  }
  void check(core::ConfigChecks& c) const;
};

class ReductionEngine : public sc_core::sc_module, public Engine, private core::Timed {
 public:
  tlm_utils::simple_initiator_socket<ReductionEngine> memory_socket;

  // `functional`: move and combine real bytes (the memory keeps contents); otherwise only time.
  // Throws std::invalid_argument on a bad configuration, naming the key.
  ReductionEngine(sc_core::sc_module_name name, const ReductionEngineConfig& config,
                  bool functional);

  void submit(const Job& job, std::function<void(bool ok)> done) override;
  std::size_t queued() const { return jobs_.size(); }

  struct Stats {
    core::Counter& jobs;
    core::Counter& bytes;  // of results
    core::Counter& busy_ps;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Queued {
    Job job;
    std::function<void(bool)> done;
  };
  void begin_next();
  void fire(std::uint32_t tag) override;  // the job's next tile, or its end
  void finish(bool ok);
  void trace_job(const Job& job, core::TimePs start);  // a span per job, when tracing
  // One tile issued now; `next` is when the engine may go on.
  bool tile(const Job& job, std::uint64_t offset, std::uint32_t bytes, core::TimePs& next);
  Stats make_stats();

  ReductionEngineConfig config_;
  bool functional_;
  std::deque<Queued> jobs_;
  bool busy_ = false;  // a job is under way: current_
  Queued current_;
  std::uint64_t offset_ = 0;  // bytes of current_ done
  core::TimePs job_start_ = 0;
  std::vector<std::uint8_t> a_, b_;
  tlm::tlm_generic_payload trans_;
  Stats stats_;
  core::TrackId track_{};
};

}  // namespace podsim::chip
