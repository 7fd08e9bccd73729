// What the commands that run software on a chip through the driver share (`podsim run`,
// `podsim train`'s profile): the driver's properties of the system's chip, refused with advice
// when the driver does not serve it, and a program on chip 0's host with the device probed,
// opened and a Synapse runtime over it, as an application runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectives/system_file.h"
#include "driver/device.h"
#include "hw/system/system_model.h"
#include "synapse/runtime.h"

namespace podsim::sims {

// Throws UsageError naming `command` and `system_name` when the driver does not serve the chip.
driver::DeviceProperties served_device(const collectives::LoadedSystemFile& system,
                                       const std::string& command, const std::string& system_name);

// Runs `program` on host 0's CPU with chip 0 opened and a runtime over it (its share of the chip
// the preset's chip.resources.runtime), and simulates until everything is done, the event queue
// running ahead of the kernel unless `lock_step` (podsim's --lock-step); returns what the program
// threw (its message), or empty.
std::string run_with_runtime(system::SystemModel& model, const driver::DeviceProperties& props,
                             const std::function<void(synapse::Runtime&)>& program,
                             bool lock_step = false);
// The same for each of `chips` at once, each in a program of its own on its box's host CPU;
// `program(runtime, chip)`. Returns the first failure's message, or empty.
std::string run_with_runtimes(system::SystemModel& model, const driver::DeviceProperties& props,
                              const std::vector<int>& chips,
                              const std::function<void(synapse::Runtime&, int)>& program,
                              bool lock_step = false);

}  // namespace podsim::sims
