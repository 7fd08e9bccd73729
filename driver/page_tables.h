// The driver's side of the device MMU: the hop tables of every address space (ASID), kept as a
// shadow in host memory, as Linux does, and written to the device's page-table area in HBM
// whenever an entry changes.
// Captures: Gaudi1's five-hop format (hw/chip/mmu.h), hop 0 of ASID n at a fixed place, the other
// tables taken from the rest of the area on demand and given back when their last entry goes,
// one write per run of changed entries of a table. Ignores: 2 MiB pages (host memory is mapped
// in 4 KiB pages, as pinned user pages come) and the DRAM MMU Gaudi1 does not use.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/range_allocator.h"

namespace podsim::driver {

class PageTables {
 public:
  // Writes `length` bytes at a device (HBM) address: the PCIe path to the page-table area.
  using Writer = std::function<void(std::uint64_t address, const void* data, std::uint32_t length)>;
  // Hop 0 of ASID n at area + n * 4096 for `asids` ASIDs; further tables from the rest.
  PageTables(std::uint64_t area, std::uint64_t size, std::uint32_t asids, Writer write);

  std::uint64_t hop0(std::uint32_t asid) const;
  // Maps [va, va + size) onto [physical, physical + size) in 4 KiB pages (all three page
  // aligned). False, with nothing changed, when the area has no room for the tables it needs.
  bool map(std::uint32_t asid, std::uint64_t va, std::uint64_t physical, std::uint64_t size);
  // Removes the mapping of [va, va + size), freeing tables left empty.
  void unmap(std::uint32_t asid, std::uint64_t va, std::uint64_t size);
  // Tables in use beside the hop-0 tables.
  std::size_t tables() const { return allocated_; }

 private:
  struct Table {
    std::array<std::uint64_t, 512> pte{};
    std::uint32_t used = 0;
    std::uint32_t dirty_first = 512, dirty_last = 0;  // entries to write out
  };
  // The table hop `hop` + 1 of `va` lies in, made if `make`; 0 when absent or no room.
  std::uint64_t next(std::uint64_t table, std::uint64_t va, int hop, bool make);
  void set(std::uint64_t table, std::uint64_t index, std::uint64_t pte);
  // Clears the last-hop entry of `va` and every table that leaves empty.
  void clear(std::uint32_t asid, std::uint64_t va);
  void flush();

  std::uint64_t area_;
  std::uint32_t asids_;
  Writer write_;
  core::RangeAllocator free_;
  std::map<std::uint64_t, Table> tables_;  // by device address, hop 0 tables included
  std::size_t allocated_ = 0;
};

}  // namespace podsim::driver
