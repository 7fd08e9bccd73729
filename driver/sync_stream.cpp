// Sync streams: SIGNAL and WAIT CSs on the host-facing queues, as Linux's Gaudi1 driver builds
// them [C13, C14]. Queue q (DMA 0 and 1, streams 0-3: ids 0-7) signals W_S sync objects 128 + 2q
// and 129 + 2q in turn and waits through W_S monitor 64 + q on fence counter 2 of its stream.
// A signal CS's buffer adds 1 to the queue's current object, whose value after it is what a
// WAIT waits for; before a value would reach 2^15 the queue moves to its other object, which
// must be free (every CS that used it ended, so that it was cleared). A WAIT on a signal that has
// completed, or on one too old to know, queues nothing: the call succeeds with sequence
// ULLONG_MAX.
#include <cerrno>
#include <vector>

#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::driver {
namespace {

constexpr std::uint32_t kSyncStreams = 8;
constexpr std::uint32_t kSobLimit = 1u << 15;
// What MSG_SHORT's bases 2 and 3 reach on the host-facing QMANs: W_S monitors and objects.
constexpr std::uint32_t kMonitorBase = 2, kSobBase = 3;
constexpr std::uint32_t kWaitFence = 2;

}  // namespace

// The sync streams' objects and monitors: the last 16 of the driver's W_S objects and its last 8
// monitors (chip.resources.driver), as Linux keeps W_S 128-143 and monitors 64-71 [C1].
std::uint32_t Device::stream_sob_base() const {
  const chip::ResourceShare& d = props_.resources.driver;
  return (d.first_sob + d.sobs) % chip::kObjectsPerManager - 2 * kSyncStreams;
}

std::uint32_t Device::stream_monitor_base() const {
  const chip::ResourceShare& d = props_.resources.driver;
  return d.first_monitor + d.monitors - kSyncStreams;
}

std::uint32_t Device::sob_of(std::uint32_t queue, int which) const {
  return stream_sob_base() + 2 * queue + static_cast<std::uint32_t>(which);
}

namespace {

// An object's address as user space writes it: from the configuration space's base.
__u32 sob_offset(std::uint32_t sob) {
  return static_cast<__u32>(
      PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE, sob) -
      PODSIM_GAUDI1_CFG_BASE);
}

chip::spec::Packet msg_short(std::uint32_t base, std::uint64_t offset, std::uint32_t value) {
  chip::spec::Packet p("MSG_SHORT");
  p.set("base", base).set("msg_addr_offset", offset).set("value", value);
  return p;
}

// Monitor `mon` writes 1 to `fence` once `sob` reaches `value`; the FENCE then waits for it.
std::vector<std::uint8_t> wait_packets(std::uint32_t mon, std::uint64_t fence, std::uint32_t sob,
                                       std::uint32_t value) {
  const auto array = [mon](std::uint64_t offset) {
    return offset - PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL_OFFSET + 4ull * mon;
  };
  std::vector<chip::spec::Packet> p{
      msg_short(kMonitorBase, array(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL_OFFSET),
                static_cast<std::uint32_t>(fence)),
      msg_short(kMonitorBase, array(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH_OFFSET),
                static_cast<std::uint32_t>(fence >> 32)),
      msg_short(kMonitorBase, array(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA_OFFSET), 1),
      msg_short(kMonitorBase, array(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM_OFFSET),
                chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                    sob, value, chip::spec::MonitorOp::kGreaterOrEqual))),
      chip::spec::Packet("FENCE")};
  for (int i = 0; i < 3; ++i) p[i].barriers(false, true, false);
  p[3].barriers(false, true, true);
  p[4].set("id", kWaitFence).set("target_val", 1).set("dec_val", 1).barriers(false, true, true);
  return chip::spec::PacketCodec().encode(p);
}

}  // namespace

int Device::signal(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                   hl_cs_out& out) {
  const std::uint32_t q = chunk.queue_index;
  if (q >= kSyncStreams) return -EINVAL;
  clear_released_sobs();
  SyncStream& stream = sync_streams_[q];
  const int used = stream.current;
  const std::uint32_t value = stream.next_value;
  const bool last = value + 1 >= kSobLimit;  // the next signal goes to the other object
  if (last && stream.users[1 - used] != 0) return -EINVAL;  // which is still in use
  chip::spec::Packet add =
      msg_short(kSobBase, 4ull * sob_of(q, used), chip::spec::encode_sob_write({1, true, false}));
  add.barriers(true, true, true);
  const std::vector<std::uint8_t> packets = chip::spec::PacketCodec().encode({add});
  std::uint64_t seq = 0;
  const auto prepare = [&](Cs& cs) {  // before the job can end
    cs.signal = true;
    cs.sob = sob_of(q, used);
    cs.sob_value = value;
    ++stream.users[used];
    cs.sob_refs.push_back(sob_of(q, used));
  };
  if (const int rc = queue_jobs(ctx, {chunk}, timeout, false, seq, &packets, false, prepare);
      rc != 0) {
    return rc;
  }
  if (last) {
    stream.current = 1 - used;
    stream.next_value = 1;
  } else {
    stream.next_value = value + 1;
  }
  out = {};
  out.seq = seq;
  out.status = HL_CS_STATUS_SUCCESS;
  out.sob_base_addr_offset = sob_offset(sob_of(q, stream.current));
  out.sob_count_before_submission = static_cast<__u16>(stream.next_value - 1);
  return 0;
}

int Device::queue_wait(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                       std::uint32_t sob, std::uint32_t value, hl_cs_out& out) {
  out = {};
  out.status = HL_CS_STATUS_SUCCESS;
  out.seq = ~0ull;
  clear_released_sobs();
  Queue* waiting = queue(chunk.queue_index);
  if (waiting == nullptr) return -EINVAL;
  const std::uint64_t fence = PODSIM_GAUDI1_QMAN_CP_FENCE2_RDATA(waiting->qman, waiting->stream);
  const std::vector<std::uint8_t> packets =
      wait_packets(stream_monitor_base() + chunk.queue_index, fence, sob, value);
  std::uint64_t seq = 0;
  const auto prepare = [&](Cs& cs) {  // before the job can end
    ++sync_streams_[(sob - stream_sob_base()) / 2].users[(sob - stream_sob_base()) % 2];
    cs.sob_refs.push_back(sob);
  };
  // A wait that cannot be queued is dropped, as Linux rolls it back: nothing to wait for.
  if (queue_jobs(ctx, {chunk}, timeout, false, seq, &packets, false, prepare) != 0) return 0;
  out.seq = seq;
  return 0;
}

int Device::wait_for_signal(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                            hl_cs_out& out) {
  const std::uint32_t q = chunk.queue_index;
  if (q >= kSyncStreams || chunk.num_signal_seq_arr != 1) return -EINVAL;
  if (chunk.signal_seq_arr == 0) return -EFAULT;
  std::uint64_t signalled = 0;
  if (contexts_.at(ctx).user->copy_from(&signalled, chunk.signal_seq_arr, sizeof signalled) != 0)
    return -EFAULT;
  const auto next = next_seq_.find(ctx);
  if (next == next_seq_.end() || signalled == 0 || signalled >= next->second) return -EINVAL;
  const auto found = cs_.find({ctx, signalled});
  out = {};
  out.status = HL_CS_STATUS_SUCCESS;
  out.seq = ~0ull;  // nothing to wait for
  if (found == cs_.end()) return 0;
  if (!found->second.signal) return -EINVAL;
  if (found->second.done) return 0;
  return queue_wait(ctx, chunk, timeout, found->second.sob, found->second.sob_value, out);
}

// Signal k of a reservation (1 = its first; 0 = the next signal after the reservation's start)
// that a staged CS carries; a reservation no CS carries yet, or whose CS has ended, is nothing to
// wait for.
int Device::wait_for_encaps(std::uint32_t ctx, const hl_cs_chunk& chunk, core::TimePs timeout,
                            hl_cs_out& out) {
  if (chunk.queue_index >= kSyncStreams) return -EINVAL;
  out = {};
  out.status = HL_CS_STATUS_SUCCESS;
  out.seq = ~0ull;
  const EncapsHandle* h = nullptr;
  for (const auto& [key, handle] : encaps_) {
    if (key.first == ctx && handle.cs_seq == chunk.encaps_signal_seq) h = &handle;
  }
  if (h == nullptr) return 0;
  if (chunk.encaps_signal_offset > h->count) return -EINVAL;
  const auto carrier = cs_.find({ctx, h->cs_seq});
  if (carrier == cs_.end() || carrier->second.done) return 0;
  if (carrier->second.signal) return -EINVAL;
  const std::uint32_t k = chunk.encaps_signal_offset;
  return queue_wait(ctx, chunk, timeout, h->sob, h->first_value + (k > 0 ? k - 1 : 0), out);
}

// `count` signals of the queue's current object, switching to the other first when they would
// pass the 15-bit limit (the other must be unused).
int Device::reserve_signals(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out) {
  const std::uint32_t q = in.encaps_signals_q_idx, count = in.encaps_signals_count;
  if (count >= kSobLimit || q >= kSyncStreams) return -EINVAL;
  clear_released_sobs();
  SyncStream& stream = sync_streams_[q];
  if (stream.next_value + count >= kSobLimit) {
    const int other = 1 - stream.current;
    if (stream.users[other] != 0) return -EINVAL;
    if (stream.users[stream.current] == 0) released_sobs_.push_back(sob_of(q, stream.current));
    stream.current = other;
    stream.next_value = 1;
    clear_released_sobs();
  }
  const int used = stream.current;
  std::uint32_t& id = next_encaps_[ctx];
  id = id == 0 ? 1 : id;
  EncapsHandle h{q, count, sob_of(q, used), stream.next_value, ~0ull};
  stream.next_value += count;
  ++stream.users[used];
  encaps_[{ctx, id}] = h;
  out = {};
  out.handle_id = id++;
  out.count = stream.next_value;
  out.sob_base_addr_offset = sob_offset(h.sob);
  out.status = HL_CS_STATUS_SUCCESS;
  return 0;
}

// Only the latest reservation of a queue's current object can be given back.
int Device::unreserve_signals(std::uint32_t ctx, const hl_cs_in& in, hl_cs_out& out) {
  const auto it = encaps_.find({ctx, in.encaps_sig_handle_id});
  if (it == encaps_.end()) return -EINVAL;
  const EncapsHandle& h = it->second;
  SyncStream& stream = sync_streams_[h.queue];
  if (h.cs_seq != ~0ull || h.first_value + h.count != stream.next_value ||
      sob_of(h.queue, stream.current) != h.sob) {
    return -EINVAL;
  }
  stream.next_value -= h.count;
  release_sob(h.sob);
  encaps_.erase(it);
  out = {};
  out.seq = ~0ull;
  out.status = HL_CS_STATUS_SUCCESS;
  return 0;
}

// An object that is no longer current and whose last user ended is cleared before the next
// submission (a register write takes time, and the completion handler that ends a CS does not
// wait).
void Device::release_sob(std::uint32_t sob) {
  const std::uint32_t q = (sob - stream_sob_base()) / 2;
  const int which = static_cast<int>((sob - stream_sob_base()) % 2);
  SyncStream& stream = sync_streams_[q];
  if (--stream.users[which] == 0 && which != stream.current) released_sobs_.push_back(sob);
}

void Device::clear_released_sobs() {
  for (const std::uint32_t sob : released_sobs_) {
    write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE, sob), 0);
  }
  released_sobs_.clear();
}

// After a reset every sync stream starts again on its first object, both cleared.
void Device::reset_sync_streams() {
  sync_streams_ = {};
  encaps_.clear();  // reservations do not survive a reset
  released_sobs_.clear();
  for (std::uint32_t q = 0; q < kSyncStreams; ++q) {
    for (int which = 0; which < 2; ++which) released_sobs_.push_back(sob_of(q, which));
  }
}

}  // namespace podsim::driver
