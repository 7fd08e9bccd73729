// One piece of compute for `podsim kernel` and bench/compute: a TPC kernel of the library or an
// MME operation, built from a command line's words (name, shape, types, parameters), run on one
// chip of a system model through the compute launcher, checked against its CPU reference and
// measured against its roofline. It runs through the driver and the Synapse runtime as any
// program does (synapse/single_node.h); its time is the engines' span of the launch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/device.h"
#include "hw/engine/engine_shell.h"
#include "hw/mme/operation.h"
#include "hw/system/system_model.h"
#include "hw/tpc/kernels/library.h"
#include "synapse/runtime.h"

namespace podsim::sims {

struct ComputeRequest {
  std::string name;  // a kernel of the library, or gemm, conv_fwd, conv_dgrad, conv_wgrad
  std::vector<std::uint32_t> shape;
  std::string dtype = "bf16";
  std::string to;                             // cast's target, or the MME's result type
  std::map<std::string, std::string> params;  // name -> value as given
  bool trans_a = false, trans_b = false, accumulate = false;
  int engines = 0;  // TPCs or MMEs to use (0: all)
};

bool is_mme_operation(const std::string& name);

// What a run measured; `checked` only in functional mode.
struct ComputeResult {
  bool finished = false, ok = false;
  core::TimePs time = 0;
  double flops = 0;
  double min_bytes = 0;    // bytes the operation must move at least
  double bytes_moved = 0;  // what its engines read and wrote
  // The roofline: the larger of the memory-bound time (min_bytes at the HBM's peak) and the
  // compute-bound one: for an MME operation its flops at the engines' peak, for a TPC kernel its
  // issue-bound time under an ideal schedule (the busiest slot's instructions, one per bundle,
  // spread evenly over the cores used).
  double roofline_ps = 0;
  double memory_ps = 0, compute_ps = 0;
  bool memory_bound = false;
  std::string busiest_slot;  // TPC kernels: load, spu, vpu or store
  std::uint64_t busiest_slot_ops = 0;
  double peak_flops = 0;      // of the engines used, in the operation's type
  double engine_busy = 0;     // mean busy fraction over the engines used
  std::uint64_t bundles = 0;  // TPC kernels
  bool checked = false;
  std::vector<std::string> check_failures;
  double worst = 0;           // MME: largest error as a fraction of the bound
  double simulation_cpu = 0;  // CPU seconds the simulation took (the check's excluded)
  std::string description;
};

class ComputeJob {
 public:
  // Throws UsageError naming what is wrong with the request.
  explicit ComputeJob(const ComputeRequest& request);

  bool mme() const { return mme_.has_value(); }
  const std::string& description() const { return description_; }
  // Bytes of the operands in device memory.
  std::uint64_t device_bytes() const;
  // Host memory a functional run holds (inputs, results read back, the reference's copies).
  std::uint64_t host_bytes(bool functional) const;

  // Runs on chip 0 of `model` (which must be fresh: its engines' statistics are the run's),
  // whose driver properties `props` are (sims::served_device). Throws UsageError naming what the
  // device refused.
  ComputeResult run(system::SystemModel& model, const driver::DeviceProperties& props,
                    std::uint64_t seed, bool lock_step = false);

 private:
  ComputeResult run_kernel(system::SystemModel& model, const driver::DeviceProperties& props,
                           std::uint64_t seed);
  ComputeResult run_mme(system::SystemModel& model, const driver::DeviceProperties& props,
                        std::uint64_t seed);
  void launch(system::SystemModel& model, const driver::DeviceProperties& props, ComputeResult& r,
              const std::vector<const engine::EngineShell*>& engines,
              const std::function<void(synapse::Runtime&)>& program);

  ComputeRequest request_;
  std::optional<tpc::KernelPlan> plan_;
  std::optional<mme::MmeOperation> mme_;
  std::string description_;
  bool lock_step_ = false;
};

}  // namespace podsim::sims
