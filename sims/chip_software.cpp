#include "sims/chip_software.h"

#include <fmt/format.h>

#include "driver/pci_probe.h"
#include "hw/system/host_side.h"
#include "sims/command.h"

namespace podsim::sims {
namespace {

// Host physical memory the driver keeps for itself and what the application allocates from.
constexpr driver::KernelMemory kDriverMemory{1ull << 30, 1ull << 30};
constexpr synapse::HostRegion kApplicationMemory{4ull << 30, 4ull << 30};

}  // namespace

driver::DeviceProperties served_device(const collectives::LoadedSystemFile& system,
                                       const std::string& command, const std::string& system_name) {
  try {
    driver::DeviceProperties props = driver::DeviceProperties::of(system.config.chip);
    const std::string unserved = driver::DeviceProperties::unserved(system.config.chip);
    if (!unserved.empty()) throw std::invalid_argument(unserved);
    const chip::ChipConfig& chip = system.config.chip;
    if (chip.tpc.cores == 0 || chip.mme.engines == 0) {
      throw std::invalid_argument(
          fmt::format("{} has {} TPCs and {} MMEs: no engines to run graphs on", chip.name,
                      chip.tpc.cores, chip.mme.engines));
    }
    return props;
  } catch (const std::invalid_argument& e) {
    throw UsageError(
        fmt::format("{}: {}: {}; the driver serves Gaudi1 and Gaudi2 chips (try --system "
                    "hls1 or hls2)",
                    command, system_name, e.what()));
  }
}

std::string run_with_runtime(system::SystemModel& model, const driver::DeviceProperties& props,
                             const std::function<void(synapse::Runtime&)>& program) {
  std::string failure;
  system::HostSide& host = model.host(0);
  host.cpu().run([&](host::HostCpu& cpu) {
    try {
      const driver::PciFunction pci =
          driver::probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
      driver::Device device(cpu, host.memory(), pci, props, kDriverMemory);
      synapse::Runtime runtime(device, host.memory(), kApplicationMemory);
      program(runtime);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  sc_core::sc_start();
  return failure;
}

}  // namespace podsim::sims
