// The driver's side of one probed Gaudi device and the files user space opens on it, with the
// accel uAPI's ioctls as the Linux driver answers them (drm/habanalabs_accel.h).
// Captures: the compute node (one open at a time: a second gets EBUSY) and the control node
// (INFO only); INFO's device description, DRAM usage, engine idle masks (read from the
// engines' status registers through BAR2), status, clocks, reset and CS counters, time sync,
// sync-manager ranges, open statistics and the error records; CB create, destroy and info with
// mmap by handle, the buffers in host memory the driver owns; argument checks with the
// kernel's errno (docs/driver.md). Every device access is a request of the host CPU through
// PCIe, so ioctls run in a HostCpu program's thread.
// CS: jobs on host-facing queues (DMA 0 and 1) run a copy of the user's CB with two MSG_PROT
// packets the driver appends (the completion-queue entry, then the MSI-X doorbell); jobs on
// internal queues run the user's CB where it lies in device memory; a CS completes when its
// host-facing jobs have, seen by the interrupt handler reading the completion queue; WAIT_CS
// blocks the caller's thread until then or its timeout.
// MEMORY: device-memory ALLOC and FREE only account (Gaudi1 has no DRAM MMU: user space places
// its data itself), MAP of a device handle is refused; MAP USERPTR pins the user's pages
// (user_memory.h) and maps them into the context's host virtual range with the device MMU
// (page_tables.h), at a hint when asked; UNMAP undoes it. Each context has its own ASID, page
// tables and virtual range, and loses its mappings when its file closes.
// CS timeouts: a CS still running at its deadline (30 s, or its own with CUSTOM_TIMEOUT) times
// out, is recorded (INFO CS_TIMEOUT_EVENT) and, unless SKIP_RESET_ON_TIMEOUT, starts a hard
// reset: every QMAN stopped and flushed, every CS in flight aborted, the reset counted, the
// queues started again; the device is IN_RESET meanwhile. Unlike Linux, which kills the
// processes holding the device, the model leaves their files usable.
// Sync streams: SIGNAL and WAIT CSs on the host-facing queues (sync_stream.cpp). Collective
// waits: EINVAL, as Linux 6.4 with its NIC ports disabled.
// WAIT_CS with MULTI_CS: any of up to 32 CSs.
// Errors: the chip's asynchronous errors arrive through its event queue (error_events.cpp); INFO
// reports the first RAZWI, page fault and undefined opcode since the compute node was opened,
// and GET_EVENTS the notifier events since it was last asked.
// Staged submissions (FIRST/LAST, completion at the last stage, the timeout on the first) and
// encapsulated signals (reserve, a staged CS carrying them, WAIT on one, unreserve).
// Ignores (for now):
// interrupt waits, MAP_BLOCK, dma-buf export, timestamp buffers and DEBUG's CoreSight components
// (EOPNOTSUPP; its debug mode itself is kept), and the INFO
// opcodes answered by firmware the model does not have (power, energy, PLLs, PCI counters,
// utilization, attestation, DRAM row replacement, firmware requests, event fds, the
// engine-status text): EOPNOTSUPP.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "core/kernel.h"
#include "core/range_allocator.h"
#include "driver/page_tables.h"
#include "driver/pci_probe.h"
#include "driver/queue_map.h"
#include "driver/user_memory.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip_config.h"
#include "hw/host/host_cpu.h"
#include "hw/host/host_memory.h"

namespace podsim::driver {

// What the driver knows of a device before it talks to it: its fixed ASIC properties and what
// the firmware would report at boot (memory sizes, enabled engines, clocks).
struct DeviceProperties {
  std::uint32_t device_id = kGaudiDeviceId;
  std::uint16_t server_type = 1;  // the family's box: HL_SERVER_GAUDI_HLS1 or GAUDI2_HLS2
  std::string card_name;
  std::uint64_t sram_base = 0, sram_size = 0;
  std::uint64_t dram_base = 0, dram_size = 0;  // what user space may use
  std::uint64_t page_tables = 0;               // the MMU's hop tables, in HBM
  std::uint64_t dram_page_size = 2u << 20;
  int dma_engines = 0, mme_engines = 0, tpc_cores = 0, nic_ports = 0;
  std::uint32_t clock_mhz = 0;    // the compute clock INFO CLK_RATE reports
  std::uint64_t host_window = 0;  // where host memory appears in the chip's address space
  // Who takes what of the chip (the preset's table): the driver keeps its share and reports the
  // user's start through INFO.
  chip::ResourcesConfig resources;

  // The family's fixed properties (by the preset's PCI device id: Gaudi1 or Gaudi2) with what
  // the preset says the firmware reports. A chip with more engines than its family's queue ids
  // name (gaudi3 under Gaudi2's ids) is served with those the ids name, the others left idle.
  // Throws std::invalid_argument for another device id or too little device memory.
  static DeviceProperties of(const chip::ChipConfig& chip);
  // What of `chip` the driver cannot reach (its engines beyond the ids), empty when nothing.
  static std::string unserved(const chip::ChipConfig& chip);
};

// Host physical memory the driver allocates its buffers (CBs) from.
struct KernelMemory {
  std::uint64_t base = 0, size = 0;
};

class File;

class Device {
 public:
  // `pci` as probe() found it; `memory` the host memory the device's DMA reaches.
  Device(host::HostCpu& cpu, host::HostMemory& memory, PciFunction pci, DeviceProperties props,
         KernelMemory kernel);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Opens the compute node (`control` false) or the control node; -EBUSY when the compute node
  // is open already. 0 on success.
  int open(bool control, std::unique_ptr<File>& file);

  // The user process files opened from now on belong to (File::set_user_memory for one file):
  // where MAP USERPTR finds the pages of a user range and ioctls read what their arguments point
  // to; by default user addresses are host physical (IdentityUserMemory over the host memory).
  void set_user_memory(UserMemory& user) { user_ = &user; }

  const DeviceProperties& properties() const { return props_; }
  // Whether the caller is a program's thread, which may reach the device (may wait).
  static bool in_program();
  const PciFunction& pci() const { return pci_; }

 private:
  friend class File;
  struct Cb {
    std::uint64_t address = 0, size = 0;  // host physical, size rounded to pages
    std::uint32_t requested = 0;
    bool mapped = false;
    std::uint32_t ctx = 0;
    bool destroyed = false;  // while mapped: freed at munmap, as the kernel defers it
  };
  // The CB `handle` of context `ctx`, if it exists and is not destroyed.
  Cb* find_cb(std::uint64_t handle, std::uint32_t ctx);
  void free_cb(std::uint64_t handle);

  // A queue the driver has set up: its PQ ring in host memory and, for a host-facing one, its
  // completion queue and MSI-X vector with the jobs still to complete.
  struct Job {
    std::uint32_t ctx;
    std::uint64_t seq;
    std::uint32_t slot;
    std::uint64_t patched, patched_size;  // the driver's copy of the CB, host physical
  };
  struct Queue {
    std::uint64_t qman = 0;
    int stream = 0;
    bool external = false;
    std::uint64_t ring = 0, cq = 0;
    std::uint32_t pi = 0;
    // Internal queues: what the QMAN has consumed as the driver counts it, advanced when a CS
    // with jobs here ends (as Linux does: it never reads the CI register back).
    std::uint32_t ci = 0;
    int vector = -1;
    std::deque<Job> pending;
  };
  struct Cs {
    std::uint32_t ctx = 0;
    std::uint64_t seq = 0;
    core::TimePs submitted = 0;  // for the trace's span
    std::uint32_t remaining = 0;
    core::TimePs completed = 0;
    bool done = false;
    bool timed_out = false, aborted = false;  // ended by its timeout, or by the reset
    bool skip_reset = false;
    bool signal = false;                   // a SIGNAL CS: what a WAIT may wait for
    std::uint32_t sob = 0, sob_value = 0;  // the W_S object it signals and the value it makes
    std::vector<std::uint32_t> sob_refs;   // sync-stream objects held until it ends
    std::vector<Queue*> internal_jobs;     // a queue per internal job, freed when it ends
    // Staged submissions: a stage other than the last is held (one more `remaining`) until the
    // last ends; the first stage lists the others, whether the last has come, and the
    // encapsulated signals it carries (their handle, released when it ends).
    bool staged_first = false, staged_closed = false;
    std::vector<std::uint64_t> stages;
    std::uint64_t staged = 0;  // a later stage: the first's sequence
    bool staged_last = false;
    std::uint32_t encaps = 0;  // the handle id, 0 for none
    std::multimap<core::TimePs, std::pair<std::uint32_t, std::uint64_t>>::iterator deadline;
  };
  // The timeout detection: a process of its own that sleeps until the earliest deadline of a CS
  // still running. It outlives the device by a little: the device leaves it `device` null.
  struct Watchdog {
    Device* device = nullptr;
    sc_core::sc_event wake;
  };
  static void watch(const std::shared_ptr<Watchdog>& watchdog);
  // A host-facing queue's sync stream (sync_stream.cpp): two reserved W_S sync objects signalled
  // in turn, the next taken before a value passes the 15-bit limit, and a reserved monitor.
  // An object is free to switch to when nothing uses it: no CS in flight, no reservation.
  struct SyncStream {
    std::uint32_t next_value = 1;
    int current = 0;
    std::array<int, 2> users{0, 0};
  };
  int signal(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout, hl_cs_out& out);
  int wait_for_signal(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                      hl_cs_out& out);
  // Encapsulated signals (sync_stream.cpp): `count` signals of a queue's sync object reserved
  // for a staged CS to add itself; a WAIT on one of them; giving them back unused.
  struct EncapsHandle {
    std::uint32_t queue = 0, count = 0, sob = 0, first_value = 0;
    std::uint64_t cs_seq = ~0ull;  // the staged CS that carries them, once submitted
  };
  int reserve_signals(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out);
  int unreserve_signals(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out);
  int wait_for_encaps(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                      hl_cs_out& out);
  // The sync-stream CS that waits until `sob` reaches `value`, on `chunk`'s queue.
  int queue_wait(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                 std::uint32_t sob, std::uint32_t value, hl_cs_out& out);
  // Staged submissions: one stage, its sequence in `seq` (the first stage's for the others).
  int submit_stage(std::uint32_t ctx, const hl_cs_in& in, const std::vector<hl_cs_chunk>& chunks,
                   core::TimePs timeout, bool skip_reset, std::uint64_t& seq);
  void release_sob(std::uint32_t sob);
  void clear_released_sobs();
  void reset_sync_streams();
  std::uint32_t stream_sob_base() const;      // the sync streams' first W_S object
  std::uint32_t stream_monitor_base() const;  // their first W_S monitor
  std::uint32_t sob_of(std::uint32_t queue, int which) const;
  void time_out(std::uint32_t ctx, std::uint64_t seq);
  void hard_reset();
  void end(Cs& cs);
  void trace(const Cs& cs);
  void release_stages(const Cs& last);
  static constexpr core::TimePs kNoDeadline = ~core::TimePs{0};

  // A context's device address space: its ASID, its free host virtual range and its mappings by
  // the address MAP returned.
  struct Mapping {
    std::uint64_t va = 0, size = 0, physical = 0;  // the page-aligned block
  };
  struct Context {
    UserMemory* user = nullptr;  // the process the context belongs to
    std::uint32_t asid = 0;
    core::RangeAllocator va;
    std::map<std::uint64_t, Mapping> mappings;
  };
  int open_context(std::uint32_t ctx);
  void close_context(std::uint32_t ctx);
  int map_host(std::uint32_t ctx, const hl_mem_in& in, std::uint64_t& device_va);
  int unmap(std::uint32_t ctx, std::uint64_t device_va);
  void drop(Context& context, const Mapping& m);
  void invalidate_translations();
  void write_device(std::uint64_t chip_address, const void* data, std::uint32_t length);

  // The host address of a chip register, in the family's register BAR.
  std::uint64_t register_bar(std::uint64_t chip_address) const;
  std::uint32_t read_register(std::uint64_t chip_address);
  void write_register(std::uint64_t chip_address, std::uint32_t value);
  // `count` consecutive registers in one access.
  void write_registers(std::uint64_t chip_address, const std::uint32_t* values,
                       std::uint32_t count);
  void clear_sync_objects();
  bool engine_busy(int gaudi_engine_id);
  void enable_msix();
  // The event queue (error_events.cpp): set up at probe and after a reset; its interrupt.
  void init_event_queue();
  void on_event();
  void record_error(std::uint32_t kind, std::uint64_t address);
  void init_hardware();
  void init_qmans();
  Queue* queue(std::uint32_t id);      // set up at first use; nullptr when the chip lacks it
  int engines(EngineKind kind) const;  // how many the chip has
  void set_up_ring(const Queue& q);
  // Jobs queue `q` holds that its QMAN has not fetched (internal) or completed (external).
  std::uint32_t in_flight(const Queue& q);
  int submit(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out);
  // Checks the jobs of one CS, then queues them all under a new sequence number.
  // `timeout`: from now until the CS counts as timed out.
  // A host-facing job of `driver_cb` runs the driver's packets instead of a user CB.
  // `internal_only`: a CS without host-facing jobs is accepted (a staged submission's stage
  // before the last). `prepare` completes the new CS's record before its jobs are queued: the
  // doorbell writes take time, during which the jobs may already finish.
  int queue_jobs(std::uint32_t ctx, const std::vector<hl_cs_chunk>& chunks, core::TimePs timeout,
                 bool skip_reset, std::uint64_t& seq,
                 const std::vector<std::uint8_t>* driver_cb = nullptr, bool internal_only = false,
                 const std::function<void(Cs&)>& prepare = nullptr);
  int wait(std::uint32_t ctx, const hl_wait_cs_in& in, hl_wait_cs_out& out);
  // Whether `cs` has ended as of now, and waiting until it has or `deadline`.
  static bool ended(const Cs& cs);
  void await(const Cs& cs, core::TimePs deadline);
  void wait_for_completion(core::TimePs recorded, core::TimePs deadline);
  int wait_any(std::uint32_t ctx, const hl_wait_cs_in& in, hl_wait_cs_out& out);
  void on_completion(int vector);
  std::uint64_t chip_view(std::uint64_t host_physical) const {
    return props_.host_window + host_physical;
  }

  host::HostCpu& cpu_;
  host::HostMemory& memory_;
  IdentityUserMemory identity_;
  UserMemory* user_ = &identity_;
  PciFunction pci_;
  DeviceProperties props_;
  const QueueMap& map_;  // the family's ids
  core::RangeAllocator kernel_;
  PageTables tables_;
  core::RangeAllocator asids_;
  std::map<std::uint32_t, Context> contexts_;  // by context id
  std::map<std::uint64_t, Cb> cbs_;            // by handle
  std::uint64_t next_cb_id_ = 1;
  bool compute_open_ = false;
  std::uint64_t open_counter_ = 0;
  std::uint64_t last_open_ps_ = 0, last_period_ms_ = 0;
  std::uint32_t next_ctx_ = 1;
  // DRAM user space says it took (Gaudi1's driver only accounts: it has no DRAM MMU), in all
  // and by context.
  std::uint64_t dram_used_ = 0;
  std::uint32_t debug_ctx_ = 0;  // the context in debug mode, 0 for none
  // Refused submissions, as INFO CS_COUNTERS reports them: the device's and each context's.
  struct Drops {
    std::uint64_t out_of_mem = 0, queue_full = 0, validation = 0;
  };
  Drops drops_;
  std::map<std::uint32_t, Drops> ctx_drops_;
  std::map<std::uint32_t, std::uint64_t> ctx_dram_;
  std::map<std::uint32_t, Queue> queues_;                     // by uAPI queue id
  std::map<std::pair<std::uint32_t, std::uint64_t>, Cs> cs_;  // by context and sequence
  std::map<std::uint32_t, std::uint64_t> next_seq_;           // by context, from 1
  std::multimap<core::TimePs, std::pair<std::uint32_t, std::uint64_t>> deadlines_;
  sc_core::sc_event completed_;
  std::vector<core::TimePs> trace_lanes_;  // the end of each trace lane's last span
  std::shared_ptr<Watchdog> watchdog_;
  std::array<SyncStream, 8> sync_streams_;  // by host-facing queue id
  std::map<std::pair<std::uint32_t, std::uint32_t>, EncapsHandle> encaps_;  // by context, id
  std::map<std::uint32_t, std::uint32_t> next_encaps_;                      // by context, from 1
  std::vector<std::uint32_t> released_sobs_;  // W_S objects to clear before the next CS
  // The event queue's ring in host memory, the next entry's sequence number, the first error of
  // each kind since the compute node was opened, and the notifier events not yet collected.
  static constexpr std::uint32_t kEventEntries = 256;
  static constexpr int kEventVector = 8;  // after the host-facing queues' 0-7
  std::uint64_t event_ring_ = 0;
  std::vector<std::uint32_t> interrupts_;  // the MSI data words it handles
  std::uint32_t next_event_ = 0;
  struct ErrorRecords {
    bool razwi = false, page_fault = false, undefined_opcode = false;
    hl_info_razwi_event razwi_event{};
    hl_page_fault_info page_fault_event{};
    hl_info_undefined_opcode_event undefined_opcode_event{};
  };
  ErrorRecords errors_;
  std::uint64_t notifier_ = 0;
  bool submitting_ = false;  // a thread is queueing jobs (queue_jobs)
  sc_core::sc_event submitted_;
  std::uint32_t status_ = HL_DEVICE_STATUS_OPERATIONAL;
  std::uint32_t hard_resets_ = 0;
  bool resetting_ = false;
  sc_core::sc_event reset_done_;
  hl_info_cs_timeout_event last_timeout_{};
  std::int64_t last_error_open_ = 0;  // when the device was opened, at the last error (ns)
};

// An open node. Its calls return 0 or -errno, as the kernel's do.
class File {
 public:
  ~File();
  int ioctl(unsigned long request, void* arg);
  // The host physical address user space sees a CB at: `offset` the CB's handle, `length`
  // covering the same pages as the buffer; each CB is mapped once at a time.
  int mmap(std::uint64_t offset, std::uint64_t length, std::uint64_t& address);
  int munmap(std::uint64_t offset);
  bool control() const { return control_; }
  // The process the file belongs to, when it is not the device's (a podsim server's client):
  // before the file's first call.
  void set_user_memory(UserMemory& user);

 private:
  friend class Device;
  File(Device& device, bool control, std::uint32_t ctx, UserMemory& user)
      : device_(device), control_(control), ctx_(ctx), user_(&user) {}
  int info(void* arg);
  int cb(void* arg);
  int cs(void* arg);
  int wait_cs(void* arg);
  int cs_counters(void* args);
  int memory(void* arg);
  int debug(void* arg);
  int write_info(const void* args, const void* data, std::size_t size);

  Device& device_;
  bool control_;
  std::uint32_t ctx_;
  UserMemory* user_;
};

}  // namespace podsim::driver
