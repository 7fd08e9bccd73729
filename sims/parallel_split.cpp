#include "sims/parallel_split.h"

#include <fmt/format.h>

#include "core/kernel.h"
#include "sims/parallel/mpi_session.h"

namespace podsim::sims {

parallel::Partition split_for_mpi(const GlobalOptions& options, const system::Topology& topology) {
  if (options.network != system::NetworkMode::kPacket) {
    throw UsageError(
        "--network flow runs in one process (its solver sees every link); under mpirun use "
        "--network packet");
  }
  if (!options.trace_file.empty()) {
    throw UsageError("--trace: a run split among processes writes no trace; run without mpirun");
  }
  if (options.lock_step) {
    throw UsageError("--lock-step: a run split among processes runs in windows; without mpirun");
  }
  try {
    return parallel::partition_by_box(topology, options.mpi->size());
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("mpirun -np {}: {}", options.mpi->size(), e.what()));
  }
}

void run_simulation(const GlobalOptions& options, parallel::ParallelRun* parallel) {
  if (parallel) {
    parallel->run();
  } else {
    core::run_to_completion(options.lock_step);
  }
}

bool end_split_run(const GlobalOptions& options, parallel::ParallelRun& parallel) {
  parallel.gather_stats();
  std::vector<std::uint64_t> frames{parallel.frames_sent()};
  options.mpi->sum(frames);
  if (options.mpi->rank() != 0) return false;
  fmt::print(
      "parallel   {} windows, {} frames handed over, rank 0 spent {:.2f} s between windows\n",
      parallel.windows(), frames[0], parallel.exchange_seconds());
  return true;
}

}  // namespace podsim::sims
