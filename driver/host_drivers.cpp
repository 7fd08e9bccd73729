#include "driver/host_drivers.h"

#include <fmt/format.h>

#include <stdexcept>

namespace podsim::driver {
namespace {

// Each box host's memory above 64 GiB: the driver's buffers, 2 GiB per chip, from 64 GiB; the
// application's, 16 GiB per chip, from 128 GiB (8 chips: up to 256 GiB of the 512).
constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kKernelFirst = 64 * kGiB, kKernelPerChip = 2 * kGiB;
constexpr std::uint64_t kApplicationFirst = 128 * kGiB, kApplicationPerChip = 16 * kGiB;
// Of each chip's application memory: the collectives' share first (their mirror is the size of
// the SRAM arena, tens of MiB), the runtime's the rest.
constexpr std::uint64_t kCollectivesPerChip = kGiB / 4;

std::uint64_t application_base(int local) {
  return kApplicationFirst + static_cast<std::uint64_t>(local) * kApplicationPerChip;
}

}  // namespace

HostDrivers::HostDrivers(system::SystemModel& model) : model_(model) {
  entries_.resize(static_cast<std::size_t>(model.chips()));
  for (auto& e : entries_) e = std::make_unique<Entry>();
}

HostDrivers::~HostDrivers() {
  for (auto& e : entries_) {
    e->file.reset();
    e->device.reset();
  }
}

int HostDrivers::per_box() const { return model_.config().box.chips; }

host::HostCpu& HostDrivers::cpu(int chip) { return model_.host(chip / per_box()).cpu(); }

host::HostMemory& HostDrivers::memory(int chip) { return model_.host(chip / per_box()).memory(); }

HostDrivers::Region HostDrivers::collectives_memory(int chip) const {
  return {application_base(chip % per_box()), kCollectivesPerChip};
}

HostDrivers::Region HostDrivers::runtime_memory(int chip) const {
  return runtime_region(chip % per_box());
}

KernelMemory HostDrivers::kernel_region(int local) {
  return {kKernelFirst + static_cast<std::uint64_t>(local) * kKernelPerChip, kKernelPerChip};
}

HostDrivers::Region HostDrivers::runtime_region(int local) {
  return {application_base(local) + kCollectivesPerChip, kApplicationPerChip - kCollectivesPerChip};
}

File& HostDrivers::file(int chip) {
  Entry& e = *entries_.at(static_cast<std::size_t>(chip));
  while (e.probing) sc_core::wait(e.ready);
  if (e.file) return *e.file;
  e.probing = true;
  try {
    system::HostSide& host = model_.host(chip / per_box());
    const int local = chip % per_box();
    const Region app = runtime_memory(chip);
    if (per_box() * kKernelPerChip > kApplicationFirst - kKernelFirst ||
        app.base + app.size > host.memory().backing().size()) {
      throw std::runtime_error(fmt::format(
          "chip {}: {} chips per box do not fit the driver's layout of a {} GiB host memory "
          "(2 GiB of driver buffers and 16 GiB of application memory per chip above 64 GiB)",
          chip, per_box(), host.memory().backing().size() / kGiB));
    }
    const PciFunction pci =
        probe(host.cpu(), host.bus(local), {host.window_base(local), host.window_size()});
    e.device = std::make_unique<Device>(host.cpu(), host.memory(), pci,
                                        DeviceProperties::of(model_.chip(chip).config()),
                                        kernel_region(local));
    if (const int rc = e.device->open(false, e.file); rc != 0) {
      throw std::runtime_error(fmt::format("chip {}: opening its device failed ({})", chip, rc));
    }
  } catch (...) {
    e.probing = false;
    e.ready.notify(sc_core::SC_ZERO_TIME);
    throw;
  }
  e.probing = false;
  e.ready.notify(sc_core::SC_ZERO_TIME);
  return *e.file;
}

}  // namespace podsim::driver
