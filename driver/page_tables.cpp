#include "driver/page_tables.h"

#include <stdexcept>

#include "hw/chip/mmu.h"

namespace podsim::driver {
namespace {
namespace pt = chip::page_table;
constexpr std::uint64_t kTable = 4096;
constexpr std::uint64_t kAddressMask = ~std::uint64_t{0xFFF};
}  // namespace

PageTables::PageTables(std::uint64_t area, std::uint64_t size, std::uint32_t asids, Writer write)
    : area_(area), asids_(asids), write_(std::move(write)) {
  if (size <= std::uint64_t{asids} * kTable) {
    throw std::invalid_argument("page-table area smaller than the hop-0 tables");
  }
  free_ = core::RangeAllocator(area + std::uint64_t{asids} * kTable, size - asids * kTable);
}

std::uint64_t PageTables::hop0(std::uint32_t asid) const { return area_ + asid * kTable; }

void PageTables::set(std::uint64_t address, std::uint64_t index, std::uint64_t pte) {
  Table& t = tables_[address];
  if (t.pte[index] == 0 && pte != 0) ++t.used;
  if (t.pte[index] != 0 && pte == 0) --t.used;
  t.pte[index] = pte;
  t.dirty_first = std::min<std::uint32_t>(t.dirty_first, static_cast<std::uint32_t>(index));
  t.dirty_last = std::max<std::uint32_t>(t.dirty_last, static_cast<std::uint32_t>(index));
}

std::uint64_t PageTables::next(std::uint64_t address, std::uint64_t va, int hop, bool make) {
  const std::uint64_t index = pt::index(va, hop);
  const std::uint64_t pte = tables_[address].pte[index];
  if (pte != 0) return pte & kAddressMask;
  if (!make) return 0;
  const auto fresh = free_.allocate(kTable, kTable);
  if (!fresh) return 0;
  ++allocated_;
  Table& t = tables_[*fresh];
  t = Table{};
  t.dirty_first = 0;  // a table from the pool may hold an old table's entries: written whole
  t.dirty_last = pt::kEntries - 1;
  set(address, index, pt::make_pte(*fresh, false));
  return *fresh;
}

bool PageTables::map(std::uint32_t asid, std::uint64_t va, std::uint64_t physical,
                     std::uint64_t size) {
  for (std::uint64_t done = 0; done < size; done += pt::kSmallPage) {
    std::uint64_t at = hop0(asid);
    for (int hop = 0; hop < pt::kHops - 1 && at != 0; ++hop) at = next(at, va + done, hop, true);
    if (at == 0) {
      unmap(asid, va, done + pt::kSmallPage);  // this page's partial path too
      return false;
    }
    set(at, pt::index(va + done, pt::kHops - 1), pt::make_pte(physical + done, true));
  }
  flush();
  return true;
}

void PageTables::clear(std::uint32_t asid, std::uint64_t va) {
  std::uint64_t path[pt::kHops];
  path[0] = hop0(asid);
  int deepest = 0;
  while (deepest < pt::kHops - 1) {
    const std::uint64_t below = next(path[deepest], va, deepest, false);
    if (below == 0) break;
    path[++deepest] = below;
  }
  if (deepest == pt::kHops - 1) set(path[deepest], pt::index(va, deepest), 0);
  // Tables left empty go back to the pool, and their parents' entries with them.
  for (int hop = deepest; hop > 0 && tables_[path[hop]].used == 0; --hop) {
    // Its copy in HBM stays as it was: unreachable now, and written whole when reused.
    tables_.erase(path[hop]);
    free_.release(path[hop], kTable);
    --allocated_;
    set(path[hop - 1], pt::index(va, hop - 1), 0);
  }
}

void PageTables::unmap(std::uint32_t asid, std::uint64_t va, std::uint64_t size) {
  for (std::uint64_t done = 0; done < size; done += pt::kSmallPage) clear(asid, va + done);
  flush();
}

void PageTables::flush() {
  for (auto& [address, t] : tables_) {
    if (t.dirty_first > t.dirty_last) continue;
    const std::uint32_t count = t.dirty_last - t.dirty_first + 1;
    write_(address + 8ull * t.dirty_first, &t.pte[t.dirty_first], 8 * count);
    t.dirty_first = pt::kEntries;
    t.dirty_last = 0;
  }
}

}  // namespace podsim::driver
