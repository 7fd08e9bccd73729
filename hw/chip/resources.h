// What software takes of a chip, written once per chip preset (the `resources` section): the
// shares of the kernel driver, the Synapse runtime and the collectives in the chip's sync
// objects, monitors, engine QMAN streams, completion queues (MSI vectors) and SRAM. Each user
// takes its share from here (driver/, synapse/ through the driver's INFO and this table,
// collectives/), so no two of them hold constants that must agree.
// Captures: ranges and stream sets, checked to lie inside the chip and not to overlap. Ignores:
// HBM, which the driver's memory manager hands out on request (MEMORY ioctl), and the engines
// themselves (every user may queue work on every engine, each on its own streams).
#pragma once

#include <cstdint>
#include <string>

#include "core/config_binding.h"

namespace podsim::chip {

// Sync objects are numbered across the chip's managers: manager m's object i is
// m * kObjectsPerManager + i (E_N, E_S, W_N, W_S are managers 0 to 3).
inline constexpr std::uint32_t kObjectsPerManager = 2048;
inline constexpr int kSyncManagers = 4;

// One user's share. Streams are bit masks over a QMAN's four streams.
struct ResourceShare {
  std::uint32_t first_sob = 0, sobs = 0;
  std::uint32_t monitor_managers = 0;  // bit m: the monitors below, on manager m
  std::uint32_t first_monitor = 0, monitors = 0;
  std::uint32_t engine_streams = 0;             // of every TPC, MME and internal DMA QMAN
  std::uint32_t first_vector = 0, vectors = 0;  // MSI-X vectors: completion queues, event queue
  double sram_from = 0, sram_to = 0;            // fractions of the SRAM, [from, to)

  template <class V>
  void describe(V& v) {
    v.field("first_sob", first_sob,
            core::Spec("first sync object (manager m's object i is m * 2048 + i)").max(8191));
    v.field("sobs", sobs, core::Spec("sync objects from first_sob").max(8192));
    v.field("monitor_managers", monitor_managers,
            core::Spec("the managers whose monitors below are the user's, a bit each (E_N 1, "
                       "E_S 2, W_N 4, W_S 8)")
                .max(15));
    v.field("first_monitor", first_monitor,
            core::Spec("first monitor on each of those managers").max(511));
    v.field("monitors", monitors, core::Spec("monitors from first_monitor").max(512));
    v.field("engine_streams", engine_streams,
            core::Spec("the streams of every engine QMAN (TPC, MME, internal DMA) the user "
                       "queues work on, a bit each (stream 0: 1 ... stream 3: 8)")
                .max(15));
    v.field("first_vector", first_vector, core::Spec("first MSI-X vector").max(63));
    v.field("vectors", vectors, core::Spec("MSI-X vectors from first_vector").max(64));
    v.field("sram_from", sram_from,
            core::Spec("where the user's part of the SRAM starts, a fraction of it").range(0, 1));
    v.field("sram_to", sram_to,
            core::Spec("where the user's part of the SRAM ends, a fraction of it").range(0, 1));
  }
  void check(core::ConfigChecks& c) const;
  // The streams of `engine_streams` in order.
  int stream_count() const;
  int stream(int i) const;  // the i-th stream of the mask
};

struct ResourcesConfig {
  // The driver's: the W_S objects and monitors Linux reserves for collective waits and sync
  // streams [C1], the host-facing queues' completion queues and the event queue's vector.
  ResourceShare driver{6144, 144, 8, 0, 72, 0, 0, 9, 0, 0};
  // The Synapse runtime's: what the driver leaves to user space on W_S [C1], stream 0 of every
  // engine QMAN, the lower half of the SRAM.
  ResourceShare runtime{6288, 1904, 8, 72, 440, 1, 0, 0, 0, 0.5};
  // The collectives': the other three managers' objects from 1024, their monitors from 256,
  // streams 1 to 3 of every engine QMAN, the upper half of the SRAM.
  ResourceShare collectives{1024, 5120, 7, 256, 256, 14, 0, 0, 0.5, 1};

  template <class V>
  void describe(V& v) {
    v.section("driver", driver, core::Spec("the kernel driver's share"));
    v.section("runtime", runtime, core::Spec("the Synapse runtime's share"));
    v.section("collectives", collectives, core::Spec("the collectives' share (HCCL's)"));
  }
  void check(core::ConfigChecks& c) const;
};

// The table the presets use unless they say otherwise (the members' defaults).
const ResourcesConfig& default_resources();

}  // namespace podsim::chip
