// When each bundle of a TPC kernel runs, without the kernel: a load pipe that issues a bundle's
// global loads, running ahead of the vector pipe by up to `load_queue` loads (the public TPC
// issues vector loads in its scalar pipe to hide memory latency and stalls its vector pipe when
// the data is late [S7, TPC Coherency]), and a vector pipe that issues one bundle per cycle
// unless a load's data is late, a store finds the store queue full, or a fence waits for every
// store. A stall freezes the pipeline: it never changes a result (latencies count bundles).
// Captures: those three stalls and the latency of the pipeline's drain at the end. Ignores:
// instruction fetch (kernels run from an instruction cache once fetched) and bank conflicts in
// local memory.
#pragma once

#include <cstdint>
#include <vector>

#include "core/units.h"

namespace podsim::tpc {

struct PipelineTiming {
  core::TimePs cycle = 1;
  int load_queue = 64;
  int store_queue = 16;
  int drain = 15;  // cycles after the last bundle until its results have landed
};

class PipelineTimer {
 public:
  explicit PipelineTimer(const PipelineTiming& timing);

  // A kernel starts at `at`.
  void start(core::TimePs at);
  // The next bundle.
  void begin_bundle();
  // When this bundle's loads issue: the load pipe's cycle, later if the load queue is full.
  core::TimePs load_issue_time();
  // One of this bundle's loads has its data at `ready`.
  void load_data_at(core::TimePs ready);
  // When the vector pipe runs this bundle (fixed once asked, after the bundle's loads).
  core::TimePs vector_time();
  // When a write transaction may issue: the vector time, later if the store queue is full.
  core::TimePs store_issue_time();
  // A write issued as store_issue_time() said completes at `done`.
  void store_done(core::TimePs done);
  // The vector pipe waits until every store has completed.
  void fence();
  void end_bundle();
  // Advances by `n` bundles without memory access (tile replay).
  void skip_bundles(std::uint64_t n);

  // When the kernel is over: its last bundle's results landed and its stores completed.
  core::TimePs end_time() const;
  // The vector pipe's time of the latest bundle.
  core::TimePs now() const { return vector_; }
  std::uint64_t bundles() const { return bundles_; }
  // Vector-pipe cycles lost waiting for loads, for the store queue and for fences.
  core::TimePs load_stall() const { return load_stall_; }
  core::TimePs store_stall() const { return store_stall_; }

 private:
  PipelineTiming timing_;
  core::TimePs front_ = 0, vector_ = 0, last_store_ = 0;
  bool front_fixed_ = false, vector_fixed_ = false;
  core::TimePs bundle_front_ = 0, bundle_ready_ = 0;
  int bundle_loads_ = 0;
  std::vector<core::TimePs> consumed_;  // ring: when each of the last load_queue loads was used
  std::size_t next_load_ = 0;           // the ring's slot of the next load
  std::vector<core::TimePs> stores_;    // ring: when each of the last store_queue writes completes
  std::size_t next_store_ = 0;          // the ring's slot of the next write
  std::uint64_t bundles_ = 0;
  core::TimePs load_stall_ = 0, store_stall_ = 0;
};

}  // namespace podsim::tpc
