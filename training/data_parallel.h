// Synchronous data-parallel training steps on a communicator's chips [T1, T2, T3, T4]: every
// replica computes the step the profile measured (timeline.h) and the gradients are averaged on
// the modeled hardware as a framework issues them:
//  - hccl (TensorFlow's HPUStrategy, Lightning's HPUParallelStrategy, PyTorch DDP over HCCL):
//    gradients packed into buckets whose all-reduce starts on the chips' RoCE ports as soon as
//    the bucket's last gradient is ready, overlapping the rest of the backward pass, one
//    collective at a time in issue order (one HCCL stream);
//  - horovod: tensor fusion, a background cycle that all-reduces (ring) what became ready since
//    the last cycle, fused up to a threshold; device-direct on the chips' ports, or host-staged
//    (Horovod over MPI): each fused buffer copied to the host over PCIe, the box's copies summed
//    by the host CPU, a ring all-reduce between the hosts over their front-end network, and the
//    result copied back;
//  - ipu-multiworker (Graphcore's multi-worker strategies): every gradient streamed to the host
//    as backward yields it, summed there and all-reduced between the hosts, the optimizer's
//    update on the host CPU (its state only in host memory) and the new weights copied back, all
//    overlapping the rest of backward;
//  - popdist (Graphcore's PopDist on IPU pods): the replicas' gradients all-reduced on the
//    devices by rings over the IPU-Links (and GW-Links between pods) once the backward pass has
//    ended: the collective is compiled into the step's program, whose bulk-synchronous phases
//    do not overlap compute with exchange; the first step's broadcast over the hosts' network;
//    replicas pipelined over several IPUs all-reduce each stage's gradients among that stage's
//    IPUs, every stage at once; with the optimizer state sharded over the replicas (replicated
//    tensor sharding), a reduce-scatter leaves each replica the sum of its shard, which it
//    updates, and an all-gather of the new weights follows the optimizer;
//  - ipu-server: hierarchical for IPUs on PCIe cards: the gradients all-reduced inside each
//    server over its IPU-Links, then each server's sum staged to its host, all-reduced between
//    the hosts over their network, and copied back to every IPU.
// The optimizer runs once every gradient is reduced (on the chips, but for ipu-multiworker);
// before the first step rank 0's parameters are broadcast (DDP's construction, in 250 MiB
// buckets; a pipelined ring from rank 0 as NCCL broadcasts [T8]), through the hosts when the
// strategy reduces there.
// Captures: the collectives' real time on the system's chips and fabric and on the hosts' network
// (their contention with each other), PCIe staging shared by a socket's chips (pcie_staging.h),
// the host CPU's reduction and update rates, the overlap with compute, the step's critical path.
// Ignores: compute sharing the chips' memory and engines with the collectives (replicas are
// replayed from the profile), the averaging's scale (folded into the optimizer), stragglers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "collectives/communicator.h"
#include "core/trace.h"
#include "hw/pcie/pcie_timing.h"
#include "hw/system/pcie_staging.h"
#include "training/collective_replay.h"
#include "training/timeline.h"

namespace podsim::training {

// How gradients become collectives (see the header's top).
enum class Strategy { kHccl, kHorovod, kIpuMultiworker, kPopdist, kIpuServer };

// Whether the strategy's gradients go through the hosts.
inline bool through_hosts(Strategy s, bool host_staged) {
  return s == Strategy::kIpuMultiworker || s == Strategy::kIpuServer ||
         (s == Strategy::kHorovod && host_staged);
}
// Whether the strategy needs the hosts at all (popdist broadcasts over their network).
inline bool uses_hosts(Strategy s, bool host_staged) {
  return through_hosts(s, host_staged) || s == Strategy::kPopdist;
}

// What the host-staged strategies reach beyond the chips: the boxes' PCIe trees, the hosts'
// CPUs and the communicator over their front-end network.
struct HostPath {
  system::PcieStaging* staging = nullptr;
  collectives::Communicator* hosts = nullptr;  // rank h: the h-th box the workers use; nullptr
                                               // when they all share one host
  std::vector<int> host_of_rank;               // the workers' boxes, as ranks of `hosts`
  double reduce_bytes_per_s = 0, update_bytes_per_s = 0;  // the host CPU's (host_cpu.h)
};

struct DataParallelOptions {
  Strategy strategy = Strategy::kHccl;
  std::uint64_t bucket_bytes = 25ull << 20;  // hccl: DDP's bucket_cap_mb default [T1]
  std::uint64_t fusion_bytes = 64ull << 20;  // horovod: HOROVOD_FUSION_THRESHOLD [T3]
  core::TimePs cycle_ps = 5'000'000'000;     // horovod: HOROVOD_CYCLE_TIME, 5 ms [T3]
  std::uint64_t gradient_bytes = 2;          // per parameter: bf16
  std::uint64_t parameter_bytes = 2;         // the weights the step-0 broadcast sends (bf16)
  std::uint64_t parameters = 0;              // the model's
  bool host_staged = false;                  // horovod: reduced on the hosts
  // ipu-multiworker: bytes the host's update reads and writes per parameter: fp32 master weight,
  // two fp32 moments (each read and written), the fp32 gradient read, the bf16 weight written
  // (AdamW with master weights [T7]).
  std::uint64_t update_bytes = 30;
  bool overlap = true;         // false: every all-reduce waits for the backward pass's end
  bool broadcast = true;       // the first step broadcasts the parameters from rank 0
  bool ideal_network = false;  // collectives take no time
  int rings = 1;               // popdist, ipu-server: rings per all-reduce (ring.h's lanes)
  // popdist with replicas pipelined over IPUs (ipu_pipeline.h): each stage's parameters. Rank
  // s * replicas + r is replica r's stage s (place_pipeline); each stage's ranks all-reduce its
  // gradients, every stage at once. Empty: one IPU per replica.
  std::vector<std::uint64_t> stage_parameters;
  // popdist: the optimizer state sharded over the replicas (the timeline's optimizer updates a
  // shard): gradients reduce-scattered, the new weights all-gathered after the update.
  bool shard_optimizer = false;
  int steps = 2;  // the first with the broadcast
  // Identical collectives on a quiet system replayed rather than simulated again
  // (collective_replay.h): the same times (approximately, through congestion); the trace and the
  // statistics other than counters miss the replayed ones.
  ReplayMode replay = ReplayMode::kOff;
  std::uint64_t base = 0;  // where the collectives' buffers start on every chip
};

struct StepResult {
  core::TimePs start_ps = 0, end_ps = 0;
  core::TimePs broadcast_ps = 0;  // the first step's broadcast, before its forward pass
  core::TimePs comm_ps = 0;       // the all-reduces' summed durations
  int all_reduces = 0;            // hccl: one per bucket; horovod: one per fused buffer
                                  // (a sharded optimizer's reduce-scatters count here)
  int all_gathers = 0;            // a sharded optimizer's, of the new weights
  int cycles = 0;                 // horovod: fusion cycles that found gradients
  core::TimePs step_ps() const { return end_ps - start_ps; }
};

class DataParallelRun : public sc_core::sc_module {
 public:
  // The broadcast's bucket (DDP's _broadcast_coalesced default) [T1].
  static constexpr std::uint64_t kBroadcastBucket = 250ull << 20;

  SC_HAS_PROCESS(DataParallelRun);
  // `host` is needed (and kept) when the strategy goes through the hosts; throws
  // std::invalid_argument when it is missing or does not cover every rank.
  DataParallelRun(sc_core::sc_module_name name, collectives::Communicator& comm, Timeline timeline,
                  DataParallelOptions options, HostPath host = {});

  const std::vector<StepResult>& steps() const { return steps_; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  const Timeline& timeline() const { return timeline_; }
  // A worker's own compute per step: the passes, and the optimizer when it runs on the chip.
  core::TimePs compute_ps() const {
    return timeline_.backward_ps +
           (options_.strategy == Strategy::kIpuMultiworker ? 0 : timeline_.optimizer_ps);
  }
  // Collectives simulated and replayed (collective_replay.h).
  const CollectiveReplay& replay() const { return replay_; }
  // Why the run stopped early, or empty.
  const std::string& failure() const { return failure_; }

 private:
  void run();
  StepResult step(bool first);
  core::TimePs handed_ps(core::TimePs ready_ps) const;
  void all_reduce(std::uint64_t bytes, StepResult& r);
  void reduce_buckets(core::TimePs compute_start, StepResult& r);
  void reduce_fused(core::TimePs compute_start, StepResult& r);
  void stream_to_hosts(core::TimePs compute_start, StepResult& r);
  void reduce_compiled(core::TimePs compute_start, StepResult& r);
  void split_stages();
  void gather_weights(StepResult& r);
  void among_replicas(collectives::Op op, std::uint64_t bytes_per_parameter, StepResult& r);
  void run_each(std::map<int, collectives::Communicator>& groups, collectives::Op op,
                const std::function<std::uint64_t(int)>& bytes_of, const char* whose);
  collectives::Op gradient_op() const;
  void reduce_per_server(core::TimePs compute_start, StepResult& r);
  void staged_all_reduce(std::uint64_t bytes, StepResult& r);
  void host_all_reduce(std::uint64_t bytes);
  core::TimePs broadcast();
  void staged_broadcast(std::uint64_t bytes);
  // Every rank's copy of `bytes` (rank 0's alone with `only_first`) over PCIe, issued at
  // `issued`: when the last ends.
  core::TimePs stage(std::uint64_t bytes, pcie::Direction direction, core::TimePs issued,
                     bool only_first = false);
  // Starts `op` over `bytes` on `comm` and returns once every host knows it ended; its duration.
  core::TimePs collective(collectives::Communicator& comm, collectives::Op op, std::uint64_t bytes);
  collectives::Spec spec(const collectives::Communicator& comm, collectives::Op op,
                         std::uint64_t bytes) const;
  void wait_until(core::TimePs t);
  void trace_compute(core::TimePs start) const;
  void trace_pipeline(core::TimePs start) const;
  void trace_span(const char* name, core::TimePs start, core::TimePs end) const;
  void trace_instant(const std::string& name, core::TimePs at) const;
  void trace_host(const std::string& name, core::TimePs start, core::TimePs end) const;
  core::TrackId track(int rank, const char* row = "training") const;  // a row of rank's chip

  collectives::Communicator& comm_;
  Timeline timeline_;
  DataParallelOptions options_;
  HostPath host_;
  double host_reduce_ps_per_byte_ = 0;  // the box with the most workers: its local sum
  std::vector<Bucket> buckets_;
  std::map<int, collectives::Communicator> servers_;  // ipu-server: each box's ranks
  std::map<int, collectives::Communicator> stages_;   // pipelined popdist: each stage's ranks
  std::vector<StepResult> steps_;
  CollectiveReplay replay_;
  std::string failure_;
};

}  // namespace podsim::training
