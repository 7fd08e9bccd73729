// A PCIe function's configuration space and MSI-X table, as plain state machines the endpoint
// module drives (no SystemC kernel needed to test them).
// Captures: the type 0 header (ids, class code, command register's memory-space and bus-master
// bits, status, BARs sized by writing all ones and reading back, the capabilities pointer), an
// MSI-X capability (table size, function mask, enable, table and PBA locations), and the MSI-X
// table (address, data, per-vector mask) with its pending bits. Ignores: I/O BARs, the PCI
// Express, power-management and AER capabilities, and extended configuration space beyond the
// first 256 bytes (it reads as zero).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "hw/pcie/endpoint_config.h"

namespace podsim::pcie {

// Register offsets of the type 0 header and the MSI-X capability [P1].
namespace reg {
constexpr std::uint32_t kVendorId = 0x00, kDeviceId = 0x02, kCommand = 0x04, kStatus = 0x06;
constexpr std::uint32_t kRevision = 0x08, kClassCode = 0x09, kHeaderType = 0x0E;
constexpr std::uint32_t kBar0 = 0x10, kCapabilities = 0x34;
constexpr std::uint32_t kMsixCapability = 0x40;  // where this model places it
constexpr std::uint32_t kMsixControl = kMsixCapability + 2;
constexpr std::uint32_t kMsixTable = kMsixCapability + 4, kMsixPba = kMsixCapability + 8;
constexpr std::uint16_t kCommandMemory = 1u << 1, kCommandBusMaster = 1u << 2;
constexpr std::uint16_t kMsixEnable = 1u << 15, kMsixFunctionMask = 1u << 14;
}  // namespace reg

class ConfigSpace {
 public:
  static constexpr std::uint32_t kSize = 4096;
  // Throws std::invalid_argument on a bad configuration, naming the key.
  explicit ConfigSpace(const PcieEndpointConfig& config);

  // Accesses of 1 to 4 bytes that stay within one dword, as configuration TLPs are; anything
  // else is rejected (returns false) without effect.
  bool read(std::uint32_t offset, std::uint8_t* data, std::uint32_t length) const;
  bool write(std::uint32_t offset, const std::uint8_t* data, std::uint32_t length);
  std::uint32_t read32(std::uint32_t offset) const;
  void write32(std::uint32_t offset, std::uint32_t value);

  bool memory_enabled() const { return command() & reg::kCommandMemory; }
  bool bus_master() const { return command() & reg::kCommandBusMaster; }
  bool msix_enabled() const { return msix_control() & reg::kMsixEnable; }
  bool msix_function_masked() const { return msix_control() & reg::kMsixFunctionMask; }

  struct BarHit {
    int bar;
    std::uint64_t offset;
  };
  // The BAR decoding [address, address + length), when memory space is enabled.
  std::optional<BarHit> decode(std::uint64_t address, std::uint64_t length) const;
  std::uint64_t bar_base(int bar) const;

 private:
  std::uint16_t command() const;
  std::uint16_t msix_control() const;
  const BarConfig* bar_config(int index) const;
  // The register's new value after a write of `value`: read-only bits keep their contents.
  std::uint32_t merge_write(std::uint32_t offset, std::uint32_t value) const;
  void store32(std::uint32_t offset, std::uint32_t value);

  PcieEndpointConfig config_;
  std::array<std::uint8_t, 256> header_{};
};

// The MSI-X table and pending bit array behind a BAR [P1]: 16 bytes per vector (message
// address low and high, data, vector control whose bit 0 masks), one pending bit per vector.
class MsixTable {
 public:
  struct Message {
    std::uint64_t address;
    std::uint32_t data;
  };
  explicit MsixTable(int vectors);

  int vectors() const { return static_cast<int>(entries_.size()); }
  std::uint64_t table_bytes() const { return entries_.size() * 16; }
  std::uint64_t pba_bytes() const { return (entries_.size() + 63) / 64 * 8; }

  // Dword or qword accesses inside the table or the PBA (the PBA is read-only); false otherwise.
  bool table_access(bool write, std::uint64_t offset, std::uint8_t* data, std::uint32_t length);
  bool pba_read(std::uint64_t offset, std::uint8_t* data, std::uint32_t length) const;

  bool masked(int vector) const { return entries_[vector].control & 1u; }
  bool pending(int vector) const { return pending_[vector]; }
  void set_pending(int vector, bool on) { pending_[vector] = on; }
  Message message(int vector) const;

 private:
  struct Entry {
    std::uint32_t address_low = 0, address_high = 0, data = 0;
    std::uint32_t control = 1;  // masked out of reset
  };
  std::vector<Entry> entries_;
  std::vector<bool> pending_;
};

}  // namespace podsim::pcie
