#include "hw/pcie/config_space.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace podsim::pcie {

namespace {

constexpr std::uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

bool is_power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  return size <= limit && offset <= limit - size;
}

const BarConfig* find_bar(const std::vector<BarConfig>& bars, int index) {
  for (const BarConfig& b : bars) {
    if (b.index == index) return &b;
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Configuration and presets

void PcieEndpointConfig::check(core::ConfigChecks& c) const {
  std::uint32_t used = 0;  // BAR registers taken
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const BarConfig& b = bars[i];
    const std::string key = fmt::format("bars.{}", i);
    const std::uint32_t regs = (b.is_64bit ? 3u : 1u) << b.index;
    if (b.is_64bit && b.index > 4) c.fail(key + ".index", "a 64-bit BAR needs index 0-4");
    if (used & regs) c.fail(key + ".index", "overlaps another BAR's registers");
    used |= regs;
    if (!is_power_of_two(b.size.bytes)) c.fail(key + ".size", "must be a power of two");
    if (!b.is_64bit && b.size.bytes > 2 * kGiB) c.fail(key + ".size", "needs a 64-bit BAR");
  }
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const BarWindow& w = windows[i];
    const BarConfig* bar = find_bar(bars, w.bar);
    if (!bar) {
      c.fail(fmt::format("windows.{}.bar", i), fmt::format("BAR {} is not configured", w.bar));
    } else if (!fits(w.offset, w.size.bytes, bar->size.bytes)) {
      c.fail(fmt::format("windows.{}.size", i), "the window does not fit in its BAR");
    }
  }
  const auto check_region = [&](const char* bar_key, int bar_index, const char* offset_key,
                                std::uint64_t offset, std::uint64_t bytes) {
    const BarConfig* bar = find_bar(bars, bar_index);
    if (!bar) return c.fail(fmt::format("msix.{}", bar_key), "names a BAR that is not configured");
    if (offset % 8 != 0)
      return c.fail(fmt::format("msix.{}", offset_key), "must be 8-byte aligned");
    if (!fits(offset, bytes, bar->size.bytes)) {
      c.fail(fmt::format("msix.{}", offset_key), "the region does not fit in its BAR");
    }
  };
  const auto vectors = static_cast<std::uint64_t>(msix.vectors);
  check_region("table_bar", msix.table_bar, "table_offset", msix.table_offset, vectors * 16);
  check_region("pba_bar", msix.pba_bar, "pba_offset", msix.pba_offset, (vectors + 63) / 64 * 8);
}

std::vector<BarConfig> PcieEndpointConfig::gaudi1_bars() {
  return {{0, core::ByteSize{64 * kMiB}, true, false},
          {2, core::ByteSize{128 * kMiB}, true, false},
          {4, core::ByteSize{32 * kGiB}, true, true}};
}

std::vector<BarWindow> PcieEndpointConfig::gaudi1_windows() {
  return {{0, 0, core::ByteSize{64 * kMiB}, core::Address{0x7FF0000000ull}},
          {2, 0, core::ByteSize{128 * kMiB}, core::Address{0x7FF8000000ull}},
          {4, 0, core::ByteSize{32 * kGiB}, core::Address{0}}};
}

MsixConfig PcieEndpointConfig::gaudi1_msix() { return {32, 2, 0x3FF8000, 2, 0x3FFC000}; }

PcieEndpointConfig PcieEndpointConfig::gaudi2() {
  PcieEndpointConfig c;
  c.device_id = 0x1020;
  c.bars = {{0, core::ByteSize{256 * kMiB}, true, false},
            {2, core::ByteSize{16 * 1024}, true, false},
            {4, core::ByteSize{128 * kGiB}, true, true}};
  c.windows = {{0, 0, core::ByteSize{192 * kMiB}, core::Address{0x1000007FF4000000ull}},
               {0, 192 * kMiB, core::ByteSize{64 * kMiB}, core::Address{0x1000FFFFFC000000ull}},
               {4, 0, core::ByteSize{128 * kGiB}, core::Address{0x1001000000000000ull}}};
  c.msix = {512, 2, 0, 2, 0x2000};
  return c;
}

// ---------------------------------------------------------------------------------------------
// ConfigSpace

ConfigSpace::ConfigSpace(const PcieEndpointConfig& config) : config_(config) {
  core::validate_config(config_);
  store32(reg::kVendorId, static_cast<std::uint32_t>(config_.vendor_id) |
                              static_cast<std::uint32_t>(config_.device_id) << 16);
  store32(reg::kRevision, static_cast<std::uint32_t>(config_.revision) |
                              static_cast<std::uint32_t>(config_.class_code) << 8);
  store32(reg::kCommand, std::uint32_t{0x0010} << 16);  // status: capabilities list
  store32(reg::kCapabilities, reg::kMsixCapability);
  for (const BarConfig& b : config_.bars)
    store32(reg::kBar0 + 4 * b.index, merge_write(reg::kBar0 + 4 * b.index, 0));
  const MsixConfig& m = config_.msix;
  store32(reg::kMsixCapability, 0x11u | static_cast<std::uint32_t>(m.vectors - 1) << 16);
  store32(reg::kMsixTable,
          static_cast<std::uint32_t>(m.table_offset) | static_cast<std::uint32_t>(m.table_bar));
  store32(reg::kMsixPba,
          static_cast<std::uint32_t>(m.pba_offset) | static_cast<std::uint32_t>(m.pba_bar));
}

const BarConfig* ConfigSpace::bar_config(int index) const { return find_bar(config_.bars, index); }

std::uint32_t ConfigSpace::read32(std::uint32_t offset) const {
  if (offset + 4 > header_.size()) return 0;
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | header_[offset + static_cast<std::uint32_t>(i)];
  return v;
}

void ConfigSpace::store32(std::uint32_t offset, std::uint32_t value) {
  for (std::uint32_t i = 0; i < 4; ++i)
    header_[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

void ConfigSpace::write32(std::uint32_t offset, std::uint32_t value) {
  offset &= ~3u;
  if (offset + 4 > header_.size()) return;
  store32(offset, merge_write(offset, value));
}

// Writable bits [P1]: command memory space, bus master and INTx disable; the BAR address bits
// above the BAR's size (sizing writes all ones and reads back the mask); MSI-X function mask and
// enable. Everything else is read-only.
std::uint32_t ConfigSpace::merge_write(std::uint32_t offset, std::uint32_t value) const {
  const std::uint32_t old = read32(offset);
  if (offset == reg::kCommand) return (old & 0xFFFF0000u) | (value & 0x0406u);
  if (offset == reg::kMsixCapability) return (old & 0x3FFFFFFFu) | (value & 0xC0000000u);
  if (offset >= reg::kBar0 && offset < reg::kBar0 + 24) {
    const int index = static_cast<int>(offset - reg::kBar0) / 4;
    if (const BarConfig* b = bar_config(index)) {
      const std::uint64_t mask = ~(b->size.bytes - 1);
      const std::uint32_t flags = (b->is_64bit ? 0x4u : 0u) | (b->prefetchable ? 0x8u : 0u);
      return (value & static_cast<std::uint32_t>(mask) & ~0xFu) | flags;
    }
    if (const BarConfig* low = bar_config(index - 1); low && low->is_64bit) {
      return value & static_cast<std::uint32_t>(~(low->size.bytes - 1) >> 32);
    }
    return 0;
  }
  return old;
}

bool ConfigSpace::read(std::uint32_t offset, std::uint8_t* data, std::uint32_t length) const {
  if (length == 0 || length > 4 || offset % 4 + length > 4 || offset >= kSize) return false;
  const std::uint32_t v = read32(offset & ~3u);
  for (std::uint32_t i = 0; i < length; ++i) {
    data[i] = static_cast<std::uint8_t>(v >> (8 * (offset % 4 + i)));
  }
  return true;
}

bool ConfigSpace::write(std::uint32_t offset, const std::uint8_t* data, std::uint32_t length) {
  if (length == 0 || length > 4 || offset % 4 + length > 4 || offset >= kSize) return false;
  const std::uint32_t aligned = offset & ~3u;
  std::uint32_t v = read32(aligned);
  for (std::uint32_t i = 0; i < length; ++i) {
    const std::uint32_t shift = 8 * (offset % 4 + i);
    v = (v & ~(0xFFu << shift)) | static_cast<std::uint32_t>(data[i]) << shift;
  }
  write32(aligned, v);
  return true;
}

std::uint16_t ConfigSpace::command() const {
  return static_cast<std::uint16_t>(read32(reg::kCommand));
}

std::uint16_t ConfigSpace::msix_control() const {
  return static_cast<std::uint16_t>(read32(reg::kMsixCapability) >> 16);
}

std::uint64_t ConfigSpace::bar_base(int bar) const {
  const BarConfig* b = bar_config(bar);
  if (!b) return 0;
  const std::uint32_t at = reg::kBar0 + 4 * static_cast<std::uint32_t>(bar);
  std::uint64_t base = read32(at) & ~0xFull;
  if (b->is_64bit) base |= static_cast<std::uint64_t>(read32(at + 4)) << 32;
  return base;
}

std::optional<ConfigSpace::BarHit> ConfigSpace::decode(std::uint64_t address,
                                                       std::uint64_t length) const {
  if (!memory_enabled()) return std::nullopt;
  for (const BarConfig& b : config_.bars) {
    const std::uint64_t base = bar_base(b.index);
    if (address >= base && fits(address - base, length, b.size.bytes)) {
      return BarHit{b.index, address - base};
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// MsixTable

MsixTable::MsixTable(int vectors)
    : entries_(static_cast<std::size_t>(vectors)), pending_(static_cast<std::size_t>(vectors)) {
  if (vectors < 1 || vectors > 2048) {
    throw std::invalid_argument(fmt::format("MsixTable: {} vectors is not within 1-2048", vectors));
  }
}

bool MsixTable::table_access(bool write, std::uint64_t offset, std::uint8_t* data,
                             std::uint32_t length) {
  if ((length != 4 && length != 8) || offset % length != 0 ||
      !fits(offset, length, table_bytes())) {
    return false;
  }
  for (std::uint32_t done = 0; done < length; done += 4) {
    const std::uint64_t at = offset + done;
    Entry& e = entries_[at / 16];
    std::uint32_t* field[] = {&e.address_low, &e.address_high, &e.data, &e.control};
    std::uint32_t& target = *field[at % 16 / 4];
    if (write) {
      std::uint32_t v;
      std::memcpy(&v, data + done, 4);
      // The message address is dword aligned; vector control has only its mask bit.
      if (&target == &e.address_low) v &= ~3u;
      if (&target == &e.control) v &= 1u;
      target = v;
    } else {
      std::memcpy(data + done, &target, 4);
    }
  }
  return true;
}

bool MsixTable::pba_read(std::uint64_t offset, std::uint8_t* data, std::uint32_t length) const {
  if ((length != 4 && length != 8) || offset % length != 0 || !fits(offset, length, pba_bytes())) {
    return false;
  }
  for (std::uint32_t i = 0; i < length; ++i) {
    std::uint8_t byte = 0;
    for (std::uint32_t bit = 0; bit < 8; ++bit) {
      const std::uint64_t vector = (offset + i) * 8 + bit;
      if (vector < pending_.size() && pending_[vector])
        byte |= static_cast<std::uint8_t>(1u << bit);
    }
    data[i] = byte;
  }
  return true;
}

MsixTable::Message MsixTable::message(int vector) const {
  const Entry& e = entries_[static_cast<std::size_t>(vector)];
  return {static_cast<std::uint64_t>(e.address_high) << 32 | e.address_low, e.data};
}

}  // namespace podsim::pcie
