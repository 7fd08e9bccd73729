#include "sims/memory_budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/units.h"
#include "sims/command.h"

namespace podsim::sims {

std::uint64_t available_memory() {
  if (const char* limit = std::getenv("PODSIM_MEMORY_LIMIT")) {
    std::string error;
    if (const auto size = core::parse_byte_size(limit, &error)) return size->bytes;
    throw UsageError(fmt::format("PODSIM_MEMORY_LIMIT={}: {}", limit, error));
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::numeric_limits<std::uint64_t>::max();  // not Linux: nothing to go by
}

std::string approximate_size(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) value /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

void require_memory(std::uint64_t bytes, const std::string& what, const std::string& advice) {
  const std::uint64_t available = available_memory();
  if (bytes <= available) return;
  throw UsageError(
      fmt::format("{} would hold about {} of host memory, more than the {} available: {}", what,
                  approximate_size(bytes), approximate_size(available), advice));
}

std::uint64_t system_model_bytes(int chips, bool coarse_chips) {
  const std::uint64_t per_chip = coarse_chips ? std::uint64_t{400} << 10 : std::uint64_t{3} << 20;
  return per_chip * static_cast<std::uint64_t>(std::max(chips, 0));
}

void require_system_memory(int chips, int processes_here, bool coarse_chips) {
  if (processes_here <= 1) {
    require_memory(system_model_bytes(chips, coarse_chips),
                   fmt::format("a system of {}{} chips", chips, coarse_chips ? " coarse" : ""),
                   "use fewer boxes (--set boxes=N) or a smaller preset");
    return;
  }
  require_memory(
      system_model_bytes(chips, coarse_chips) * static_cast<std::uint64_t>(processes_here),
      fmt::format("{} processes each building a system of {} chips", processes_here, chips),
      "run fewer processes on this machine, use fewer boxes (--set boxes=N) or a smaller preset");
}

}  // namespace podsim::sims
