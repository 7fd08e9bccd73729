// Gaudi1's device MMU as the engines see it: an access to the host virtual range
// [VA_HOST_SPACE_START, VA_HOST_SPACE_END) is translated through the page tables of the current
// address-space id (ASID), which the driver keeps in HBM, and then routed as a physical access;
// any other address passes untranslated, as Gaudi1's DRAM, SRAM and registers do.
// Captures: the hop-table format (five hops of 512 eight-byte PTEs, hop shifts 48/39/30/21/12,
// the present and last bits, 4 KiB pages at hop 4 and 2 MiB pages ending at hop 3); the
// registers Gaudi1's driver uses: enable, the per-ASID hop-0 address (MMU_ASID, HOP0_PA, BUSY),
// cache invalidation, and the capture of the last page fault; a translation cache dropped on
// invalidation; a page walk's latency, charged once per access that misses (the STLB prefetches
// the pages that follow, so a long transfer does not wait per page); page faults as address
// errors with an error event and the captured VA.
// Ignores: the DRAM range (Gaudi1's driver leaves DRAM physical), per-engine ASIDs (one register
// of podsim's stands for the ASID the driver writes into every engine at a context switch; one
// user context runs at a time on Gaudi1), secured accesses, permissions, and the STLB's sets and
// ways (the cache is unbounded).
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "core/config_binding.h"
#include "core/error_event.h"
#include "core/stats.h"
#include "core/units.h"

namespace podsim::chip {

// The page-table format, without the kernel: what the driver writes and the MMU walks.
namespace page_table {
constexpr int kHops = 5;
constexpr std::uint64_t kSmallPage = 4096, kHugePage = 2ull << 20;
constexpr std::uint64_t kEntries = 512;
// Bits of the VA that index hop `hop`'s table.
int shift(int hop);
std::uint64_t index(std::uint64_t va, int hop);
// A PTE pointing at the next hop's table, or mapping a page (`last`).
std::uint64_t make_pte(std::uint64_t address, bool last);

struct Translation {
  std::uint64_t physical = 0;   // of the VA's byte
  std::uint64_t page_size = 0;  // of the page holding it
};
// Reads the eight-byte PTE at a device address.
using PteReader = std::function<std::uint64_t(std::uint64_t address)>;
// The translation of `va` by the tables under `hop0`, or nullopt when a PTE on the way is not
// present.
std::optional<Translation> walk(std::uint64_t hop0, std::uint64_t va, const PteReader& read);
}  // namespace page_table

struct MmuConfig {
  core::Duration walk_latency{400000};

  template <class V>
  void describe(V& v) {
    v.field("walk_latency", walk_latency,
            core::Spec("time of a page walk on a translation-cache miss: five dependent reads of "
                       "hop tables in HBM")
                .min(0)
                .source("[U] not published; five HBM reads of about 80 ns each"));
  }
};

class Mmu : public sc_core::sc_module {
 public:
  // Gaudi1's MMU_UP block and the STLB block after it, as one region of the address map.
  static constexpr std::uint64_t kRegisterSpan = 0x2000;
  tlm_utils::simple_target_socket<Mmu> target_socket;

  // `read` reads the page tables (HBM) outside simulated time.
  Mmu(sc_core::sc_module_name name, const MmuConfig& config, page_table::PteReader read);
  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }

  // A physically contiguous piece of a translated access: `offset` bytes into it.
  struct Run {
    std::uint64_t physical = 0, offset = 0, length = 0;
  };
  bool translates(std::uint64_t address) const;
  // The physical runs of [va, va + length) for the current ASID, merged where pages are
  // contiguous; `walk` gets the latency the translation adds. False on a page fault, which is
  // captured, counted and raised as an error event.
  bool translate(std::uint64_t va, std::uint64_t length, std::vector<Run>& runs,
                 core::TimePs& walk);

  struct Stats {
    core::Counter& translations;
    core::Counter& walks;
    core::Counter& faults;
  };
  const Stats& stats() const { return stats_; }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  std::uint32_t read_register(std::uint64_t offset) const;
  void write_register(std::uint64_t offset, std::uint32_t value);
  std::optional<page_table::Translation> lookup(std::uint64_t va, bool& missed);
  void fault(std::uint64_t va);

  MmuConfig config_;
  page_table::PteReader read_;
  core::ErrorSink error_sink_;
  bool enabled_ = false;
  std::uint32_t engine_asid_ = 0;
  std::uint32_t update_asid_ = 0, hop0_lo_ = 0, hop0_hi_ = 0;
  std::vector<std::uint64_t> hop0_;  // by ASID
  std::uint64_t fault_va_ = 0;
  bool fault_valid_ = false;
  // By ASID and 4 KiB virtual page number.
  std::unordered_map<std::uint64_t, page_table::Translation> cache_;
  Stats stats_;
};

}  // namespace podsim::chip
