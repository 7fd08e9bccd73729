// The driver tests' bench: chip 0 of an hls1 box (or another system's), probed through PCIe by the
// driver, with a test body run in the host CPU's thread (where ioctls may wait).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "collectives/system_file.h"
#include "core/event_queue.h"
#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"

namespace podsim::driver::test {

inline constexpr KernelMemory kKernelMemory{1ull << 30, 1ull << 30};

// Runs `body` against the probed device; fails the test if the body did not run to its end.
inline void with_device(
    const std::function<void(Device&, host::HostCpu&, system::SystemModel&)>& body,
    const std::string& system_name = "hls1", bool run_ahead = false) {
  const auto loaded = collectives::load_system_file(system_name, {});
  system::SystemModel model("system", loaded.config, system::build_topology(loaded.config),
                            system::ModelOptions{1, true});
  system::HostSide& host = model.host(0);
  bool ran = false;
  host.cpu().run([&](host::HostCpu& cpu) {
    const PciFunction pci = probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
    Device device(cpu, host.memory(), pci, DeviceProperties::of(model.chip(0).config()),
                  kKernelMemory);
    body(device, cpu, model);
    ran = true;
  });
  // Running ahead, the event queue's callbacks may be far ahead of the kernel's time.
  if (run_ahead) {
    core::run_to_completion();
  } else {
    sc_core::sc_start();
  }
  EXPECT_TRUE(ran);
}

}  // namespace podsim::driver::test
