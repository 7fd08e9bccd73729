// The NIC's work-request doorbell as command buffers see it: a small register block through
// which any queue posts an RDMA WRITE with immediate that a work-queue entry (WQE) in memory
// describes, with one 32-bit write; and the glue that turns the NIC's completions into sync
// object increments, so that collectives are ordered by the sync managers alone.
// podsim's own interface (Gaudi1's NIC registers are not published); docs/chip.md has the
// layout. Registers, relative to the block: 0x0 WQE_BASE_LO, 0x4 WQE_BASE_HI, 0x8 POST (a write
// of n posts the WQE at WQE_BASE + 64 n). A WQE (64 bytes, little-endian): u32 qpn, u32 flags
// (0), u64 local address, u64 remote address, u64 length, u32 immediate, u32 completion; the
// immediate and the completion name a sync object (bit 31 set, global index 0..8191 in bits
// 12:0: sync manager index / 2048, object index % 2048): an arriving immediate adds one to that
// object at the receiver, the sender's acknowledged write adds one to the completion's.
// Captures: one 64-byte WQE read through the NoC per post (its delay counts), the post at the
// time the read returns, posts in doorbell order, one sync-object write per completion through
// the NoC; failed writes and immediates that name no object raise error events. Ignores: send
// queues in memory with producer indices (each post names its WQE), other opcodes, and
// completion queues in memory.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <cstdint>
#include <map>
#include <queue>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/error_event.h"
#include "core/event_queue.h"
#include "core/stats.h"
#include "hw/roce/completion_queue.h"
#include "hw/roce/nic.h"

namespace podsim::chip {

struct Wqe {
  static constexpr std::uint64_t kBytes = 64;
  static constexpr std::uint32_t kSobValid = 1u << 31;
  static constexpr std::uint32_t kSobMask = 0x1FFF;
  std::uint32_t qpn = 0;
  std::uint64_t local = 0, remote = 0, length = 0;
  std::uint32_t immediate = 0;   // kSobValid | receiver's sync object
  std::uint32_t completion = 0;  // kSobValid | sender's sync object, or 0
  void encode(std::uint8_t* out) const;
  static Wqe decode(const std::uint8_t* bytes);
};

class NicDoorbell : public sc_core::sc_module, private core::Timed {
 public:
  static constexpr std::uint64_t kWqeBaseLo = 0x0, kWqeBaseHi = 0x4, kPost = 0x8;
  static constexpr std::uint64_t kSpan = 0x1000;
  static constexpr std::uint32_t kObjectsPerManager = 2048;

  tlm_utils::simple_target_socket<NicDoorbell> target_socket;        // registers
  tlm_utils::simple_initiator_socket<NicDoorbell> initiator_socket;  // WQEs, sync objects

  // `sync_managers`: the bases of the chip's sync managers, in global object order.
  NicDoorbell(sc_core::sc_module_name name, roce::Nic& nic,
              std::vector<std::uint64_t> sync_managers);

  // A QP whose completions this block turns into sync-object increments.
  std::uint32_t create_qp(int port);
  void set_error_sink(core::ErrorSink sink) { error_sink_ = std::move(sink); }
  // The chip address of global sync object `sob` (throws std::out_of_range past the last).
  std::uint64_t sob_address(std::uint32_t sob) const;

  struct Stats {
    core::Counter& posts;
    core::Counter& completions;
    core::Counter& arrivals;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Post {
    core::TimePs at;
    std::uint64_t seq;
    Wqe wqe;
    bool operator>(const Post& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  void post(std::uint32_t index, core::TimePs at);
  void fire(std::uint32_t tag) override;
  void add_one(std::uint32_t sob_field, const char* what);
  void on_send(const roce::Completion& c);
  void on_recv(const roce::Completion& c);
  void raise(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail);

  roce::Nic& nic_;
  std::vector<std::uint64_t> sync_managers_;
  std::array<std::uint32_t, 2> wqe_base_{};
  roce::CompletionQueue send_cq_, recv_cq_;
  std::priority_queue<Post, std::vector<Post>, std::greater<Post>> posts_;
  std::uint64_t next_seq_ = 0, next_wr_id_ = 1;
  std::map<std::uint64_t, std::uint32_t> completions_;  // wr_id -> completion field
  core::ErrorSink error_sink_;
  tlm::tlm_generic_payload trans_;
  Stats stats_;
};

}  // namespace podsim::chip
