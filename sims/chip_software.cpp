#include "sims/chip_software.h"

#include <fmt/format.h>

#include "core/event_queue.h"
#include "driver/host_drivers.h"
#include "driver/pci_probe.h"
#include "hw/system/host_side.h"
#include "sims/command.h"

namespace podsim::sims {
namespace {

// Host physical memory each chip's driver keeps for itself and its application allocates from:
// the layout the collectives' drivers use too (driver/host_drivers.h).
synapse::HostRegion application_memory(int chip) {
  const auto r = driver::HostDrivers::runtime_region(chip);
  return {r.base, r.size};
}

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
                             const std::function<void(synapse::Runtime&)>& program,
                             bool lock_step) {
  return run_with_runtimes(
      model, props, {0}, [&](synapse::Runtime& runtime, int) { program(runtime); }, lock_step);
}

std::string run_with_runtimes(system::SystemModel& model, const driver::DeviceProperties& props,
                              const std::vector<int>& chips,
                              const std::function<void(synapse::Runtime&, int)>& program,
                              bool lock_step) {
  std::vector<std::string> failures(chips.size());
  const int per_box = model.config().box.chips;
  for (std::size_t i = 0; i < chips.size(); ++i) {
    const int chip = chips[i], local = chip % per_box;
    system::HostSide& host = model.host(chip / per_box);
    host.cpu().run([&, i, chip, local](host::HostCpu& cpu) {
      try {
        const driver::PciFunction pci =
            driver::probe(cpu, host.bus(local), {host.window_base(local), host.window_size()});
        driver::Device device(cpu, host.memory(), pci, props,
                              driver::HostDrivers::kernel_region(local));
        synapse::Runtime runtime(device, host.memory(), application_memory(local),
                                 model.chip(chip).config().resources.runtime);
        program(runtime, chip);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  }
  core::run_to_completion(lock_step);
  for (const std::string& f : failures) {
    if (!f.empty()) return f;
  }
  return {};
}

}  // namespace podsim::sims
