// A traffic generator in the manner of DRAMsim3's CPU front ends ([H2] src/cpu.cc): each clock
// it offers one 32-byte request (the next of a sequential or uniformly random address stream,
// a given share of them writes) and keeps offering it until a controller queue takes it; at most
// `outstanding` reads are in flight. Writes are posted (done when queued), as in DRAMsim3.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "hw/hbm/address_map.h"
#include "hw/hbm/controller.h"
#include "hw/hbm/hbm_config.h"

namespace podsim::hbm::testing {

// One HBM2 channel, two pseudo-channels at 1 GHz: the calibration setup.
inline HbmConfig one_channel() {
  HbmConfig c = hbm2();
  c.geometry.stacks = 1;
  c.geometry.channels_per_stack = 1;
  return c;
}

enum class Stream { kSequential, kRandom };

struct TrafficResult {
  double fraction_of_peak = 0;   // data-bus cycles used / cycles, over all pseudo-channels
  double mean_read_latency = 0;  // cycles, arrival to last beat
  std::uint64_t reads = 0, writes = 0;
  ControllerStats stats;  // summed over the pseudo-channels
};

inline TrafficResult run_traffic(const HbmConfig& config, Stream stream, double write_share,
                                 int outstanding, Cycle cycles, Cycle gap = 0,
                                 std::uint64_t seed = 1) {
  const AddressDecoder decoder(config.geometry, config.address_map);
  std::vector<Controller> pcs(static_cast<std::size_t>(config.geometry.pc_count()),
                              Controller(config));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> share(0, 1);
  const std::uint64_t bursts = decoder.capacity() / decoder.burst_bytes();
  std::uint64_t next_sequential = 0, id = 0;
  std::vector<Cycle> issued;  // per read id: arrival
  int in_flight = 0;
  double latency_sum = 0;
  TrafficResult r;
  const auto next_request = [&] {
    const std::uint64_t burst =
        stream == Stream::kSequential ? next_sequential++ % bursts : rng() % bursts;
    return Request{id++, decoder.decode(burst * decoder.burst_bytes()), share(rng) < write_share};
  };
  Request pending = next_request();
  Cycle next_offer = 0;
  for (Cycle now = 0; now < cycles; ++now) {
    for (Controller& pc : pcs) {
      pc.tick(now, [&](std::uint64_t done_id, Cycle end) {
        latency_sum += static_cast<double>(end - issued[done_id]);
        --in_flight;
      });
    }
    if (now < next_offer || (!pending.write && in_flight >= outstanding)) continue;
    Controller& target = pcs[static_cast<std::size_t>(pending.location.unit)];
    if (!target.enqueue(pending, now)) continue;
    if (issued.size() <= pending.id) issued.resize(pending.id + 1);
    issued[pending.id] = now;
    if (!pending.write) ++in_flight;
    ++(pending.write ? r.writes : r.reads);
    pending = next_request();
    next_offer = now + gap;
  }
  std::uint64_t busy = 0, reads_done = 0;
  for (const Controller& pc : pcs) {
    const ControllerStats& s = pc.stats();
    busy += s.busy_cycles;
    reads_done += s.reads;
    r.stats.reads += s.reads;
    r.stats.writes += s.writes;
    r.stats.row_hits += s.row_hits;
    r.stats.row_misses += s.row_misses;
    r.stats.row_conflicts += s.row_conflicts;
    r.stats.refreshes += s.refreshes;
  }
  r.fraction_of_peak = static_cast<double>(busy) / static_cast<double>(cycles * pcs.size());
  r.mean_read_latency = reads_done ? latency_sum / static_cast<double>(reads_done) : 0;
  return r;
}

}  // namespace podsim::hbm::testing
