// The MEMORY ioctl and the contexts' device address spaces (device.h says what is captured).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::driver {
namespace {

constexpr std::uint64_t kPage = 4096;
// Gaudi1's BAR4 opens HBM from chip address 0 [C7].
constexpr std::uint64_t kHbmBarBase = 0;
constexpr std::uint64_t kVaStart = PODSIM_GAUDI1_VA_HOST_SPACE_START;
constexpr std::uint64_t kVaSize = PODSIM_GAUDI1_VA_HOST_SPACE_END - kVaStart;

}  // namespace

void Device::write_device(std::uint64_t chip_address, const void* data, std::uint32_t length) {
  const std::uint64_t at = pci_.bar(4).address + (chip_address - kHbmBarBase);
  if (cpu_.write(at, data, length) != tlm::TLM_OK_RESPONSE) {
    throw std::runtime_error(
        fmt::format("{:#x}: the device memory did not take a write", chip_address));
  }
}

void Device::invalidate_translations() {
  write_register(PODSIM_GAUDI1_STLB_INV_ALL_START(PODSIM_GAUDI1_STLB_BASE), 1);
}

// A context gets an ASID whose hop-0 table the MMU learns, and every engine works in it from now
// on (one compute context at a time on Gaudi1).
int Device::open_context(std::uint32_t ctx) {
  const auto asid = asids_.allocate(1);
  if (!asid) return -EBUSY;
  Context c;
  c.user = user_;
  c.asid = static_cast<std::uint32_t>(*asid);
  c.va = core::RangeAllocator(kVaStart, kVaSize);
  const std::uint64_t hop0 = tables_.hop0(c.asid);
  write_register(PODSIM_GAUDI1_STLB_MMU_ASID(PODSIM_GAUDI1_STLB_BASE), c.asid);
  write_register(PODSIM_GAUDI1_STLB_HOP0_PA43_12(PODSIM_GAUDI1_STLB_BASE),
                 static_cast<std::uint32_t>(hop0 >> 12));
  write_register(PODSIM_GAUDI1_STLB_HOP0_PA49_44(PODSIM_GAUDI1_STLB_BASE),
                 static_cast<std::uint32_t>(hop0 >> 44));
  write_register(PODSIM_GAUDI1_STLB_MMU_BUSY(PODSIM_GAUDI1_STLB_BASE), 1u << 31);
  write_register(PODSIM_GAUDI1_MMU_UP_ENGINE_ASID(PODSIM_GAUDI1_MMU_UP_BASE), c.asid);
  clear_sync_objects();
  contexts_.emplace(ctx, std::move(c));
  return 0;
}

// What a context finds: the sync objects and monitors it may use cleared and disarmed, as
// Linux's context switch leaves them — all of E_N, E_S and W_N, and W_S from the first user
// object and monitor on (the driver's own below them keep their state) [C14].
void Device::clear_sync_objects() {
  const std::uint64_t managers[] = {
      PODSIM_GAUDI1_SYNC_MNGR_E_N_BASE, PODSIM_GAUDI1_SYNC_MNGR_E_S_BASE,
      PODSIM_GAUDI1_SYNC_MNGR_W_N_BASE, PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE};
  for (const std::uint64_t base : managers) {
    const bool ws = base == PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE;
    const chip::ResourceShare& own = props_.resources.driver;
    const std::uint32_t sob = ws ? (own.first_sob + own.sobs) % chip::kObjectsPerManager : 0;
    const std::uint32_t mon = ws ? own.first_monitor + own.monitors : 0;
    const std::vector<std::uint32_t> zeros(PODSIM_GAUDI1_SOBS_PER_MANAGER, 0);
    write_registers(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(base, sob), zeros.data(),
                    PODSIM_GAUDI1_SOBS_PER_MANAGER - sob);
    write_registers(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS(base, mon), zeros.data(),
                    PODSIM_GAUDI1_MONITORS_PER_MANAGER - mon);
  }
}

void Device::close_context(std::uint32_t ctx) {
  const auto it = contexts_.find(ctx);
  if (it == contexts_.end()) return;
  Context& c = it->second;
  for (const auto& [va, m] : c.mappings) drop(c, m);
  invalidate_translations();
  write_register(PODSIM_GAUDI1_MMU_UP_ENGINE_ASID(PODSIM_GAUDI1_MMU_UP_BASE), 0);
  asids_.release(c.asid, 1);
  contexts_.erase(it);
  // Its reservations no CS carries go with it (a carried one ends with its CS).
  for (auto h = encaps_.begin(); h != encaps_.end();) {
    if (h->first.first == ctx && h->second.cs_seq == ~0ull) {
      release_sob(h->second.sob);
      h = encaps_.erase(h);
    } else {
      ++h;
    }
  }
}

void Device::drop(Context& context, const Mapping& m) {
  tables_.unmap(context.asid, m.va, m.size);
  context.user->unpin(m.physical, m.size);
  context.va.release(m.va, m.size);
}

// As Linux's map of host memory: the pages around the range are pinned and mapped at the hint
// when it is page aligned and free (else anywhere, or ENOMEM with FORCE_HINT); the address
// returned keeps the user address's offset in its page [C13].
int Device::map_host(std::uint32_t ctx, const hl_mem_in& in, std::uint64_t& device_va) {
  Context& c = contexts_.at(ctx);
  const std::uint64_t address = in.map_host.host_virt_addr, size = in.map_host.mem_size;
  if (size == 0 || address + size < address) return -EINVAL;
  const std::uint64_t first = address / kPage * kPage;
  const std::uint64_t bytes = (address + size - first + kPage - 1) / kPage * kPage;
  const std::uint64_t hint = in.map_host.hint_addr;
  const bool force = (in.flags & HL_MEM_FORCE_HINT) != 0;
  if (force && hint % kPage != 0) return -ENOMEM;
  std::optional<std::uint64_t> va;
  if (hint != 0 && hint % kPage == 0 && c.va.take(hint, bytes)) va = hint;
  if (!va && force) return -ENOMEM;
  if (!va) va = c.va.allocate(bytes, kPage);
  if (!va) return -ENOMEM;
  std::uint64_t physical = 0;
  if (const int rc = c.user->pin(first, bytes, physical); rc != 0) {
    c.va.release(*va, bytes);
    return rc;
  }
  if (!tables_.map(c.asid, *va, chip_view(physical), bytes)) {
    c.user->unpin(physical, bytes);
    c.va.release(*va, bytes);
    return -ENOMEM;
  }
  invalidate_translations();
  device_va = *va + (address - first);
  c.mappings[device_va] = {*va, bytes, physical};
  return 0;
}

int Device::unmap(std::uint32_t ctx, std::uint64_t device_va) {
  Context& c = contexts_.at(ctx);
  const auto it = c.mappings.find(device_va);
  if (it == c.mappings.end()) return -EINVAL;
  drop(c, it->second);
  invalidate_translations();
  c.mappings.erase(it);
  return 0;
}

int File::memory(void* arg) {
  auto& a = *static_cast<hl_mem_args*>(arg);
  Device& d = device_;
  const hl_mem_in in = a.in;
  switch (in.op) {
    case HL_MEM_OP_ALLOC:
      if (in.alloc.mem_size == 0) return -EINVAL;
      d.dram_used_ += in.alloc.mem_size;
      d.ctx_dram_[ctx_] += in.alloc.mem_size;
      a.out = {};
      a.out.handle = 0;
      return 0;
    case HL_MEM_OP_FREE: {
      std::uint64_t& mine = d.ctx_dram_[ctx_];
      const std::uint64_t size = std::min<std::uint64_t>(in.alloc.mem_size, mine);
      mine -= size;
      d.dram_used_ -= size;
      return 0;
    }
    case HL_MEM_OP_MAP: {
      if ((in.flags & HL_MEM_USERPTR) == 0) return -EINVAL;  // Gaudi1 has no device handles
      std::uint64_t va = 0;
      if (const int rc = d.map_host(ctx_, in, va); rc != 0) return rc;
      a.out = {};
      a.out.device_virt_addr = va;
      return 0;
    }
    case HL_MEM_OP_UNMAP:
      return d.unmap(ctx_, in.unmap.device_virt_addr);
    case HL_MEM_OP_MAP_BLOCK:
    case HL_MEM_OP_EXPORT_DMABUF_FD:
    case HL_MEM_OP_TS_ALLOC:
      return -EOPNOTSUPP;
    default:
      return -EINVAL;
  }
}

}  // namespace podsim::driver
