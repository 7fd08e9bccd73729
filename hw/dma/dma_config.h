// The configuration of one DMA engine: how fast it streams and how it hides memory latency.
#pragma once

#include "core/config_binding.h"
#include "core/units.h"

namespace podsim::dma {

struct DmaConfig {
  core::Bandwidth bandwidth{125e9 * 8};
  core::ByteSize burst{2048};
  int outstanding = 32;

  template <class V>
  void describe(V& v) {
    v.field("bandwidth", bandwidth,
            core::Spec("bytes per second one engine moves when memory keeps up (of results, for "
                       "a reduction)")
                .positive()
                .source("placeholder [U]: Gaudi1's HBM bandwidth, about 1 TB/s [S1], shared by "
                        "its 8 DMA engines [C2] = 125 GB/s [D]"));
    v.field("burst", burst,
            core::Spec("bytes per request: a job is cut into bursts of this size, each one read "
                       "(two reads for a reduction) and one write")
                .range(64, 16.0 * 1024 * 1024)
                .source("placeholder [U]: 2 KiB, 16 of Gaudi1's 128-byte cache lines [C2]"));
    v.field("outstanding", outstanding,
            core::Spec("bursts in flight at once: issuing waits for the burst this many before "
                       "to complete, so the engine hides a latency up to outstanding x burst / "
                       "bandwidth")
                .range(1, 4096)
                .source("placeholder [U]: 32 x 2 KiB hides 524 ns at 125 GB/s"));
  }
  void check(core::ConfigChecks& c) const;
};

}  // namespace podsim::dma
