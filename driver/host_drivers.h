// The driver as every box's host loads it: a Device per chip, probed through the box's PCIe tree
// the first time a program of that host asks for it, and the application's open compute node on
// it. Kept with the system model (SystemModel::attached), so the user-space libraries of the one
// application podsim runs on a system — the collectives and a runtime — share each device's file,
// as HCCL shares SynapseAI's device.
// Captures: on-demand probing (programs asking at once wait for the first), each device's own
// share of its host's memory for the driver (command buffers, queue rings) and for the
// application (pinned buffers). Ignores: several processes per host (the shim's server), hot
// plug. When the model goes away after the simulation, the devices are forgotten without
// touching the hardware (Device's destructor outside a program).
#pragma once

#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "driver/device.h"
#include "hw/system/system_model.h"

namespace podsim::driver {

class HostDrivers {
 public:
  explicit HostDrivers(system::SystemModel& model);
  ~HostDrivers();
  HostDrivers(const HostDrivers&) = delete;
  HostDrivers& operator=(const HostDrivers&) = delete;

  // The CPU of `chip`'s box host: the programs that use the chip's device run on it.
  host::HostCpu& cpu(int chip);
  host::HostMemory& memory(int chip);
  // From a program of cpu(chip): the application's open compute node of `chip`'s device, probed
  // and opened at the first call. Throws std::runtime_error when the probe or the open fails.
  File& file(int chip);
  // Host physical memory of `chip`'s box the application may use for `chip`'s buffers, split
  // between its libraries so that they can share the device: the collectives' (the mirror of
  // their command images) and the runtime's (pinned buffers).
  struct Region {
    std::uint64_t base = 0, size = 0;
  };
  Region collectives_memory(int chip) const;
  Region runtime_memory(int chip) const;
  // The layout every box host's memory follows, by the chip's place in its box: the driver's
  // buffers and the runtime's, for programs that open a chip's device themselves.
  static KernelMemory kernel_region(int local);
  static Region runtime_region(int local);

 private:
  struct Entry {
    std::unique_ptr<Device> device;
    std::unique_ptr<File> file;
    bool probing = false;
    sc_core::sc_event ready;
  };
  int per_box() const;

  system::SystemModel& model_;
  std::vector<std::unique_ptr<Entry>> entries_;  // by chip
};

}  // namespace podsim::driver
