#include "hw/chip/resources.h"

#include <fmt/format.h>

#include <array>
#include <bitset>
#include <utility>

namespace podsim::chip {
namespace {

bool overlap(std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1) {
  return a0 < b1 && b0 < a1;
}

}  // namespace

void ResourceShare::check(core::ConfigChecks& c) const {
  if (first_sob + sobs > kSyncManagers * kObjectsPerManager)
    c.fail("sobs", fmt::format("objects {} to {} pass the chip's {}", first_sob,
                               first_sob + sobs - 1, kSyncManagers * kObjectsPerManager));
  if (first_monitor + monitors > 512)
    c.fail("monitors", fmt::format("monitors {} to {} pass a manager's 512", first_monitor,
                                   first_monitor + monitors - 1));
  if (monitors > 0 && monitor_managers == 0)
    c.fail("monitor_managers", "monitors are given but no manager holds them");
  if (first_vector + vectors > 64)
    c.fail("vectors", fmt::format("vectors {} to {} pass the 64 of MSI-X", first_vector,
                                  first_vector + vectors - 1));
  if (sram_to < sram_from) c.fail("sram_to", "ends before sram_from");
}

int ResourceShare::stream_count() const {
  return static_cast<int>(std::bitset<4>(engine_streams).count());
}

int ResourceShare::stream(int i) const {
  for (int s = 0; s < 4; ++s) {
    if ((engine_streams >> s & 1) && i-- == 0) return s;
  }
  return -1;
}

void ResourcesConfig::check(core::ConfigChecks& c) const {
  const std::array<std::pair<const char*, const ResourceShare*>, 3> shares{
      {{"driver", &driver}, {"runtime", &runtime}, {"collectives", &collectives}}};
  for (std::size_t i = 0; i < shares.size(); ++i) {
    for (std::size_t j = i + 1; j < shares.size(); ++j) {
      const auto& [an, a] = shares[i];
      const auto& [bn, b] = shares[j];
      const std::string key = fmt::format("{}", bn);
      if (overlap(a->first_sob, a->first_sob + a->sobs, b->first_sob, b->first_sob + b->sobs))
        c.fail(key + ".sobs", fmt::format("sync objects overlap the {} share's ({} to {})", an,
                                          a->first_sob, a->first_sob + a->sobs - 1));
      if ((a->monitor_managers & b->monitor_managers) != 0 &&
          overlap(a->first_monitor, a->first_monitor + a->monitors, b->first_monitor,
                  b->first_monitor + b->monitors))
        c.fail(key + ".monitors",
               fmt::format("monitors overlap the {} share's ({} to {}) on a manager both hold", an,
                           a->first_monitor, a->first_monitor + a->monitors - 1));
      if ((a->engine_streams & b->engine_streams) != 0)
        c.fail(key + ".engine_streams", fmt::format("streams {:#x} are the {} share's too",
                                                    a->engine_streams & b->engine_streams, an));
      if (overlap(a->first_vector, a->first_vector + a->vectors, b->first_vector,
                  b->first_vector + b->vectors))
        c.fail(key + ".vectors", fmt::format("MSI-X vectors overlap the {} share's", an));
      if (a->sram_to > a->sram_from && b->sram_to > b->sram_from && a->sram_from < b->sram_to &&
          b->sram_from < a->sram_to)
        c.fail(key + ".sram_from", fmt::format("its SRAM overlaps the {} share's", an));
    }
  }
}

const ResourcesConfig& default_resources() {
  static const ResourcesConfig table;
  return table;
}

}  // namespace podsim::chip
