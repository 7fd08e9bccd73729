// Data-parallel training that really trains (functional mode): every replica runs the MNIST net
// (workloads/convnet.h) through Synapse and the driver on its own chip, on its slice of the same
// global batches, and the replicas' gradients are summed as the strategies arrange it [T1, T3, T4]:
//  - hccl: each replica's loss is the global batch's mean (its gradient pre-divided by the
//    replicas, as DDP divides); gradients copied into DDP buckets (in the order backward yields
//    them, capped at bucket_bytes), each bucket all-reduced by the collectives library on the
//    chips' links and copied back;
//  - horovod: each replica's loss is its own batch's mean; gradients copied into fusion buffers
//    (up to fusion_bytes), summed, copied back, and averaged: the 1/replicas folded into SGD's
//    learning rate, which for SGD with momentum is the same arithmetic. Device-direct, the
//    collectives all-reduce the buffers; host-staged, each buffer goes to the host by the
//    runtime's device-to-host copy (PCIe DMA), the host CPU sums the replicas' copies in fp32 in
//    rank order, and the sum comes back by host-to-device copies; replicas on several hosts: each
//    host sums its own replicas' copies, and the hosts all-reduce their sums over their modeled
//    front-end network (host_staging.h);
//  - ipu-multiworker: each gradient to the host as above, averaged there, and SGD with momentum
//    applied by the host CPU to fp32 master weights and momenta that live only in host memory;
//    the new weights (rounded to the replicas' type) copied back into every replica.
// Before the first step rank 0's parameters are broadcast to the others (over the chips, or
// through the host), which start from other values so that a missing broadcast shows. Copies
// between tensors and buffers are device-to-device DMA on each chip; the runtime and the
// collectives share each device's open file (driver/host_drivers.h).
// Captures: the data path of gradient averaging end to end, so that 4 replicas of batch b end
// with the weights one chip reaches with batch 4b (within the rounding of bf16 sums).
// Ignores: the timing of the strategies (data_parallel.h models that), and the time of the host
// CPUs' own sums (between hosts, the collective's reductions are timed).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/system/system_model.h"
#include "hw/tpc/isa.h"
#include "training/data_parallel.h"

namespace podsim::training {

struct FunctionalOptions {
  Strategy strategy = Strategy::kHccl;
  int replicas = 4;         // on chips 0 .. replicas - 1
  std::uint32_t batch = 8;  // per replica
  int steps = 3;
  double lr = 0.05, momentum = 0.9;
  std::uint64_t bucket_bytes = 25ull << 20;  // hccl [T1]
  std::uint64_t fusion_bytes = 64ull << 20;  // horovod [T3]
  bool broadcast = true;
  bool host_staged = false;  // horovod: summed by the host
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  std::uint64_t seed = 1;
  std::string problem() const;  // why it cannot run, or empty
};

struct FunctionalResult {
  std::vector<double> losses;                   // per step: the global batch's mean loss
  std::vector<double> initial;                  // rank 0's parameters before the first step
  std::vector<std::vector<double>> parameters;  // per replica, after the last step
  int all_reduces = 0;                          // per step
  int hosts = 1;  // through the host: the hosts whose network sums between them
  int broadcasts = 0;
};

// The training's programs, one per replica on its chip's host CPU, started at construction; the
// result fills in as the caller simulates. Several runs may share one simulation (on other
// chips), e.g. a data-parallel run and the one-chip run it should match.
class FunctionalRun {
 public:
  // Rank i on chips[i] (as many chips as replicas). Throws std::invalid_argument on bad options
  // or chips, or naming the host.network key when replicas through the host span boxes whose
  // hosts cannot reach each other. Builds the hosts' network (one per simulation) then.
  FunctionalRun(system::SystemModel& model, const FunctionalOptions& options,
                std::vector<int> chips);
  ~FunctionalRun();
  FunctionalRun(const FunctionalRun&) = delete;
  FunctionalRun& operator=(const FunctionalRun&) = delete;

  // After the simulation: the first failed rank and why ("rank 2: ..."), or empty.
  std::string failure() const;
  // After the simulation; throws std::runtime_error with failure() when a rank failed.
  const FunctionalResult& result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace podsim::training
