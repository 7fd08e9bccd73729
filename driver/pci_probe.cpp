#include "driver/pci_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/pcie/config_space.h"

namespace podsim::driver {
namespace {

constexpr std::uint8_t kMsixCapabilityId = 0x11;
constexpr int kBars = 6;

class Config {
 public:
  Config(host::HostCpu& cpu, int bus) : cpu_(cpu), bus_(bus) {}
  std::uint32_t read(std::uint32_t offset) const {
    std::uint32_t value = 0;
    if (cpu_.config_read32(bus_, offset, value) != tlm::TLM_OK_RESPONSE) fail(offset, "read");
    return value;
  }
  void write(std::uint32_t offset, std::uint32_t value) const {
    if (cpu_.config_write32(bus_, offset, value) != tlm::TLM_OK_RESPONSE) fail(offset, "write");
  }
  [[noreturn]] void refuse(const std::string& what) const {
    throw std::runtime_error(fmt::format("PCI bus {}: {}", bus_, what));
  }

 private:
  [[noreturn]] void fail(std::uint32_t offset, const char* kind) const {
    refuse(fmt::format("the configuration {} at {:#x} failed", kind, offset));
  }
  host::HostCpu& cpu_;
  int bus_;
};

// Sizes BAR `index` by writing all ones and reading back what sticks; restores it after.
PciBar size_bar(const Config& c, int index) {
  const std::uint32_t reg = pcie::reg::kBar0 + 4 * static_cast<std::uint32_t>(index);
  const std::uint32_t low = c.read(reg);
  PciBar bar;
  bar.index = index;
  if (low & 1u) return bar;  // an I/O BAR: not used by the device
  bar.is_64bit = ((low >> 1) & 3u) == 2u;
  bar.prefetchable = (low & 8u) != 0;
  c.write(reg, 0xFFFFFFFFu);
  std::uint64_t mask = c.read(reg) & ~0xFull;
  c.write(reg, low);
  if (bar.is_64bit) {
    const std::uint32_t high = c.read(reg + 4);
    c.write(reg + 4, 0xFFFFFFFFu);
    mask |= static_cast<std::uint64_t>(c.read(reg + 4)) << 32;
    c.write(reg + 4, high);
  } else {
    mask |= 0xFFFFFFFF00000000ull;
  }
  bar.size = mask == 0 ? 0 : ~mask + 1;
  return bar;
}

void find_msix(const Config& c, PciFunction& f) {
  std::uint32_t next = c.read(pcie::reg::kCapabilities) & 0xFCu;
  for (int hops = 0; next != 0 && hops < 48; ++hops) {
    const std::uint32_t header = c.read(next);
    if ((header & 0xFFu) == kMsixCapabilityId) {
      f.msix_vectors = static_cast<int>(((header >> 16) & 0x7FFu) + 1);
      const std::uint32_t table = c.read(next + 4);
      f.msix_table_bar = static_cast<int>(table & 7u);
      f.msix_table_offset = table & ~7u;
      return;
    }
    next = (header >> 8) & 0xFCu;
  }
}

// Largest first, each at the next multiple of its size: no BAR straddles another's alignment.
void place(const Config& c, const ProbeWindow& window, std::vector<PciBar>& bars) {
  std::vector<PciBar*> order;
  for (PciBar& b : bars) order.push_back(&b);
  std::stable_sort(order.begin(), order.end(),
                   [](const PciBar* a, const PciBar* b) { return a->size > b->size; });
  std::uint64_t next = window.base;
  for (PciBar* b : order) {
    next = (next + b->size - 1) / b->size * b->size;
    if (next + b->size > window.base + window.size) {
      c.refuse(fmt::format("BAR{} of {:#x} bytes does not fit the host window [{:#x}, {:#x})",
                           b->index, b->size, window.base, window.base + window.size));
    }
    if (!b->is_64bit && next + b->size > (1ull << 32)) {
      c.refuse(fmt::format("32-bit BAR{} cannot be placed above 4 GiB", b->index));
    }
    b->address = next;
    next += b->size;
    const std::uint32_t reg = pcie::reg::kBar0 + 4 * static_cast<std::uint32_t>(b->index);
    c.write(reg, static_cast<std::uint32_t>(b->address));
    if (b->is_64bit) c.write(reg + 4, static_cast<std::uint32_t>(b->address >> 32));
  }
}

}  // namespace

const PciBar& PciFunction::bar(int index) const {
  for (const PciBar& b : bars) {
    if (b.index == index) return b;
  }
  throw std::out_of_range(fmt::format("PCI bus {}: no BAR{}", bus, index));
}

PciFunction probe(host::HostCpu& cpu, int bus, const ProbeWindow& window) {
  const Config c(cpu, bus);
  PciFunction f;
  f.bus = bus;
  const std::uint32_t ids = c.read(pcie::reg::kVendorId);
  f.vendor_id = static_cast<std::uint16_t>(ids);
  f.device_id = static_cast<std::uint16_t>(ids >> 16);
  if (f.vendor_id == 0xFFFF) c.refuse("no device answers");
  if (f.vendor_id != kHabanaVendorId || QueueMap::find(f.device_id) == nullptr) {
    c.refuse(
        fmt::format("device {:04x}:{:04x} is not one the driver binds to ({:04x}:{:04x} Gaudi1, "
                    "{:04x}:{:04x} Gaudi2)",
                    f.vendor_id, f.device_id, kHabanaVendorId, kGaudiDeviceId, kHabanaVendorId,
                    kGaudi2DeviceId));
  }
  const std::uint32_t class_revision = c.read(pcie::reg::kRevision);
  f.revision = static_cast<std::uint8_t>(class_revision);
  f.class_code = class_revision >> 8;
  for (int i = 0; i < kBars; ++i) {
    PciBar bar = size_bar(c, i);
    if (bar.size != 0) f.bars.push_back(bar);
    if (bar.is_64bit) ++i;  // its upper half
  }
  place(c, window, f.bars);
  find_msix(c, f);
  c.write(pcie::reg::kCommand, pcie::reg::kCommandMemory | pcie::reg::kCommandBusMaster);
  return f;
}

}  // namespace podsim::driver
