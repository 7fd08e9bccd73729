#include "hw/ipulink/bsp_roofline.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace podsim::ipulink {

namespace {

// Rounded up to a whole picosecond, ignoring excesses below a millionth of one so that a time
// that is a whole number of picoseconds in exact arithmetic is not pushed up by rounding error.
core::TimePs ceil_ps(long double seconds) {
  const long double ps = seconds * 1e12L;
  if (ps <= 0) return 0;
  return static_cast<core::TimePs>(std::ceil(ps - 1e-6L));
}

void require_non_negative(double value, const char* field) {
  if (!(value >= 0) || !std::isfinite(value)) {
    throw std::invalid_argument(std::string(field) + ": must be a finite number >= 0, got " +
                                std::to_string(value));
  }
}

}  // namespace

PhaseTimes bsp_time(const IpuConfig& ipu, const PhaseWork& work) {
  core::validate_config(ipu);
  require_non_negative(work.flops, "flops");
  require_non_negative(work.memory_bytes, "memory_bytes");
  require_non_negative(work.exchange_bytes, "exchange_bytes");
  if (work.supersteps < 1) {
    throw std::invalid_argument("supersteps: a layer is at least one superstep, got " +
                                std::to_string(work.supersteps));
  }
  if (!(work.efficiency > 0 && work.efficiency <= 1)) {
    throw std::invalid_argument("efficiency: must be in (0, 1], got " +
                                std::to_string(work.efficiency));
  }

  const long double flops_s = static_cast<long double>(work.flops) /
                              (static_cast<long double>(ipu.peak_fp16.flops) * work.efficiency);
  const long double memory_s = static_cast<long double>(work.memory_bytes) /
                               static_cast<long double>(ipu.memory_bandwidth.bytes_per_second());
  const core::TimePs flops_ps = ceil_ps(flops_s);
  const core::TimePs memory_ps = ceil_ps(memory_s);

  PhaseTimes t;
  t.compute_ps = std::max(flops_ps, memory_ps);
  const auto steps = static_cast<core::TimePs>(work.supersteps);
  if (work.exchange_bytes > 0) {
    // Each superstep's exchange pays the latency once; the bytes stream at the full rate.
    t.exchange_ps = ceil_ps(static_cast<long double>(work.exchange_bytes) /
                            static_cast<long double>(ipu.exchange_bandwidth.bytes_per_second())) +
                    steps * static_cast<core::TimePs>(ipu.exchange_latency.ps);
  }
  const core::Duration sync =
      work.sync == SyncScope::kChip ? ipu.sync_latency : ipu.sync_link_latency;
  t.sync_ps = steps * static_cast<core::TimePs>(sync.ps);

  // Ties go to the earlier term: flops before memory before exchange before sync.
  t.limit = memory_ps > flops_ps ? Limit::kMemory : Limit::kFlops;
  core::TimePs largest = t.compute_ps;
  if (t.exchange_ps > largest) {
    t.limit = Limit::kExchange;
    largest = t.exchange_ps;
  }
  if (t.sync_ps > largest) t.limit = Limit::kSync;
  return t;
}

MemoryFit memory_fit(const IpuConfig& ipu, const WorkingSet& set) {
  core::validate_config(ipu);
  require_non_negative(set.weight_bytes, "weight_bytes");
  require_non_negative(set.activation_bytes, "activation_bytes");
  require_non_negative(set.optimizer_bytes, "optimizer_bytes");
  require_non_negative(set.code_bytes, "code_bytes");

  MemoryFit fit;
  fit.required_bytes = set.total();
  fit.available_bytes = static_cast<double>(ipu.memory_bytes());
  fit.fits = fit.required_bytes <= fit.available_bytes;
  fit.excess_bytes = fit.fits ? 0 : fit.required_bytes - fit.available_bytes;
  fit.stream_ps =
      ceil_ps(static_cast<long double>(fit.excess_bytes) /
              static_cast<long double>(ipu.streaming_memory_bandwidth.bytes_per_second()));
  return fit;
}

}  // namespace podsim::ipulink
