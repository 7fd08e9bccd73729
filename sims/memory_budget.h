// A run estimates the host memory it will hold before it builds anything, and is refused with
// advice when that exceeds what the machine has free, so it never dies of memory without a word.
// Captures: the bytes a run's buffers and models will hold. Ignores: allocator overhead and the
// pages the kernel and libraries take (the estimate is a floor, not a ceiling).
#pragma once

#include <cstdint>
#include <string>

namespace podsim::sims {

// Bytes this process may still take: MemAvailable from /proc/meminfo, or PODSIM_MEMORY_LIMIT
// (bytes or a size such as "2GiB") when set, which tests and shared machines use.
std::uint64_t available_memory();

// "1.5 GiB", "300 KiB": a size to one decimal in the largest binary unit it reaches.
std::string approximate_size(std::uint64_t bytes);

// What the models of a system of `chips` chips hold before any traffic: each chip's blocks, its
// host's driver state and its share of the network (measured: hls2-rack8x and hls2-rack16x
// timing-only runs of a 1 KiB all-reduce peak at 1.51 and 3.11 GiB, 3.2 MiB per chip more; the
// floor takes 3 MiB). Coarse chips (no engines, queues or sync managers, no driver state) hold
// less: the same runs with --chips coarse peak at 0.22 and 0.41 GiB, and hls2-rack32x at 0.80 GiB,
// 396 KiB per chip more; the floor takes 400 KiB.
std::uint64_t system_model_bytes(int chips, bool coarse_chips = false);
// Refuses a system too large to build here, naming the chips and how to shrink it. Under mpirun
// every process builds the whole system: `processes_here` of them on this machine.
void require_system_memory(int chips, int processes_here = 1, bool coarse_chips = false);

// Throws UsageError "<what> would hold about N of host memory, more than the M available: <advice>"
// when `bytes` is more than available_memory().
void require_memory(std::uint64_t bytes, const std::string& what, const std::string& advice);

}  // namespace podsim::sims
