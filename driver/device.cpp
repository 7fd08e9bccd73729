#include "driver/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/kernel.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::driver {
namespace {

constexpr std::uint64_t kPage = 4096;
// A CB's mmap offset: the CB type in bits 63:59, the id in pages [C13].
constexpr std::uint64_t kCbHandleType = 2ull << 59;
constexpr std::uint64_t kHandleTypeMask = 0x1Full << 59;

std::uint64_t pages(std::uint64_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

bool qman_idle(std::uint32_t sts0) {
  constexpr std::uint32_t idle = PODSIM_GAUDI1_QMAN_GLBL_STS0_PQF_IDLE_MASK |
                                 PODSIM_GAUDI1_QMAN_GLBL_STS0_CQF_IDLE_MASK |
                                 PODSIM_GAUDI1_QMAN_GLBL_STS0_CP_IDLE_MASK;
  return (sts0 & idle) == idle;
}

template <class T>
T& arg_as(void* arg) {
  return *static_cast<T*>(arg);
}

}  // namespace

std::string DeviceProperties::unserved(const chip::ChipConfig& chip) {
  const QueueMap& map = QueueMap::of(static_cast<std::uint32_t>(chip.pcie.endpoint.device_id));
  const QueueMap::Limits most = map.limits();
  const int dma = chip::Chip::dma_engines_of(chip);
  if (dma <= most.dma && chip.mme.engines <= most.mmes && chip.tpc.cores <= most.tpcs) return {};
  return fmt::format(
      "{}: {} DMA engines, {} MMEs and {} TPCs; {}'s queue ids name at most {}, {} "
      "and {}",
      chip.name, dma, chip.mme.engines, chip.tpc.cores, map.family(), most.dma, most.mmes,
      most.tpcs);
}

DeviceProperties DeviceProperties::of(const chip::ChipConfig& chip) {
  DeviceProperties p;
  p.device_id = static_cast<std::uint32_t>(chip.pcie.endpoint.device_id);
  const QueueMap& map = QueueMap::of(p.device_id);
  p.server_type = map.server_type();
  p.card_name = chip.name;
  p.resources = chip.resources;
  const chip::ResourceShare& own = chip.resources.driver;
  if (own.first_sob / chip::kObjectsPerManager != 3 ||
      (own.first_sob + own.sobs - 1) / chip::kObjectsPerManager != 3 || own.monitor_managers != 8 ||
      own.sobs < 16 || own.monitors < 8 || own.first_vector + own.vectors < 9) {
    throw std::invalid_argument(fmt::format(
        "{}: resources.driver must hold W_S objects (6144 on) and monitors, at least 16 and 8 for "
        "the sync streams, and MSI-X vectors 0 to 8 (the host-facing queues and the event queue)",
        chip.name));
  }
  p.sram_base = chip.address_map.sram.value;
  p.sram_size = chip.sram.size.bytes;
  // The driver keeps the start of HBM for firmware and the MMU's tables [C14].
  p.dram_base = chip.address_map.hbm.value + PODSIM_GAUDI1_DRAM_BASE_ADDR_USER;
  p.dram_size = chip::memory_size(chip) - PODSIM_GAUDI1_DRAM_BASE_ADDR_USER;
  p.page_tables = chip.address_map.hbm.value + PODSIM_GAUDI1_MMU_PAGE_TABLES_ADDR;
  p.dma_engines = chip::Chip::dma_engines_of(chip);
  p.mme_engines = chip.mme.engines;
  p.tpc_cores = chip.tpc.cores;
  p.nic_ports = chip.nic.ports;
  p.clock_mhz = static_cast<std::uint32_t>(chip.tpc.core.clock.hertz / 1e6);
  p.host_window = chip.address_map.host.value;
  if (chip::memory_size(chip) <= PODSIM_GAUDI1_DRAM_BASE_ADDR_USER) {
    throw std::invalid_argument(
        fmt::format("{}: {} bytes of device memory; the driver keeps the first {:#x} for itself",
                    chip.name, chip::memory_size(chip), PODSIM_GAUDI1_DRAM_BASE_ADDR_USER));
  }
  const QueueMap::Limits most = map.limits();
  p.dma_engines = std::min(p.dma_engines, most.dma);
  p.mme_engines = std::min(p.mme_engines, most.mmes);
  p.tpc_cores = std::min(p.tpc_cores, most.tpcs);
  return p;
}

Device::Device(host::HostCpu& cpu, host::HostMemory& memory, PciFunction pci,
               DeviceProperties props, KernelMemory kernel)
    : cpu_(cpu),
      memory_(memory),
      identity_(memory.backing().size()),
      pci_(std::move(pci)),
      props_(std::move(props)),
      map_(QueueMap::of(props_.device_id)),
      kernel_(kernel.base, kernel.size),
      tables_(props_.page_tables, PODSIM_GAUDI1_MMU_PAGE_TABLES_SIZE, PODSIM_GAUDI1_MMU_MAX_ASID,
              [this](std::uint64_t at, const void* data, std::uint32_t length) {
                write_device(at, data, length);
              }),
      asids_(1, PODSIM_GAUDI1_MMU_MAX_ASID - 1),  // ASID 0 is the kernel's
      watchdog_(std::make_shared<Watchdog>()) {
  watchdog_->device = this;
  sc_core::sc_spawn([w = watchdog_] { watch(w); }, nullptr);
  enable_msix();
  init_hardware();
}

Device::~Device() {
  // A reset under way finishes first: it waits on the device's registers (the destructor runs
  // in a program of the host CPU, a thread that may wait). After the simulation, outside any
  // program, the driver forgets the device without touching it.
  watchdog_->device = nullptr;  // its process ends at its next wake
  if (!in_program()) {
    for (std::uint32_t data : interrupts_) cpu_.on_interrupt(data, nullptr);
    return;
  }
  while (resetting_) sc_core::wait(reset_done_);
  // The chip stops reporting into memory the driver is giving back, and late interrupts find
  // no handler.
  write_register(PODSIM_GAUDI1_EVENT_QUEUE_ENABLE(PODSIM_GAUDI1_EVENT_QUEUE_BASE), 0);
  for (std::uint32_t data : interrupts_) cpu_.on_interrupt(data, nullptr);
  watchdog_->wake.notify(sc_core::SC_ZERO_TIME);
}

bool Device::in_program() {
  const sc_core::sc_process_handle current = sc_core::sc_get_current_process_handle();
  return current.valid() && current.proc_kind() == sc_core::SC_THREAD_PROC_;
}

int Device::open(bool control, std::unique_ptr<File>& file) {
  if (!control) {
    if (compute_open_) return -EBUSY;
    compute_open_ = true;
    ++open_counter_;
    last_open_ps_ = core::now_ps();
    errors_ = {};  // a new session's first errors are its own
  }
  const std::uint32_t ctx = control ? 0 : next_ctx_++;
  if (!control) {
    if (const int rc = open_context(ctx); rc != 0) {
      compute_open_ = false;
      return rc;
    }
  }
  file.reset(new File(*this, control, ctx, *user_));
  return 0;
}

void File::set_user_memory(UserMemory& user) {
  user_ = &user;
  if (!control_) device_.contexts_.at(ctx_).user = &user;
}

File::~File() {
  if (control_) return;
  Device& d = device_;
  d.compute_open_ = false;
  d.last_period_ms_ = (core::now_ps() - d.last_open_ps_) / 1000000000;
  if (d.debug_ctx_ == ctx_) d.debug_ctx_ = 0;  // closing leaves debug mode
  d.dram_used_ -= d.ctx_dram_[ctx_];
  d.ctx_dram_.erase(ctx_);
  if (Device::in_program()) d.close_context(ctx_);  // else the simulation is over
  // The context's buffers go with it, mapped or not.
  for (auto it = d.cbs_.begin(); it != d.cbs_.end();) {
    if (it->second.ctx != ctx_) {
      ++it;
      continue;
    }
    d.kernel_.release(it->second.address, it->second.size);
    it = d.cbs_.erase(it);
  }
}

Device::Cb* Device::find_cb(std::uint64_t handle, std::uint32_t ctx) {
  const auto it = cbs_.find(handle);
  if (it == cbs_.end() || it->second.ctx != ctx || it->second.destroyed) return nullptr;
  return &it->second;
}

void Device::free_cb(std::uint64_t handle) {
  const auto it = cbs_.find(handle);
  kernel_.release(it->second.address, it->second.size);
  cbs_.erase(it);
}

std::uint64_t Device::register_bar(std::uint64_t chip_address) const {
  const BarWindow w = map_.registers();
  return pci_.bar(w.bar).address + (chip_address - w.chip_base);
}

std::uint32_t Device::read_register(std::uint64_t chip_address) {
  std::uint32_t value = 0;
  const std::uint64_t at = register_bar(chip_address);
  if (cpu_.read(at, &value, 4) != tlm::TLM_OK_RESPONSE) {
    throw std::runtime_error(fmt::format("{:#x}: the device did not answer", chip_address));
  }
  return value;
}

void Device::write_registers(std::uint64_t chip_address, const std::uint32_t* values,
                             std::uint32_t count) {
  const std::uint64_t at = register_bar(chip_address);
  if (cpu_.write(at, values, 4 * count) != tlm::TLM_OK_RESPONSE) {
    throw std::runtime_error(fmt::format("{:#x}: the device did not take a write", chip_address));
  }
}

void Device::write_register(std::uint64_t chip_address, std::uint32_t value) {
  const std::uint64_t at = register_bar(chip_address);
  if (cpu_.write(at, &value, 4) != tlm::TLM_OK_RESPONSE) {
    throw std::runtime_error(fmt::format("{:#x}: the device did not take a write", chip_address));
  }
}

// An engine is busy while it runs or while its QMAN has work, as the Linux driver judges it.
bool Device::engine_busy(int id) {
  const std::optional<EngineRef> e = map_.engine(id);
  if (!e || e->index >= engines(e->kind)) return false;  // absent, or not modeled (NICs)
  const int i = e->index;
  bool engine = false;
  switch (e->kind) {
    case EngineKind::kDma:
      engine = read_register(PODSIM_GAUDI1_DMA_CORE_STS0(chip::Chip::dma_core_base(i))) &
               PODSIM_GAUDI1_DMA_STS0_BUSY_MASK;
      break;
    case EngineKind::kTpc:
      engine = read_register(PODSIM_GAUDI1_TPC_CFG_STATUS(chip::Chip::tpc_cfg_base(i))) &
               PODSIM_GAUDI1_TPC_STATUS_BUSY_MASK;
      break;
    case EngineKind::kMme:
      engine = read_register(chip::Chip::mme_desc_base(i) + PODSIM_GAUDI1_MME_DESC_STATUS_OFFSET) &
               PODSIM_GAUDI1_TPC_STATUS_BUSY_MASK;
      break;
  }
  return engine || !qman_idle(read_register(PODSIM_GAUDI1_QMAN_GLBL_STS0(qman_base(*e))));
}

int File::ioctl(unsigned long request, void* arg) {
  if (_IOC_TYPE(request) != 'H' || _IOC_NR(request) < HL_COMMAND_START ||
      _IOC_NR(request) >= HL_COMMAND_END) {
    return -ENOTTY;
  }
  if (arg == nullptr) return -EFAULT;
  if (request == HL_IOCTL_INFO) return info(arg);
  if (control_) return -ENOTTY;
  if (device_.status_ != HL_DEVICE_STATUS_OPERATIONAL) return -EBUSY;
  if (request == HL_IOCTL_CB) return cb(arg);
  if (request == HL_IOCTL_CS) return cs(arg);
  if (request == HL_IOCTL_WAIT_CS) return wait_cs(arg);
  if (request == HL_IOCTL_MEMORY) return memory(arg);
  if (request == HL_IOCTL_DEBUG) return debug(arg);
  return -ENOTTY;  // the right number with the wrong size
}

// Copies what fits the caller's buffer, as the kernel does (a short buffer is no error).
int File::write_info(const void* args, const void* data, std::size_t size) {
  const auto& a = *static_cast<const hl_info_args*>(args);
  return user_->copy_to(a.return_pointer, data, std::min<std::size_t>(size, a.return_size));
}

int File::info(void* arg) {
  auto& a = arg_as<hl_info_args>(arg);
  if (a.pad != 0) return -EINVAL;
  Device& d = device_;
  const DeviceProperties& p = d.props_;
  const bool no_buffer = a.return_pointer == 0 || a.return_size == 0;
  switch (a.op) {
    case HL_INFO_HW_IP_INFO: {
      if (no_buffer) return -EINVAL;
      hl_info_hw_ip_info ip{};
      ip.sram_base_address = p.sram_base;
      ip.sram_size = static_cast<__u32>(p.sram_size);
      ip.dram_base_address = p.dram_base;
      ip.dram_size = p.dram_size;
      ip.dram_enabled = p.dram_size > 0;
      ip.dram_page_size = p.dram_page_size;
      ip.device_mem_alloc_default_page_size = p.dram_page_size;
      ip.device_id = p.device_id;
      ip.server_type = p.server_type;
      ip.tpc_enabled_mask_ext = (1ull << p.tpc_cores) - 1;
      ip.tpc_enabled_mask = static_cast<__u8>(ip.tpc_enabled_mask_ext);
      ip.mme_master_slave_mode = 1;
      std::snprintf(reinterpret_cast<char*>(ip.cpucp_version), sizeof ip.cpucp_version,
                    "podsim model (no firmware)");
      std::snprintf(reinterpret_cast<char*>(ip.card_name), sizeof ip.card_name, "%s",
                    p.card_name.c_str());
      return write_info(&a, &ip, sizeof ip);
    }
    case HL_INFO_DRAM_USAGE: {
      if (no_buffer) return -EINVAL;
      const std::uint64_t used = std::min(d.dram_used_, p.dram_size);
      const hl_info_dram_usage usage{p.dram_size - used, d.ctx_dram_[ctx_]};
      return write_info(&a, &usage, sizeof usage);
    }
    case HL_INFO_HW_IDLE: {
      if (no_buffer) return -EINVAL;
      hl_info_hw_idle idle{};
      idle.is_idle = 1;
      for (int id = 0; id < d.map_.engine_ids(); ++id) {
        if (!d.engine_busy(id)) continue;
        idle.is_idle = 0;
        idle.busy_engines_mask_ext[id / 64] |= 1ull << (id % 64);
      }
      idle.busy_engines_mask = static_cast<__u32>(idle.busy_engines_mask_ext[0]);
      return write_info(&a, &idle, sizeof idle);
    }
    case HL_INFO_DEVICE_STATUS: {
      if (no_buffer) return -EINVAL;
      const hl_info_device_status status{d.status_, 0};
      return write_info(&a, &status, sizeof status);
    }
    case HL_INFO_CLK_RATE: {
      if (no_buffer) return -EINVAL;
      const hl_info_clk_rate clk{p.clock_mhz, p.clock_mhz};
      return write_info(&a, &clk, sizeof clk);
    }
    case HL_INFO_TIME_SYNC: {
      if (no_buffer) return -EINVAL;
      const std::uint64_t ns = core::now_ps() / 1000;  // one clock: the simulation's
      const hl_info_time_sync sync{ns, ns};
      return write_info(&a, &sync, sizeof sync);
    }
    case HL_INFO_SYNC_MANAGER: {
      if (no_buffer) return -EINVAL;
      if (a.dcore_id > HL_GAUDI_ES_DCORE) return -EINVAL;
      // What follows the driver's share on W_S (Linux: GAUDI_FIRST_AVAILABLE_W_S_* [C1]).
      const chip::ResourceShare& own = d.props_.resources.driver;
      const hl_info_sync_manager sm{(own.first_sob + own.sobs) % chip::kObjectsPerManager,
                                    own.first_monitor + own.monitors, 0, 0};
      return write_info(&a, &sm, sizeof sm);
    }
    case HL_INFO_OPEN_STATS: {
      if (no_buffer) return -EINVAL;
      hl_open_stats_info open{};
      open.open_counter = d.open_counter_;
      open.last_open_period_ms = d.last_period_ms_;
      open.is_compute_ctx_active = d.compute_open_;
      return write_info(&a, &open, sizeof open);
    }
    case HL_INFO_DEV_MEM_ALLOC_PAGE_SIZES: {
      if (no_buffer) return -EINVAL;
      const hl_info_dev_memalloc_page_sizes sizes{0};  // Gaudi1 allocates no device pages
      return write_info(&a, &sizes, sizeof sizes);
    }
    // The model raises no firmware events (HW_IP_INFO says there are none to count) and never
    // throttles its clocks.
    case HL_INFO_HW_EVENTS:
    case HL_INFO_HW_EVENTS_AGGREGATE:
      return no_buffer ? -EINVAL : 0;
    case HL_INFO_CLK_THROTTLE_REASON: {
      if (no_buffer) return -EINVAL;
      const hl_info_clk_throttle none{};
      return write_info(&a, &none, sizeof none);
    }
    case HL_INFO_GET_EVENTS: {
      if (a.return_pointer == 0 || a.return_size < sizeof(__u64)) return -EINVAL;
      const __u64 events = d.notifier_;  // what happened since the last call
      d.notifier_ = 0;
      return write_info(&a, &events, sizeof events);
    }
    // Counters and error records: nothing counted or captured yet, so zeros, as the kernel
    // returns before the first event.
    case HL_INFO_CS_COUNTERS:
      if (no_buffer) return -EINVAL;
      return cs_counters(&a);
    case HL_INFO_RESET_COUNT: {
      if (no_buffer) return -EINVAL;
      const hl_info_reset_count count{d.hard_resets_, 0};
      return write_info(&a, &count, sizeof count);
    }
    case HL_INFO_CS_TIMEOUT_EVENT:
      if (no_buffer) return -EINVAL;
      return write_info(&a, &d.last_timeout_, sizeof d.last_timeout_);
    case HL_INFO_LAST_ERR_OPEN_DEV_TIME: {
      if (no_buffer) return -EINVAL;
      const hl_info_last_err_open_dev_time open{d.last_error_open_};
      return write_info(&a, &open, sizeof open);
    }
    case HL_INFO_RAZWI_EVENT:
      if (no_buffer) return -EINVAL;
      return write_info(&a, &d.errors_.razwi_event, sizeof d.errors_.razwi_event);
    case HL_INFO_PAGE_FAULT_EVENT:
      if (no_buffer) return -EINVAL;
      return write_info(&a, &d.errors_.page_fault_event, sizeof d.errors_.page_fault_event);
    case HL_INFO_UNDEFINED_OPCODE_EVENT:
      if (no_buffer) return -EINVAL;
      return write_info(&a, &d.errors_.undefined_opcode_event,
                        sizeof d.errors_.undefined_opcode_event);
    case HL_INFO_HW_ERR_EVENT:
    case HL_INFO_FW_ERR_EVENT: {
      if (no_buffer) return -EINVAL;
      return user_->clear(a.return_pointer, a.return_size);
    }
    case HL_INFO_USER_MAPPINGS:
      a.array_size = 0;
      return 0;
    // Answered by firmware the model does not have.
    case HL_INFO_DEVICE_UTILIZATION:
    case HL_INFO_PCI_COUNTERS:
    case HL_INFO_TOTAL_ENERGY:
    case HL_INFO_PLL_FREQUENCY:
    case HL_INFO_POWER:
    case HL_INFO_DRAM_REPLACED_ROWS:
    case HL_INFO_DRAM_PENDING_ROWS:
    case HL_INFO_SECURED_ATTESTATION:
    case HL_INFO_REGISTER_EVENTFD:
    case HL_INFO_UNREGISTER_EVENTFD:
    case HL_INFO_ENGINE_STATUS:
    case HL_INFO_FW_GENERIC_REQ:
      return -EOPNOTSUPP;
    default:
      return -EINVAL;
  }
}

int File::cb(void* arg) {
  auto& a = arg_as<hl_cb_args>(arg);
  Device& d = device_;
  const hl_cb_in in = a.in;
  switch (in.op) {
    case HL_CB_OP_CREATE: {
      if (in.cb_size == 0 || in.cb_size > HL_MAX_CB_SIZE) return -EINVAL;
      if (in.flags & HL_CB_FLAGS_MAP) return -EINVAL;  // Gaudi1 maps no CB into the device
      const std::uint64_t size = pages(in.cb_size);
      const auto at = d.kernel_.allocate(size, kPage);
      if (!at) return -ENOMEM;
      const std::uint64_t handle = kCbHandleType | (d.next_cb_id_++ * kPage);
      d.cbs_[handle] = Device::Cb{*at, size, in.cb_size, false, ctx_};
      a.out = {};
      a.out.cb_handle = handle;
      return 0;
    }
    case HL_CB_OP_DESTROY: {
      Device::Cb* cb = d.find_cb(in.cb_handle, ctx_);
      if (cb == nullptr) return -EINVAL;
      if (cb->mapped) {
        cb->destroyed = true;
      } else {
        d.free_cb(in.cb_handle);
      }
      return 0;
    }
    case HL_CB_OP_INFO: {
      if (d.find_cb(in.cb_handle, ctx_) == nullptr) return -EINVAL;
      if (in.flags & HL_CB_FLAGS_GET_DEVICE_VA) return -EINVAL;  // never mapped on Gaudi1
      a.out = {};
      a.out.usage_cnt = 0;  // no submission holds it yet
      return 0;
    }
    default:
      return -EINVAL;
  }
}

// Gaudi1's driver keeps account of the DRAM user space says it takes, relying on its word
// (FREE passes the size where other ASICs pass a handle) [C13].
// Debug mode is one context's at a time; the trace components it opens are not modeled.
int File::debug(void* arg) {
  const auto& a = arg_as<hl_debug_args>(arg);
  Device& d = device_;
  if (a.op == HL_DEBUG_OP_SET_MODE) {
    if (a.enable ? d.debug_ctx_ != 0 : d.debug_ctx_ != ctx_) return -EFAULT;
    d.debug_ctx_ = a.enable ? ctx_ : 0;
    return 0;
  }
  if (a.op > HL_DEBUG_OP_SET_MODE) return -EINVAL;
  return d.debug_ctx_ == ctx_ ? -EOPNOTSUPP : -EFAULT;
}

int File::mmap(std::uint64_t offset, std::uint64_t length, std::uint64_t& address) {
  if (control_ || (offset & kHandleTypeMask) != kCbHandleType) return -EINVAL;
  Device::Cb* cb = device_.find_cb(offset, ctx_);
  // The mapping's pages must be the buffer's, as the kernel compares the VMA's size.
  if (cb == nullptr || cb->mapped || pages(length) != cb->size) return -EINVAL;
  cb->mapped = true;
  address = cb->address;
  return 0;
}

int File::munmap(std::uint64_t offset) {
  const auto it = device_.cbs_.find(offset);
  if (it == device_.cbs_.end() || !it->second.mapped || it->second.ctx != ctx_) return -EINVAL;
  it->second.mapped = false;
  if (it->second.destroyed) device_.free_cb(offset);
  return 0;
}

}  // namespace podsim::driver
