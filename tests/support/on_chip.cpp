#include "tests/support/on_chip.h"

#include <algorithm>

#include "core/event_queue.h"
#include "driver/device.h"
#include "driver/host_drivers.h"
#include "driver/pci_probe.h"
#include "hw/system/host_side.h"

namespace podsim::test {

std::string with_runtime(system::SystemModel& model,
                         const std::function<void(synapse::Runtime&)>& program) {
  std::string failure;
  system::HostSide& host = model.host(0);
  const chip::ChipConfig& chip = model.chip(0).config();
  const driver::DeviceProperties props = driver::DeviceProperties::of(chip);
  host.cpu().run([&](host::HostCpu& cpu) {
    try {
      const driver::PciFunction pci =
          driver::probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
      driver::Device device(cpu, host.memory(), pci, props, driver::HostDrivers::kernel_region(0));
      const auto region = driver::HostDrivers::runtime_region(0);
      synapse::Runtime runtime(device, host.memory(), {region.base, region.size},
                               chip.resources.runtime);
      program(runtime);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  core::run_to_completion();
  return failure;
}

namespace {

template <class Engine>
core::TimePs span(const std::vector<const Engine*>& engines) {
  core::TimePs first = ~core::TimePs{0}, last = 0;
  for (const Engine* e : engines) {
    if (e->jobs_ended() == 0) continue;
    first = std::min(first, e->first_start());
    last = std::max(last, e->last_end());
  }
  return last > first ? last - first : 0;
}

}  // namespace

core::TimePs tpc_span(system::SystemModel& model) {
  std::vector<const engine::EngineShell*> e;
  for (int t = 0; t < model.chip(0).tpc_cores(); ++t) e.push_back(&model.chip(0).tpc(t));
  return span(e);
}

core::TimePs mme_span(system::SystemModel& model) {
  std::vector<const engine::EngineShell*> e;
  for (int i = 0; i < model.chip(0).mme_engines(); ++i) e.push_back(&model.chip(0).mme(i));
  return span(e);
}

std::vector<std::vector<std::uint8_t>> node_buffers(
    const tpc::KernelPlan& plan, const std::vector<std::vector<std::uint8_t>>& all) {
  std::vector<std::vector<std::uint8_t>> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (plan.buffers[i].role != tpc::BufferSpec::Role::kScratch) out.push_back(all[i]);
  return out;
}

}  // namespace podsim::test
