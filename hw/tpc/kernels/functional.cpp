#include "hw/tpc/kernels/functional.h"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/tpc/flat_memory.h"

namespace podsim::tpc {
namespace {

constexpr std::uint64_t kBase = 0x10000000;
constexpr std::uint64_t kStepLimit = 1ull << 36;  // a kernel that never halts

}  // namespace

std::vector<std::uint64_t> buffer_addresses(const KernelPlan& plan, std::uint64_t base) {
  std::vector<std::uint64_t> out;
  std::uint64_t at = base;
  for (const BufferSpec& b : plan.buffers) {
    out.push_back(at);
    at += (b.bytes() + 255) & ~std::uint64_t{255};
  }
  return out;
}

LaunchState launch_state(const LaunchSpec& launch, const std::vector<std::uint64_t>& addresses,
                         const Slice& slice) {
  LaunchState s;
  for (int t = 0; t < kMaxTensors; ++t) {
    const auto& view = launch.tensors[static_cast<std::size_t>(t)];
    if (view) {
      s.tensors[static_cast<std::size_t>(t)] =
          descriptor(*view, addresses.at(static_cast<std::size_t>(view->buffer)));
    }
  }
  s.srf = launch.srf;
  s.slice_start = slice.start;
  s.slice_end = slice.end;
  return s;
}

FunctionalRun run_functional(const KernelPlan& plan,
                             std::vector<std::vector<std::uint8_t>>& buffers, int cores,
                             const ExecutorConfig& config) {
  const std::vector<std::uint64_t> addresses = buffer_addresses(plan, kBase);
  const std::uint64_t end =
      addresses.empty() ? kBase : addresses.back() + plan.buffers.back().bytes();
  FlatMemory memory(kBase, end - kBase);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    std::copy(buffers[i].begin(), buffers[i].end(), memory.at(addresses[i]));
  }
  FunctionalRun run;
  for (const LaunchSpec& launch : plan.launches) {
    const auto program =
        std::make_shared<const Program>(kernel_binary(launch.binary, config.generation));
    Executor executor(config, memory);
    int core = 0;
    for (const Slice& slice : partition(launch.index_space, cores)) {
      executor.start(program, launch_state(launch, addresses, slice));
      std::uint64_t steps = 0;
      while (executor.step() == Executor::State::kRunning && ++steps < kStepLimit) {
      }
      if (executor.state() != Executor::State::kHalted) {
        throw std::runtime_error(
            fmt::format("{} (launch {}, core {}): {}", launch.binary, run.launches, core,
                        executor.error().empty() ? "did not halt" : executor.error()));
      }
      run.bundles += executor.bundles_issued();
      ++core;
    }
    ++run.launches;
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    std::copy(memory.at(addresses[i]), memory.at(addresses[i]) + buffers[i].size(),
              buffers[i].begin());
  }
  return run;
}

}  // namespace podsim::tpc
