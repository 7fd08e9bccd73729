// How a command that runs under mpirun splits its system: what it refuses there (the flow
// network, traces, lock step) and the partition by box (sims/parallel/partition.h), each refusal a
// UsageError naming the option; then its run, in windows or in one kernel, and its end.
#pragma once

#include "hw/system/topology.h"
#include "sims/command.h"
#include "sims/parallel/parallel_run.h"
#include "sims/parallel/partition.h"

namespace podsim::sims {

// Throws UsageError when the options cannot run split or the system has too few boxes.
parallel::Partition split_for_mpi(const GlobalOptions& options, const system::Topology& topology);

// Runs the simulation to its end: split among the processes when `parallel` is set, else in one
// kernel.
void run_simulation(const GlobalOptions& options, parallel::ParallelRun* parallel);

// After a split run, on every process once its own results are gathered: the statistics go to
// rank 0, which prints what the split cost. True at rank 0, which reports; false elsewhere.
bool end_split_run(const GlobalOptions& options, parallel::ParallelRun& parallel);

}  // namespace podsim::sims
