// One part of a packet-level system run across MPI processes: this process elaborates the whole
// system but simulates only its part (partition.h); the cables cut between parts hand their
// frames over to the process at the far end. Processes advance together in windows of simulated
// time as long as the lookahead (the shortest cut cable's delay): a frame sent in a window
// arrives after it ends, so each window runs without hearing from the others, and between
// windows they exchange the frames sent and agree on the next window from the earliest pending
// activity of any (conservative synchronisation without null messages, [N9]).
// Captures: the frames' exact due times, so results and statistics are those of one process
// (link arrivals run in a fixed order at their time: core::EventQueue::schedule_keyed); the
// hosts' notices (system/host_notices.h), handed to every other process between windows like
// frames (so the lookahead must not exceed their delay either); stats gathered at rank 0.
// Ignores: software that spans parts but for its notices (whatever posts work must post it only
// on the chips of its own part: SystemModel::simulates says which), and flow mode (one solver
// sees every link).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hw/fabric/link.h"
#include "hw/system/system_model.h"
#include "sims/parallel/mpi_session.h"
#include "sims/parallel/partition.h"

namespace podsim::parallel {

class ParallelRun {
 public:
  // Cuts `model`'s links as `partition` says; before simulation. Throws std::invalid_argument for
  // a flow-mode model or a partition of another size than the session.
  ParallelRun(const MpiSession& mpi, system::SystemModel& model, Partition partition);
  ~ParallelRun();

  const Partition& partition() const { return partition_; }
  int part() const { return mpi_.rank(); }
  bool owns_chip(int chip) const { return partition_.owns_chip(part(), chip); }

  // Simulates until no process has anything left to do. Every process calls it.
  void run();
  std::uint64_t windows() const { return windows_; }
  std::uint64_t frames_sent() const { return frames_sent_; }
  // Wall time between windows: handing frames over, and waiting for the slowest process.
  double exchange_seconds() const { return exchange_seconds_; }

  // Adds every other process's statistics into rank 0's registry (where they were zero: each
  // component counts in the process that simulates it). Every process calls it.
  void gather_stats() const;

 private:
  class Outbound;
  void exchange();
  core::TimePs local_next() const;

  const MpiSession& mpi_;
  system::SystemModel& model_;
  Partition partition_;
  std::vector<std::unique_ptr<Outbound>> outbound_;
  std::vector<std::vector<char>> outgoing_;  // frames, by destination process
  std::vector<system::Notice> notices_;      // posted here this window, for every other process
  std::uint64_t windows_ = 0, frames_sent_ = 0;
  double exchange_seconds_ = 0;
};

}  // namespace podsim::parallel
