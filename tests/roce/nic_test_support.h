// What the NIC's SystemC tests share: a fast memory, a completion recorder, random payloads.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "core/kernel.h"
#include "core/memory_target.h"
#include "core/random.h"
#include "hw/fabric/packet.h"
#include "hw/roce/completion_queue.h"

namespace podsim::roce::nic_test {

constexpr std::uint64_t kMiB = 1 << 20;
constexpr fabric::EndpointId kAddrA = 1, kAddrB = 2;  // the two NICs of a pair

// Memory well above line rate: an HBM2E-class 2.45 TB/s with 10 ns latency.
inline core::MemoryTargetConfig memory_config(bool functional, std::uint64_t size = 256 * kMiB) {
  core::MemoryTargetConfig c;
  c.size = core::ByteSize{size};
  c.bandwidth = core::Bandwidth{2.45e12 * 8};
  c.latency = core::Duration{10000};
  c.functional = functional;
  return c;
}

// Records every completion of a CQ with the time it was delivered.
struct Recorder {
  struct Entry {
    Completion c;
    core::TimePs at;
  };
  std::vector<Entry> entries;
  void attach(CompletionQueue& cq) {
    cq.set_callback([this](const Completion& c) { entries.push_back({c, core::now_ps()}); });
  }
};

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  core::Random rng(seed);
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t x = rng.next();
    for (std::size_t k = 0; k < 8 && i + k < n; ++k)
      v[i + k] = static_cast<std::uint8_t>(x >> (8 * k));
  }
  return v;
}

inline std::vector<std::uint8_t> read_memory(core::MemoryTarget& m, std::uint64_t addr,
                                             std::size_t n) {
  std::vector<std::uint8_t> v(n);
  m.backing().read(addr, v.data(), n);
  return v;
}

// Verbs may be called once the kernel has started (the memory socket is bound by then).
inline void start() { sc_core::sc_start(sc_core::SC_ZERO_TIME); }

}  // namespace podsim::roce::nic_test
