// Command submission and completion: the driver's queues, CS and WAIT_CS (device.h says what is
// captured).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <vector>

#include "core/kernel.h"
#include "core/trace.h"
#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"
#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/pcie/config_space.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::driver {
namespace {

constexpr std::uint32_t kRingLog2 = 8;  // 256 jobs in flight per queue
constexpr std::uint32_t kRingEntries = 1u << kRingLog2;
constexpr std::uint32_t kCqReady = 1u << 31;
constexpr std::uint64_t kPage = 4096;
// Host-facing queues: ids 0-7 in both families (Gaudi1's DMA 0 and 1, Gaudi2's PDMA 0 and 1,
// four streams each), completion queue and vector i for queue i.
constexpr std::uint32_t kExternalQueues = 8;
constexpr std::uint32_t kMsiDataBase = 0x4000;
// A CS's timeout unless it sets its own, and how long the context-switch (restore) CS may take:
// Linux's default (the timeout_locked module parameter, 30 s) [C13].
constexpr core::TimePs kSecondPs = 1000000000000ull;
constexpr core::TimePs kCsTimeoutPs = 30 * kSecondPs;
// A hard reset's duration: stopping the queues, resetting the engines, starting them again.
constexpr core::TimePs kResetPs =
    100000000000ull;  // 100 ms [U]  // + 0x100 x bus + vector: unique per device

// Blocks until a CS ends or `deadline`, in steps of at most an hour of simulated time (the
// kernel's time must not overflow on a wait that means forever).
void wait_until_event(sc_core::sc_event& event, core::TimePs deadline) {
  constexpr core::TimePs kHour = 3600ull * 1000000000000ull;
  sc_core::wait(sc_core::sc_time::from_value(std::min(deadline - core::now_ps(), kHour)), event);
}

// Now plus `count` units of `unit` picoseconds, saturating: a huge timeout means forever.
core::TimePs later(std::uint64_t count, std::uint64_t unit) {
  const core::TimePs now = core::now_ps(), never = ~core::TimePs{0};
  if (count > (never - now) / unit) return never;
  return now + count * unit;
}
std::uint32_t msi_data(int bus, int vector) {
  return kMsiDataBase + 0x100u * static_cast<std::uint32_t>(bus) +
         static_cast<std::uint32_t>(vector);
}

std::vector<std::uint8_t> completion_packets(std::uint64_t cq_entry, std::uint32_t value,
                                             std::uint64_t msi) {
  chip::spec::Packet entry("MSG_PROT"), interrupt("MSG_PROT");
  entry.set("addr", cq_entry).set("value", value);
  entry.barriers(true, true, true);  // after everything the buffer started has finished
  interrupt.set("addr", msi).set("value", 1);
  interrupt.barriers(false, true, false);
  return chip::spec::PacketCodec().encode({entry, interrupt});
}

}  // namespace

// One MSI-X vector per completion queue, its data word unique to this device on the host.
void Device::enable_msix() {
  const std::uint64_t table = pci_.bar(pci_.msix_table_bar).address + pci_.msix_table_offset;
  for (std::uint32_t v = 0; v < kExternalQueues && static_cast<int>(v) < pci_.msix_vectors; ++v) {
    const std::uint32_t words[4] = {0xFEE00000u, 0, msi_data(pci_.bus, static_cast<int>(v)), 0};
    for (int w = 0; w < 4; ++w) {  // the table takes dword accesses
      if (cpu_.write(table + 16ull * v + 4ull * w, &words[w], 4) != tlm::TLM_OK_RESPONSE) {
        throw std::runtime_error(
            fmt::format("PCI bus {}: the MSI-X table did not take a write", pci_.bus));
      }
    }
    cpu_.on_interrupt(words[2], [this, v] { on_completion(static_cast<int>(v)); });
    interrupts_.push_back(words[2]);
  }
  if (kEventVector < pci_.msix_vectors) {
    const std::uint32_t words[4] = {0xFEE00000u, 0, msi_data(pci_.bus, kEventVector), 0};
    for (int w = 0; w < 4; ++w) {
      cpu_.write(table + 16ull * kEventVector + 4ull * w, &words[w], 4);
    }
    cpu_.on_interrupt(words[2], [this] { on_event(); });
    interrupts_.push_back(words[2]);
  }
  std::uint32_t control = 0;
  cpu_.config_read32(pci_.bus, pcie::reg::kMsixCapability, control);
  cpu_.config_write32(pci_.bus, pcie::reg::kMsixCapability,
                      control | std::uint32_t{pcie::reg::kMsixEnable} << 16);
}

// What the driver sets up at probe and again after a reset: the QMANs and the MMU.
void Device::init_hardware() {
  init_qmans();
  init_event_queue();
  write_register(PODSIM_GAUDI1_MMU_UP_MMU_ENABLE(PODSIM_GAUDI1_MMU_UP_BASE), 1);
}

// Every QMAN as Linux's hardware init leaves it [C9]: MSG_SHORT bases 0 and 1 (E_N monitor
// payloads and sync objects) on every CP, 2 and 3 (W_S) where sync streams run (the PCI DMA
// QMANs 0 and 1, and DMA 5 and TPC 7 for collectives),
// LIN_DMA's engine register offsets on the DMA QMANs, and all CPs enabled.
void Device::init_qmans() {
  std::vector<std::pair<std::uint64_t, bool>> qmans;  // base, a DMA engine's
  for (int i = 0; i < props_.dma_engines; ++i)
    qmans.emplace_back(chip::Chip::dma_qman_base(i), true);
  for (int i = 0; i < props_.mme_engines; ++i)
    qmans.emplace_back(chip::Chip::mme_qman_base(i), false);
  for (int i = 0; i < props_.tpc_cores; ++i)
    qmans.emplace_back(chip::Chip::tpc_qman_base(i), false);
  const std::uint64_t sync_stream[] = {chip::Chip::dma_qman_base(0), chip::Chip::dma_qman_base(1),
                                       chip::Chip::dma_qman_base(5), chip::Chip::tpc_qman_base(7)};
  const auto set64 = [this](std::uint64_t lo, std::uint64_t hi, std::uint64_t value) {
    write_register(lo, static_cast<std::uint32_t>(value));
    write_register(hi, static_cast<std::uint32_t>(value >> 32));
  };
  for (const auto& [qman, dma] : qmans) {
    const bool sync =
        std::find(std::begin(sync_stream), std::end(sync_stream), qman) != std::end(sync_stream);
    for (int cp = 0; cp < static_cast<int>(PODSIM_GAUDI1_QMAN_CPS); ++cp) {
      set64(PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_LO(qman, cp),
            PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_HI(qman, cp), PODSIM_GAUDI1_MSG_SHORT_BASE0);
      set64(PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_LO(qman, cp),
            PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_HI(qman, cp), PODSIM_GAUDI1_MSG_SHORT_BASE1);
      if (sync) {
        set64(PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_LO(qman, cp),
              PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_HI(qman, cp), PODSIM_GAUDI1_MSG_SHORT_BASE2);
        set64(PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_LO(qman, cp),
              PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_HI(qman, cp), PODSIM_GAUDI1_MSG_SHORT_BASE3);
      }
      if (!dma) continue;
      write_register(PODSIM_GAUDI1_QMAN_CP_LDMA_TSIZE_OFFSET(qman, cp),
                     PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET);
      write_register(PODSIM_GAUDI1_QMAN_CP_LDMA_SRC_BASE_LO_OFFSET(qman, cp),
                     PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET);
      write_register(PODSIM_GAUDI1_QMAN_CP_LDMA_DST_BASE_LO_OFFSET(qman, cp),
                     PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET);
    }
    write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG0(qman),
                   podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
  }
}

// The queue's engine must be one the chip has: the family's queue ids name all its engines,
// and a preset may have fewer (or, like the NICs', queues the model does not have).
Device::Queue* Device::queue(std::uint32_t id) {
  if (auto it = queues_.find(id); it != queues_.end()) return &it->second;
  const std::optional<QueueRef> ref = map_.queue(id);
  if (!ref || ref->engine.index >= engines(ref->engine.kind)) return nullptr;
  Queue q;
  q.qman = qman_base(ref->engine);
  q.stream = ref->stream;
  q.external = ref->host_facing;
  const auto ring = kernel_.allocate(kRingEntries * PODSIM_GAUDI1_PQ_ENTRY_SIZE, kPage);
  const auto cq = q.external ? kernel_.allocate(kRingEntries * 4, kPage) : ring;
  if (!ring || !cq) return nullptr;
  q.ring = *ring;
  q.cq = *cq;
  q.vector = q.external ? static_cast<int>(id) : -1;
  if (q.external) {
    const std::vector<std::uint8_t> zeros(kRingEntries * 4, 0);
    memory_.backing().write(q.cq, zeros.data(), zeros.size());
  }
  set_up_ring(q);
  return &queues_.emplace(id, q).first->second;
}

int Device::engines(EngineKind kind) const {
  switch (kind) {
    case EngineKind::kDma:
      return props_.dma_engines;
    case EngineKind::kMme:
      return props_.mme_engines;
    case EngineKind::kTpc:
      break;
  }
  return props_.tpc_cores;
}

void Device::set_up_ring(const Queue& q) {
  write_register(PODSIM_GAUDI1_QMAN_PQ_BASE_LO(q.qman, q.stream),
                 static_cast<std::uint32_t>(chip_view(q.ring)));
  write_register(PODSIM_GAUDI1_QMAN_PQ_BASE_HI(q.qman, q.stream),
                 static_cast<std::uint32_t>(chip_view(q.ring) >> 32));
  write_register(PODSIM_GAUDI1_QMAN_PQ_SIZE(q.qman, q.stream), kRingLog2);
}

std::uint32_t Device::in_flight(const Queue& q) {
  if (q.external) return static_cast<std::uint32_t>(q.pending.size());
  return chip::pq_pending(q.pi, q.ci, kRingLog2);
}

int Device::submit(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out) {
  constexpr std::uint32_t kUnsupported =
      HL_CS_FLAGS_ENGINE_CORE_COMMAND | HL_CS_FLAGS_ENGINES_COMMAND;  // Gaudi2's
  constexpr std::uint32_t kTypes = HL_CS_FLAGS_SIGNAL | HL_CS_FLAGS_WAIT |
                                   HL_CS_FLAGS_COLLECTIVE_WAIT | HL_CS_FLAGS_RESERVE_SIGNALS_ONLY |
                                   HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY |
                                   HL_CS_FLAGS_ENGINE_CORE_COMMAND | HL_CS_FLAGS_ENGINES_COMMAND;
  if (std::any_of(std::begin(in.pad), std::end(in.pad), [](__u8 b) { return b != 0; })) {
    return -EINVAL;
  }
  const std::uint32_t type = in.cs_flags & kTypes;
  if ((type & (type - 1)) != 0) return -EINVAL;  // one kind of CS at a time
  if (in.cs_flags & kUnsupported) return -EOPNOTSUPP;
  // Collective waits need the NIC ports, which Linux 6.4's driver leaves disabled [C13].
  if (type == HL_CS_FLAGS_COLLECTIVE_WAIT) return -EINVAL;
  if (type == HL_CS_FLAGS_RESERVE_SIGNALS_ONLY) return reserve_signals(ctx, in, out);
  if (type == HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY) return unreserve_signals(ctx, in, out);
  const bool staged = (in.cs_flags & HL_CS_FLAGS_STAGED_SUBMISSION) != 0;
  if (staged && type != 0) return -EINVAL;  // stages are default CSs
  const bool sync_stream = type == HL_CS_FLAGS_SIGNAL || type == HL_CS_FLAGS_WAIT;
  // A context's first CS, or one that forces it, first runs the restore chunks as a CS of their
  // own and waits for it, as Linux's context switch does [C13]; otherwise they are ignored.
  const bool restore = (in.cs_flags & HL_CS_FLAGS_FORCE_RESTORE) || !next_seq_.count(ctx);
  const std::uint32_t restores = restore ? in.num_chunks_restore : 0;
  if (in.num_chunks_execute == 0 || in.num_chunks_execute > HL_MAX_JOBS_PER_CS ||
      restores > HL_MAX_JOBS_PER_CS || (sync_stream && in.num_chunks_execute != 1)) {
    return -EINVAL;
  }
  if ((restores > 0 && in.chunks_restore == 0) || in.chunks_execute == 0) return -EFAULT;
  std::vector<hl_cs_chunk> restore_chunks(restores), execute(in.num_chunks_execute);
  UserMemory& user = *contexts_.at(ctx).user;
  if ((restores > 0 && user.copy_from(restore_chunks.data(), in.chunks_restore,
                                      restores * sizeof(hl_cs_chunk)) != 0) ||
      user.copy_from(execute.data(), in.chunks_execute, execute.size() * sizeof(hl_cs_chunk)) !=
          0) {
    return -EFAULT;
  }
  std::uint64_t seq = 0;
  if (restores > 0) {
    if (const int rc = queue_jobs(ctx, restore_chunks, kCsTimeoutPs, false, seq); rc != 0) {
      return rc;
    }
    const Cs& switched = cs_.at({ctx, seq});
    await(switched, core::now_ps() + kCsTimeoutPs);
    if (!ended(switched)) return -EBUSY;
  }
  const core::TimePs timeout = (in.cs_flags & HL_CS_FLAGS_CUSTOM_TIMEOUT)
                                   ? later(in.timeout, kSecondPs) - core::now_ps()
                                   : kCsTimeoutPs;
  const bool skip_reset = (in.cs_flags & HL_CS_FLAGS_SKIP_RESET_ON_TIMEOUT) != 0;
  if (type == HL_CS_FLAGS_SIGNAL) return signal(ctx, execute.front(), timeout, out);
  if (type == HL_CS_FLAGS_WAIT) {
    return (in.cs_flags & HL_CS_FLAGS_ENCAP_SIGNALS)
               ? wait_for_encaps(ctx, execute.front(), timeout, out)
               : wait_for_signal(ctx, execute.front(), timeout, out);
  }
  const int rc = staged ? submit_stage(ctx, in, execute, timeout, skip_reset, seq)
                        : queue_jobs(ctx, execute, timeout, skip_reset, seq);
  if (rc != 0) return rc;
  out = {};
  out.seq = seq;
  out.status = HL_CS_STATUS_SUCCESS;
  return 0;
}

// A stage of a staged submission [C13]: the first's sequence names the submission (later stages
// give it in in.seq, and get it back); only the first arms a timeout; every stage but the last
// is held until the last ends, so that waiting for the submission's sequence waits for it all;
// a stage before the last may hold internal jobs only. The first may carry encapsulated
// signals reserved before (ENCAP_SIGNALS with the reservation's handle).
int Device::submit_stage(std::uint32_t ctx, const hl_cs_in& in,
                         const std::vector<hl_cs_chunk>& chunks, core::TimePs timeout,
                         bool skip_reset, std::uint64_t& seq) {
  const bool first = (in.cs_flags & HL_CS_FLAGS_STAGED_SUBMISSION_FIRST) != 0;
  const bool last = (in.cs_flags & HL_CS_FLAGS_STAGED_SUBMISSION_LAST) != 0;
  std::uint64_t head_seq = 0;
  if (!first) {
    const auto head = cs_.find({ctx, in.seq});
    if (head == cs_.end() || !head->second.staged_first || head->second.staged_closed ||
        head->second.done) {
      return -EINVAL;
    }
    head_seq = in.seq;
  }
  std::uint32_t handle = 0;
  if (first && (in.cs_flags & HL_CS_FLAGS_ENCAP_SIGNALS)) {
    handle = in.encaps_sig_handle_id;
    const auto h = encaps_.find({ctx, handle});
    if (h == encaps_.end() || h->second.cs_seq != ~0ull) return -EINVAL;
  }
  // The stage's place in the submission is recorded before its jobs can end.
  const auto prepare = [&](Cs& cs) {
    const std::uint64_t head = first ? cs.seq : head_seq;
    if (first) {
      cs.staged_first = true;
      cs.encaps = handle;
      if (handle != 0) encaps_.at({ctx, handle}).cs_seq = cs.seq;
    } else {
      cs.staged = head;
      if (!last) cs_.at({ctx, head}).stages.push_back(cs.seq);
    }
    if (!last) {
      ++cs.remaining;  // held until the last stage ends
    } else {
      cs.staged_last = !first;
      cs.staged = head;
      cs_.at({ctx, head}).staged_closed = true;
    }
  };
  std::uint64_t own = 0;
  if (const int rc = queue_jobs(ctx, chunks, first ? timeout : kNoDeadline, skip_reset, own,
                                nullptr, !last, prepare);
      rc != 0) {
    return rc;
  }
  if (first) head_seq = own;
  seq = head_seq;
  return 0;
}

int Device::queue_jobs(std::uint32_t ctx, const std::vector<hl_cs_chunk>& chunks,
                       core::TimePs timeout, bool skip_reset, std::uint64_t& seq,
                       const std::vector<std::uint8_t>* driver_cb, bool internal_only,
                       const std::function<void(Cs&)>& prepare) {
  // One submission at a time, as Linux's queue locks make it: a doorbell carries the queue's
  // producer index, and another thread's write overtaking it would move the index back.
  while (submitting_) sc_core::wait(submitted_);
  submitting_ = true;
  struct Unlock {
    Device& d;
    ~Unlock() {
      d.submitting_ = false;
      d.submitted_.notify();
    }
  } unlock{*this};
  // Everything is checked before anything is queued: a bad CS changes nothing.
  struct Planned {
    Queue* queue;
    std::uint64_t address;  // host physical (a kernel CB) or device address (a user CB)
    std::uint32_t size;
  };
  std::vector<Planned> plan;
  std::map<Queue*, std::uint32_t> per_queue;
  std::uint32_t external = 0;
  for (const hl_cs_chunk& c : chunks) {
    Queue* q = queue(c.queue_index);
    if (q == nullptr || (c.cb_size == 0 && driver_cb == nullptr)) return -EINVAL;
    std::uint64_t address = c.cb_handle;
    if (q->external && driver_cb == nullptr) {
      const Cb* cb = find_cb(c.cb_handle, ctx);
      if (cb == nullptr || c.cb_size > cb->requested) return -EINVAL;
      address = cb->address;
    }
    external += q->external ? 1 : 0;
    if (in_flight(*q) + ++per_queue[q] > kRingEntries) return -EAGAIN;
    plan.push_back({q, address, c.cb_size});
  }
  if (external == 0 && !internal_only) return -EINVAL;  // nothing would say it completed

  seq = next_seq_.count(ctx) ? next_seq_[ctx] : 1;
  next_seq_[ctx] = seq + 1;
  Cs& cs = cs_[{ctx, seq}];
  cs.ctx = ctx;
  cs.seq = seq;
  cs.submitted = core::now_ps();
  cs.remaining = external;
  cs.skip_reset = skip_reset;
  cs.deadline = timeout == kNoDeadline
                    ? deadlines_.end()
                    : deadlines_.emplace(core::now_ps() + timeout, std::make_pair(ctx, seq));
  if (prepare) prepare(cs);
  watchdog_->wake.notify(sc_core::SC_ZERO_TIME);
  std::vector<Queue*> rung;
  for (const Planned& p : plan) {
    Queue& q = *p.queue;
    const std::uint32_t slot = chip::pq_slot(q.pi, kRingLog2);
    chip::PqEntry entry;
    entry.address = p.address;
    entry.length = p.size;
    if (q.external) {
      // The driver's copy: the user's packets (or the driver's own), then the completion entry
      // and the interrupt.
      std::vector<std::uint8_t> bytes(p.size);
      if (driver_cb != nullptr) {
        bytes = *driver_cb;
      } else {
        memory_.backing().read(p.address, bytes.data(), bytes.size());
      }
      const auto tail =
          completion_packets(chip_view(q.cq + 4ull * slot), kCqReady | slot,
                             PODSIM_GAUDI1_PCIE_MSI_BASE + 4ull * static_cast<unsigned>(q.vector));
      bytes.insert(bytes.end(), tail.begin(), tail.end());
      const std::uint64_t size = (bytes.size() + kPage - 1) / kPage * kPage;
      const auto patched = kernel_.allocate(size, kPage);
      if (!patched) return -ENOMEM;
      memory_.backing().write(*patched, bytes.data(), bytes.size());
      q.pending.push_back({ctx, seq, slot, *patched, size});
      entry.address = chip_view(*patched);
      entry.length = static_cast<std::uint32_t>(bytes.size());
    }
    if (!q.external) cs.internal_jobs.push_back(&q);
    std::uint8_t raw[PODSIM_GAUDI1_PQ_ENTRY_SIZE];
    chip::encode_pq_entry(entry, raw);
    memory_.backing().write(q.ring + sizeof raw * slot, raw, sizeof raw);
    q.pi = chip::pq_next(q.pi, kRingLog2);
    if (std::find(rung.begin(), rung.end(), &q) == rung.end()) rung.push_back(&q);
  }
  for (Queue* q : rung) write_register(PODSIM_GAUDI1_QMAN_PQ_PI(q->qman, q->stream), q->pi);
  return 0;
}

// A CS ends (completed, timed out or aborted): its waiters wake and its deadline goes.
void Device::end(Cs& cs) {
  for (Queue* q : cs.internal_jobs) q->ci = chip::pq_next(q->ci, kRingLog2);
  cs.internal_jobs.clear();
  for (const std::uint32_t sob : cs.sob_refs) release_sob(sob);
  cs.sob_refs.clear();
  if (cs.encaps != 0) {  // the reservation it carried ends with it
    const auto h = encaps_.find({cs.ctx, cs.encaps});
    if (h != encaps_.end()) {
      release_sob(h->second.sob);
      encaps_.erase(h);
    }
    cs.encaps = 0;
  }
  if (cs.staged_last) release_stages(cs);
  cs.done = true;
  cs.completed = core::now_ps();
  if (core::trace_writer().enabled()) trace(cs);
  if (cs.deadline != deadlines_.end()) deadlines_.erase(cs.deadline);
  cs.deadline = deadlines_.end();
  core::notify_now(completed_);
  core::notify_now(watchdog_->wake);
}

// The last stage has ended: the stages before it, held until now, end as it did.
void Device::release_stages(const Cs& last) {
  const auto head = cs_.find({last.ctx, last.staged});
  if (head == cs_.end()) return;
  std::vector<std::uint64_t> held = head->second.stages;
  held.push_back(head->second.seq);
  for (const std::uint64_t seq : held) {
    Cs& stage = cs_.at({last.ctx, seq});
    if (stage.done) continue;
    stage.timed_out |= last.timed_out;
    stage.aborted |= last.aborted;
    if (--stage.remaining == 0) end(stage);
  }
}

void Device::watch(const std::shared_ptr<Watchdog>& watchdog) {
  while (Device* d = watchdog->device) {
    if (d->deadlines_.empty()) {
      sc_core::wait(watchdog->wake);
      continue;
    }
    const auto first = d->deadlines_.begin();
    const core::TimePs at = first->first, now = core::now_ps();
    if (at > now) {
      sc_core::wait(sc_core::sc_time::from_value(at - now), watchdog->wake);
      continue;
    }
    const auto [ctx, seq] = first->second;
    d->time_out(ctx, seq);
  }
}

void Device::time_out(std::uint32_t ctx, std::uint64_t seq) {
  Cs& cs = cs_.at({ctx, seq});
  cs.timed_out = true;
  last_timeout_.timestamp = static_cast<__s64>(core::now_ps() / 1000);
  last_timeout_.seq = seq;
  last_error_open_ = static_cast<std::int64_t>(last_open_ps_ / 1000);
  notifier_ |= HL_NOTIFIER_EVENT_CS_TIMEOUT;
  // Its waiters learn of the timeout once the reset is over, as Linux completes the CS in the
  // reset's rollback.
  if (cs.skip_reset) return end(cs);
  deadlines_.erase(cs.deadline);
  cs.deadline = deadlines_.end();
  hard_reset();
}

// As Linux's hard reset after a CS timeout, for the queues the model has: the QMANs are stopped
// and flushed, every job still on a queue is dropped and its CS aborted, and the QMANs run again.
void Device::hard_reset() {
  status_ = HL_DEVICE_STATUS_IN_RESET;
  notifier_ |= HL_NOTIFIER_EVENT_DEVICE_RESET;
  resetting_ = true;
  std::vector<std::uint64_t> qmans;
  for (const auto& [id, q] : queues_) {
    if (std::find(qmans.begin(), qmans.end(), q.qman) == qmans.end()) qmans.push_back(q.qman);
  }
  const std::uint32_t halt = podsim_gaudi1_make_qman_glbl_cfg1(0xF, 0x1F, 0x1F, 0xF, 0x1F, 0x1F);
  for (const std::uint64_t qman : qmans) write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG1(qman), halt);
  core::sleep_until(core::now_ps() + kResetPs);
  for (auto& [id, q] : queues_) {
    for (const Job& job : q.pending) kernel_.release(job.patched, job.patched_size);
    q.pending.clear();
    if (q.external) {
      const std::vector<std::uint8_t> zeros(kRingEntries * 4, 0);
      memory_.backing().write(q.cq, zeros.data(), zeros.size());
    }
  }
  for (const std::uint64_t qman : qmans) write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG1(qman), 0);
  // The hardware comes back as the driver's init leaves it, whatever a buffer wrote meanwhile.
  init_hardware();
  for (const auto& [id, q] : queues_) set_up_ring(q);
  reset_sync_streams();
  ++hard_resets_;
  status_ = HL_DEVICE_STATUS_OPERATIONAL;
  // Last, so that the waiters it wakes find the device working.
  for (auto& [key, cs] : cs_) {
    if (cs.done) continue;
    cs.aborted = !cs.timed_out;
    cs.sob_refs.clear();  // the sync streams started again
    end(cs);
  }
  for (auto& [id, q] : queues_) q.ci = q.pi;  // flushed
  resetting_ = false;
  reset_done_.notify();
}

// The completion queue of `vector`'s queue: every entry marked ready completes its job.
void Device::on_completion(int vector) {
  Queue& q = queues_.at(static_cast<std::uint32_t>(vector));
  while (!q.pending.empty()) {
    const Job& job = q.pending.front();
    std::uint32_t entry = 0;
    memory_.backing().read(q.cq + 4ull * job.slot, &entry, 4);
    if (!(entry & kCqReady)) break;
    const std::uint32_t cleared = 0;
    memory_.backing().write(q.cq + 4ull * job.slot, &cleared, 4);
    kernel_.release(job.patched, job.patched_size);
    Cs& cs = cs_.at({job.ctx, job.seq});
    if (--cs.remaining == 0 && !cs.done) end(cs);
    q.pending.pop_front();
  }
}

// A span per CS on the host's driver track of this device; CSs in flight together take lanes
// of their own (a lane holds spans that follow each other, as a trace's row must).
void Device::trace(const Cs& cs) {
  std::size_t lane = 0;
  while (lane < trace_lanes_.size() && trace_lanes_[lane] > cs.submitted) ++lane;
  if (lane == trace_lanes_.size()) trace_lanes_.push_back(0);
  trace_lanes_[lane] = cs.completed;
  core::TraceWriter& writer = core::trace_writer();
  const core::TrackId track =
      writer.track(fmt::format("{}.driver.bus{}_cs{}", cpu_.name(), pci_.bus, lane));
  writer.span(track,
              fmt::format("CS {}{}", cs.seq,
                          cs.timed_out ? " (timed out)"
                          : cs.aborted ? " (aborted)"
                                       : ""),
              cs.submitted, cs.completed);
}

bool Device::ended(const Cs& cs) { return cs.done && cs.completed <= core::now_ps(); }

// The interrupt handler records a completion at the chip's time, which may run ahead of the
// kernel's: a waiter sleeps until such a `recorded` completion (its wake-up may have been merged
// into an earlier one), else until the next completion is notified; never past `deadline`.
void Device::wait_for_completion(core::TimePs recorded, core::TimePs deadline) {
  if (recorded < deadline) {
    core::sleep_until(recorded);
  } else {
    wait_until_event(completed_, deadline);
  }
}

void Device::await(const Cs& cs, core::TimePs deadline) {
  while (!ended(cs) && core::now_ps() < deadline) {
    wait_for_completion(cs.done ? cs.completed : kNoDeadline, deadline);
  }
}

int Device::wait(std::uint32_t ctx, const hl_wait_cs_in& in, hl_wait_cs_out& out) {
  if (in.flags & HL_WAIT_CS_FLAGS_INTERRUPT) return -EPERM;  // Gaudi1 has no user interrupts
  if (in.flags & HL_WAIT_CS_FLAGS_MULTI_CS) return wait_any(ctx, in, out);
  const auto next = next_seq_.find(ctx);
  if (in.seq == 0 || next == next_seq_.end() || in.seq >= next->second) return -EINVAL;
  const auto it = cs_.find({ctx, in.seq});
  out = {};
  if (it == cs_.end()) {  // completed long ago and forgotten
    out.status = HL_WAIT_CS_STATUS_COMPLETED;
    out.flags = HL_WAIT_CS_STATUS_FLAG_GONE;
    return 0;
  }
  await(it->second, later(in.timeout_us, 1000000ull));
  // A CS that timed out says so from its deadline on, while the reset it started still runs.
  if (it->second.timed_out) {
    out.status = HL_WAIT_CS_STATUS_TIMEDOUT;
    return -ETIMEDOUT;
  }
  if (it->second.aborted) {
    out.status = HL_WAIT_CS_STATUS_ABORTED;
    return -EIO;
  }
  if (!ended(it->second)) {
    out.status = HL_WAIT_CS_STATUS_BUSY;
    return 0;
  }
  out.status = HL_WAIT_CS_STATUS_COMPLETED;
  out.timestamp_nsec = static_cast<__s64>(it->second.completed / 1000);
  out.flags = HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD;
  return 0;
}

// MULTI_CS: until any of up to 32 CSs has ended, or the timeout; a bit per ended (or forgotten)
// CS, the earliest completion time [C13].
int Device::wait_any(std::uint32_t ctx, const hl_wait_cs_in& in, hl_wait_cs_out& out) {
  if (std::any_of(std::begin(in.pad), std::end(in.pad), [](__u8 b) { return b != 0; }) ||
      in.seq_arr_len == 0 || in.seq_arr_len > HL_WAIT_MULTI_CS_LIST_MAX_LEN) {
    return -EINVAL;
  }
  if (in.seq == 0) return -EFAULT;
  std::vector<std::uint64_t> seqs(in.seq_arr_len);
  if (contexts_.at(ctx).user->copy_from(seqs.data(), in.seq, seqs.size() * sizeof seqs[0]) != 0)
    return -EFAULT;
  const auto next = next_seq_.find(ctx);
  for (const std::uint64_t seq : seqs) {
    if (seq == 0 || next == next_seq_.end() || seq >= next->second) return -EINVAL;
  }
  const core::TimePs deadline = later(in.timeout_us, 1000000ull);
  std::uint32_t map = 0;
  core::TimePs earliest = ~core::TimePs{0};
  for (;;) {
    core::TimePs recorded = deadline;  // the earliest completion still ahead of now
    for (std::size_t i = 0; i < seqs.size(); ++i) {
      const auto it = cs_.find({ctx, seqs[i]});
      if (it != cs_.end() && it->second.done && !ended(it->second))
        recorded = std::min(recorded, it->second.completed);
      if (it != cs_.end() && !ended(it->second)) continue;
      if (it != cs_.end() && it->second.timed_out) return -ETIMEDOUT;
      if (it != cs_.end() && it->second.aborted) return -EIO;
      map |= 1u << i;
      if (it != cs_.end()) earliest = std::min(earliest, it->second.completed);
    }
    if (map != 0 || core::now_ps() >= deadline) break;
    wait_for_completion(recorded, deadline);
  }
  out = {};
  out.status = map != 0 ? HL_WAIT_CS_STATUS_COMPLETED : HL_WAIT_CS_STATUS_BUSY;
  out.cs_completion_map = map;
  if (earliest != ~core::TimePs{0}) {
    out.flags = HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD;
    out.timestamp_nsec = static_cast<__s64>(earliest / 1000);
  } else if (map != 0) {
    out.flags = HL_WAIT_CS_STATUS_FLAG_GONE;
  }
  return 0;
}

int File::cs(void* arg) {
  auto& args = *static_cast<hl_cs_args*>(arg);
  const hl_cs_in in = args.in;
  const int rc = device_.submit(ctx_, in, args.out);
  // What the kernel counts as dropped: by the reason, for the device and for the context.
  std::uint64_t Device::Drops::*reason = nullptr;
  if (rc == -EINVAL) reason = &Device::Drops::validation;
  if (rc == -EAGAIN) reason = &Device::Drops::queue_full;
  if (rc == -ENOMEM) reason = &Device::Drops::out_of_mem;
  if (reason != nullptr) {
    ++(device_.drops_.*reason);
    ++(device_.ctx_drops_[ctx_].*reason);
  }
  return rc;
}

int File::cs_counters(void* args) {
  const Device::Drops& all = device_.drops_;
  const Device::Drops& mine = device_.ctx_drops_[ctx_];
  hl_info_cs_counters c{};
  c.total_out_of_mem_drop_cnt = all.out_of_mem;
  c.ctx_out_of_mem_drop_cnt = mine.out_of_mem;
  c.total_queue_full_drop_cnt = all.queue_full;
  c.ctx_queue_full_drop_cnt = mine.queue_full;
  c.total_validation_drop_cnt = all.validation;
  c.ctx_validation_drop_cnt = mine.validation;
  return write_info(args, &c, sizeof c);
}

int File::wait_cs(void* arg) {
  auto& args = *static_cast<hl_wait_cs_args*>(arg);
  const hl_wait_cs_in in = args.in;
  return device_.wait(ctx_, in, args.out);
}

}  // namespace podsim::driver
