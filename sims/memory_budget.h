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

// Throws UsageError "<what> would hold about N of host memory, more than the M available: <advice>"
// when `bytes` is more than available_memory().
void require_memory(std::uint64_t bytes, const std::string& what, const std::string& advice);

}  // namespace podsim::sims
