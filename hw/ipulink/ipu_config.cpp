#include "hw/ipulink/ipu_config.h"

namespace podsim::ipulink {

void IpuConfig::check(core::ConfigChecks& c) const {
  // Every byte exchanged lands in a tile's memory, so the exchange cannot outrun it.
  if (exchange_bandwidth.bits_per_second > memory_bandwidth.bits_per_second) {
    c.fail("exchange_bandwidth", "must not exceed memory_bandwidth (" +
                                     core::format_gbytes_per_second(memory_bandwidth) + ")");
  }
  // A sync across chips also syncs each chip's tiles.
  if (sync_link_latency.ps < sync_latency.ps) {
    c.fail("sync_link_latency",
           "must be at least sync_latency (" + core::to_string(sync_latency) + ")");
  }
}

IpuConfig gc200() { return IpuConfig{}; }

IpuConfig bow_ipu() {
  IpuConfig c;
  // 350 against 250 TFLOPS is the same tiles clocked 1.4 times faster; the memories and the
  // exchange run on that clock, so their rates scale with it [U].
  constexpr double kClockRatio = 350.0 / 250.0;
  c.peak_fp16 = core::ComputeRate{350e12};
  c.memory_bandwidth = core::Bandwidth{c.memory_bandwidth.bits_per_second * kClockRatio};
  c.exchange_bandwidth = core::Bandwidth{c.exchange_bandwidth.bits_per_second * kClockRatio};
  return c;
}

void MachineConfig::check(core::ConfigChecks& c) const {
  // The IPU-Link ladder puts two IPUs on each rung and a machine holds whole rungs.
  if (ipus % 2 != 0) c.fail("ipus", "must be even: a machine holds whole rungs of two IPUs");
}

MachineConfig m2000() { return MachineConfig{}; }

MachineConfig bow2000() {
  MachineConfig c;
  c.streaming_memory = core::ByteSize{256000000000ull};
  return c;
}

}  // namespace podsim::ipulink
