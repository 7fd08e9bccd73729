#include "hw/chip/mmu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/kernel.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace page_table {

int shift(int hop) {
  static constexpr int kShifts[kHops] = {48, 39, 30, 21, 12};
  return kShifts[hop];
}

// Hop 0 takes VA bits 49:48, the others nine bits each.
std::uint64_t index(std::uint64_t va, int hop) {
  const std::uint64_t bits = hop == 0 ? 0x3 : kEntries - 1;
  return (va >> shift(hop)) & bits;
}

std::uint64_t make_pte(std::uint64_t address, bool last) {
  return (address & ~std::uint64_t{PODSIM_GAUDI1_MMU_PTE_FLAGS}) | PODSIM_GAUDI1_MMU_PTE_PRESENT |
         (last ? PODSIM_GAUDI1_MMU_PTE_LAST : 0);
}

std::optional<Translation> walk(std::uint64_t hop0, std::uint64_t va, const PteReader& read) {
  std::uint64_t table = hop0;
  for (int hop = 0; hop < kHops; ++hop) {
    const std::uint64_t pte = read(table + 8 * index(va, hop));
    if ((pte & PODSIM_GAUDI1_MMU_PTE_PRESENT) == 0) return std::nullopt;
    const std::uint64_t address = pte & ~std::uint64_t{PODSIM_GAUDI1_MMU_PTE_FLAGS};
    // A 2 MiB page ends the walk at hop 3; a 4 KiB page is always hop 4's.
    const bool huge = hop == 3 && (pte & PODSIM_GAUDI1_MMU_PTE_LAST) != 0;
    if (huge || hop == kHops - 1) {
      const std::uint64_t size = huge ? kHugePage : kSmallPage;
      return Translation{address + (va & (size - 1)), size};
    }
    table = address;
  }
  return std::nullopt;
}

}  // namespace page_table

namespace {
constexpr std::uint64_t kStlb = PODSIM_GAUDI1_STLB_BASE - PODSIM_GAUDI1_MMU_UP_BASE;
constexpr std::uint64_t reg(std::uint64_t absolute) { return absolute - PODSIM_GAUDI1_MMU_UP_BASE; }
constexpr std::uint32_t kBusy = 1u << 31;
constexpr std::uint64_t cache_key(std::uint32_t asid, std::uint64_t va) {
  return std::uint64_t{asid} << 40 | va / page_table::kSmallPage;
}
}  // namespace

Mmu::Mmu(sc_core::sc_module_name name, const MmuConfig& config, page_table::PteReader read)
    : sc_module(name),
      target_socket("target_socket"),
      config_(core::validate_config(config)),
      read_(std::move(read)),
      hop0_(PODSIM_GAUDI1_MMU_MAX_ASID, 0),
      stats_{core::StatsGroup(this->name()).counter("translations", "1", "accesses translated"),
             core::StatsGroup(this->name())
                 .counter("walks", "1", "page walks (translation-cache misses)"),
             core::StatsGroup(this->name()).counter("faults", "1", "page faults")} {
  target_socket.register_b_transport(this, &Mmu::b_transport);
}

bool Mmu::translates(std::uint64_t address) const {
  return enabled_ && address >= PODSIM_GAUDI1_VA_HOST_SPACE_START &&
         address < PODSIM_GAUDI1_VA_HOST_SPACE_END;
}

std::optional<page_table::Translation> Mmu::lookup(std::uint64_t va, bool& missed) {
  const std::uint64_t key = cache_key(engine_asid_, va);
  const std::uint64_t in_page = va % page_table::kSmallPage;
  if (auto it = cache_.find(key); it != cache_.end()) {
    return page_table::Translation{it->second.physical + in_page, it->second.page_size};
  }
  missed = true;
  stats_.walks.add();
  auto t = page_table::walk(hop0_[engine_asid_], va, read_);
  if (t) cache_[key] = {t->physical - in_page, t->page_size};
  return t;
}

bool Mmu::translate(std::uint64_t va, std::uint64_t length, std::vector<Run>& runs,
                    core::TimePs& walk) {
  stats_.translations.add();
  runs.clear();
  bool missed = false;
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t at = va + done;
    const auto t = lookup(at, missed);
    if (!t || !translates(at)) {
      fault(at);
      return false;
    }
    const std::uint64_t piece = std::min(length - done, t->page_size - at % t->page_size);
    if (!runs.empty() && runs.back().physical + runs.back().length == t->physical) {
      runs.back().length += piece;
    } else {
      runs.push_back({t->physical, done, piece});
    }
    done += piece;
  }
  walk = missed ? config_.walk_latency.ps : 0;
  return true;
}

void Mmu::fault(std::uint64_t va) {
  stats_.faults.add();
  if (!fault_valid_) {  // the capture holds the first fault until the driver clears it
    fault_valid_ = true;
    fault_va_ = va;
  }
  if (error_sink_) {
    error_sink_({core::ErrorEvent::Kind::kPageFault, name(), va, core::now_ps(),
                 fmt::format("no translation for {:#x} in ASID {}", va, engine_asid_)});
  }
}

std::uint32_t Mmu::read_register(std::uint64_t offset) const {
  switch (offset) {
    case reg(PODSIM_GAUDI1_MMU_UP_MMU_ENABLE(PODSIM_GAUDI1_MMU_UP_BASE)):
      return enabled_ ? 1 : 0;
    case reg(PODSIM_GAUDI1_MMU_UP_PAGE_ERROR_CAPTURE(PODSIM_GAUDI1_MMU_UP_BASE)):
      return fault_valid_ ? podsim_gaudi1_make_mmu_page_error_capture(
                                static_cast<std::uint32_t>(fault_va_ >> 32), 1)
                          : 0;
    case reg(PODSIM_GAUDI1_MMU_UP_PAGE_ERROR_CAPTURE_VA(PODSIM_GAUDI1_MMU_UP_BASE)):
      return static_cast<std::uint32_t>(fault_va_);
    case reg(PODSIM_GAUDI1_MMU_UP_ENGINE_ASID(PODSIM_GAUDI1_MMU_UP_BASE)):
      return engine_asid_;
    case kStlb + PODSIM_GAUDI1_STLB_MMU_ASID_OFFSET:
      return update_asid_;
    case kStlb + PODSIM_GAUDI1_STLB_HOP0_PA43_12_OFFSET:
      return hop0_lo_;
    case kStlb + PODSIM_GAUDI1_STLB_HOP0_PA49_44_OFFSET:
      return hop0_hi_;
    default:
      return 0;  // busy and invalidation registers: done at once
  }
}

void Mmu::write_register(std::uint64_t offset, std::uint32_t value) {
  switch (offset) {
    case reg(PODSIM_GAUDI1_MMU_UP_MMU_ENABLE(PODSIM_GAUDI1_MMU_UP_BASE)):
      enabled_ = (value & 1) != 0;
      break;
    case reg(PODSIM_GAUDI1_MMU_UP_PAGE_ERROR_CAPTURE(PODSIM_GAUDI1_MMU_UP_BASE)):
      fault_valid_ = (value & PODSIM_GAUDI1_MMU_PAGE_ERROR_CAPTURE_ENTRY_VALID_MASK) != 0;
      break;
    case reg(PODSIM_GAUDI1_MMU_UP_ENGINE_ASID(PODSIM_GAUDI1_MMU_UP_BASE)):
      if (value < hop0_.size()) engine_asid_ = value;
      break;
    case kStlb + PODSIM_GAUDI1_STLB_MMU_ASID_OFFSET:
      update_asid_ = value;
      break;
    case kStlb + PODSIM_GAUDI1_STLB_HOP0_PA43_12_OFFSET:
      hop0_lo_ = value;
      break;
    case kStlb + PODSIM_GAUDI1_STLB_HOP0_PA49_44_OFFSET:
      hop0_hi_ = value;
      break;
    case kStlb + PODSIM_GAUDI1_STLB_MMU_BUSY_OFFSET:
      if ((value & kBusy) != 0 && update_asid_ < hop0_.size()) {
        hop0_[update_asid_] = std::uint64_t{hop0_lo_} << 12 | std::uint64_t{hop0_hi_} << 44;
        cache_.clear();
      }
      break;
    case kStlb + PODSIM_GAUDI1_STLB_CACHE_INV_OFFSET:
    case kStlb + PODSIM_GAUDI1_STLB_INV_ALL_START_OFFSET:
    case kStlb + PODSIM_GAUDI1_STLB_INV_PS_OFFSET:
    case kStlb + PODSIM_GAUDI1_STLB_MEM_CACHE_INVALIDATION_OFFSET:
      cache_.clear();
      break;
    default:
      break;
  }
}

// Configuration writes take effect at once: the driver changes tables and ASIDs only while the
// engines it affects are idle, so applying them ahead of their time changes nothing seen.
void Mmu::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time&) {
  const std::uint64_t offset = trans.get_address();
  const unsigned int length = trans.get_data_length();
  if (offset % 4 != 0 || length % 4 != 0 || offset + length > kRegisterSpan) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  std::uint8_t* data = trans.get_data_ptr();
  for (unsigned int i = 0; i < length; i += 4) {
    std::uint32_t value = 0;
    if (trans.is_write()) {
      std::memcpy(&value, data + i, 4);
      write_register(offset + i, value);
    } else {
      value = read_register(offset + i);
      std::memcpy(data + i, &value, 4);
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace podsim::chip
