// Synchronous data-parallel training steps on a communicator's chips [T1, T2]: every replica
// computes the step the profile measured (timeline.h) and the gradients are averaged by all-reduces
// on the modeled network as a framework issues them. Strategy `hccl` (TensorFlow's HPUStrategy,
// Lightning's HPUParallelStrategy, PyTorch DDP over HCCL): gradients packed into buckets whose
// all-reduce starts on the chips' RoCE ports as soon as the bucket's last gradient is ready,
// overlapping the rest of the backward pass, one collective at a time in issue order (one HCCL
// stream); the first step's broadcast is a pipelined ring from rank 0, as NCCL broadcasts [T8].
// Strategy `horovod` (device-direct): Horovod's tensor fusion, a background cycle
// that all-reduces (ring) what became ready since the last cycle, fused up to a threshold.
// The optimizer runs once every gradient is reduced; before the first step rank 0's
// parameters are broadcast (DDP's construction, in 250 MiB buckets).
// Captures: the collectives' real time on the system's chips and fabric (their contention with
// each other), the overlap with compute, the step's critical path. Ignores: compute sharing the
// chips' memory and engines with the collectives (replicas are replayed from the profile), the
// averaging's scale (folded into the optimizer), stragglers.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "collectives/communicator.h"
#include "hw/core/trace.h"
#include "training/timeline.h"

namespace podsim::training {

// How gradients become collectives (see the header's top).
enum class Strategy { kHccl, kHorovod };

struct DataParallelOptions {
  Strategy strategy = Strategy::kHccl;
  std::uint64_t bucket_bytes = 25ull << 20;  // hccl: DDP's bucket_cap_mb default [T1]
  std::uint64_t fusion_bytes = 64ull << 20;  // horovod: HOROVOD_FUSION_THRESHOLD [T3]
  core::TimePs cycle_ps = 5'000'000'000;     // horovod: HOROVOD_CYCLE_TIME, 5 ms [T3]
  std::uint64_t gradient_bytes = 2;          // per parameter: bf16
  std::uint64_t parameter_bytes = 2;         // the weights the step-0 broadcast sends (bf16)
  std::uint64_t parameters = 0;              // the model's
  bool overlap = true;         // false: every all-reduce waits for the backward pass's end
  bool broadcast = true;       // the first step broadcasts the parameters from rank 0
  bool ideal_network = false;  // collectives take no time
  int steps = 2;               // the first with the broadcast
  std::uint64_t base = 0;      // where the collectives' buffers start on every chip
};

struct StepResult {
  core::TimePs start_ps = 0, end_ps = 0;
  core::TimePs broadcast_ps = 0;  // the first step's broadcast, before its forward pass
  core::TimePs comm_ps = 0;       // the all-reduces' summed durations
  int all_reduces = 0;            // hccl: one per bucket; horovod: one per fused buffer
  int cycles = 0;                 // horovod: fusion cycles that found gradients
  core::TimePs step_ps() const { return end_ps - start_ps; }
};

class DataParallelRun : public sc_core::sc_module {
 public:
  // The broadcast's bucket (DDP's _broadcast_coalesced default) [T1].
  static constexpr std::uint64_t kBroadcastBucket = 250ull << 20;

  SC_HAS_PROCESS(DataParallelRun);
  DataParallelRun(sc_core::sc_module_name name, collectives::Communicator& comm, Timeline timeline,
                  DataParallelOptions options);

  const std::vector<StepResult>& steps() const { return steps_; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  const Timeline& timeline() const { return timeline_; }
  // Why the run stopped early, or empty.
  const std::string& failure() const { return failure_; }

 private:
  void run();
  StepResult step(bool first);
  core::TimePs handed_ps(core::TimePs ready_ps) const;
  void all_reduce(std::uint64_t bytes, StepResult& r);
  void reduce_buckets(core::TimePs compute_start, StepResult& r);
  void reduce_fused(core::TimePs compute_start, StepResult& r);
  core::TimePs broadcast();
  // Starts `op` over `bytes` and returns once every host knows it ended; its duration.
  core::TimePs collective(collectives::Op op, std::uint64_t bytes);
  void wait_until(core::TimePs t);
  void trace_compute(core::TimePs start) const;
  void trace_span(const char* name, core::TimePs start, core::TimePs end) const;
  void trace_instant(const std::string& name, core::TimePs at) const;
  core::TrackId track(int rank) const;  // rank's row of its chip

  collectives::Communicator& comm_;
  Timeline timeline_;
  DataParallelOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<StepResult> steps_;
  std::string failure_;
};

}  // namespace podsim::training
