// Runs a kernel plan without the chip: the buffers laid out in one flat memory, every launch's
// index space split across `cores` executors exactly as the chip's launcher splits it, one core
// after another. For the kernel tests and for checking the chip against (the results must be the
// same); it takes no time.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/tpc/executor.h"
#include "hw/tpc/kernels/library.h"

namespace podsim::tpc {

struct FunctionalRun {
  std::uint64_t bundles = 0;  // issued by every core of every launch
  int launches = 0;
};

// Throws std::runtime_error naming the launch, core and bundle when a kernel faults.
FunctionalRun run_functional(const KernelPlan& plan,
                             std::vector<std::vector<std::uint8_t>>& buffers, int cores,
                             const ExecutorConfig& config = {});

// Where run_functional and the launcher put buffer i: consecutive, each 256-byte aligned, from
// `base`.
std::vector<std::uint64_t> buffer_addresses(const KernelPlan& plan, std::uint64_t base);

// The executor's view of a launch on one core once its buffers sit at `addresses`.
LaunchState launch_state(const LaunchSpec& launch, const std::vector<std::uint64_t>& addresses,
                         const Slice& slice);

}  // namespace podsim::tpc
