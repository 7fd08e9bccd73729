// A network packet with real header fields: Ethernet (MACs, optional VLAN with priority), IPv4 or
// IPv6 (addresses, DSCP, ECN), UDP (entropy source port, RoCE v2 port 4791) and the InfiniBand
// transport headers RoCE v2 carries (BTH, RETH, AETH, ImmDt), plus the PFC MAC-control frame.
// Captures: the exact bytes each packet occupies on the wire, computed from which headers it
// carries, so serialization time is exact. Payload bytes are carried only in functional mode.
// Ignores: header checksums' values (ICRC and FCS are counted, not computed), IP options,
// fragmentation, and tunnels. Packets come from a pool and are reset on release, so the hot path
// allocates nothing (the payload vector keeps its capacity across reuse).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/object_pool.h"
#include "core/units.h"

namespace podsim::fabric {

// Endpoints (NIC ports, host ports) are numbered across the whole system; addresses derive from
// the number, so a switch turns a destination IP into a forwarding-table index by subtraction.
using EndpointId = std::uint32_t;
constexpr EndpointId kNoEndpoint = 0xffffffffu;

constexpr std::uint32_t kIpv4Base = 0x0a000000u;  // 10.0.0.0/8 holds every endpoint
inline std::uint32_t ipv4_of(EndpointId id) { return kIpv4Base + id; }
inline EndpointId endpoint_of_ipv4(std::uint32_t ip) { return ip - kIpv4Base; }
// Locally administered unicast MACs: 02:00:<endpoint id, 32 bits>.
inline std::uint64_t mac_of(EndpointId id) { return (0x02ull << 40) | id; }

constexpr std::uint16_t kRoceV2UdpPort = 4791;

// BTH opcodes of the Reliable Connected service (IBTA vol. 1, table 38), and the RoCE v2 CNP.
enum class Opcode : std::uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0a,
  kWriteOnlyImm = 0x0b,
  kReadRequest = 0x0c,
  kReadResponseFirst = 0x0d,
  kReadResponseMiddle = 0x0e,
  kReadResponseLast = 0x0f,
  kReadResponseOnly = 0x10,
  kAcknowledge = 0x11,
  kCnp = 0x81,
};

// What a frame is, for the MACs and switches that must treat classes differently.
enum class FrameKind : std::uint8_t { kRoce, kPfcPause };

// AETH syndrome: ACK, RNR NAK, or NAK with a reason (IBTA 9.7.5.1).
enum class AckSyndrome : std::uint8_t {
  kAck = 0x00,
  kRnrNak = 0x20,
  kNakSequenceError = 0x60,
  kNakInvalidRequest = 0x61,
  kNakRemoteAccess = 0x62,
};

// ECN codepoint in the IP header.
enum class Ecn : std::uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };

// Fields a packet hop reads (forwarding, framing, timing, the queue it waits in) fill the first
// cache line, so that a hop through a switch touches one line of the packet; the rest of the
// headers follow. Everything but the payload is plain data, copied as bytes when a frame crosses
// to another process (sims/parallel).
struct Packet;

struct alignas(64) PacketFields {
  // Simulation bookkeeping, not on the wire. When the frame's last bit reaches the current node:
  // a cut-through switch receives the frame when its header arrives and may start forwarding,
  // but its egress cannot finish before this.
  core::TimePs tail_arrival_ps = 0;

  // IP (IPv4 form; IPv6 packets embed the same endpoint ids) and UDP
  std::uint32_t src_ip = 0, dst_ip = 0;
  std::uint16_t src_port = 0;  // flow entropy for ECMP
  std::uint16_t dst_port = kRoceV2UdpPort;
  std::uint32_t payload_bytes = 0;

  FrameKind kind = FrameKind::kRoce;
  bool vlan = false;
  std::uint8_t priority = 0;  // 802.1p class: selects queue, PFC class and lossless handling
  bool ipv6 = false;
  Ecn ecn = Ecn::kEct0;

  // BTH, and which optional transport headers follow it
  Opcode opcode = Opcode::kSendOnly;
  bool ack_request = false;
  bool has_reth = false;       // first or only packet of a WRITE; READ request
  bool has_aeth = false;       // ACK, NAK, READ responses that end or begin a message
  bool has_immediate = false;  // the last or only packet of a with-immediate operation
  bool corrupted = false;      // a link flipped bits: the receiving MAC's FCS check fails
  std::uint32_t dest_qp = 0;   // 24 bits
  std::uint32_t psn = 0;       // 24 bits

  // Where the packet waits (simulation bookkeeping): the node holding it links it into one
  // PacketFifo at a time and says when it is due there (arrival at the far end of a link,
  // egress eligibility in a switch) and, in a switch, which port it came in on.
  std::uint16_t in_port = 0;
  Packet* next = nullptr;
  core::TimePs due_ps = 0;

  std::uint8_t dscp = 0;

  // Ethernet addresses
  std::uint64_t src_mac = 0, dst_mac = 0;

  // RETH
  std::uint64_t remote_address = 0;
  std::uint32_t rkey = 0;
  std::uint32_t dma_length = 0;

  // AETH
  AckSyndrome syndrome = AckSyndrome::kAck;
  std::uint32_t msn = 0;

  // ImmDt
  std::uint32_t immediate = 0;

  // PFC (802.1Qbb): per-priority pause times in quanta of 512 bit times; 0 resumes.
  std::uint8_t pfc_enable = 0;
  std::uint16_t pfc_quanta[8] = {};

  core::TimePs created_ps = 0;
};

struct Packet : PacketFields {
  std::vector<std::uint8_t> payload;  // functional mode only; empty otherwise

  EndpointId source() const { return endpoint_of_ipv4(src_ip); }
  EndpointId destination() const { return endpoint_of_ipv4(dst_ip); }

  // Bytes on the wire including preamble, SFD and inter-frame gap, with the frame padded to
  // Ethernet's 64-byte minimum.
  std::uint32_t wire_bytes() const;
  // Bytes of the frame from destination MAC to FCS, as a switch buffer holds it.
  std::uint32_t frame_bytes() const;

  // Back to a fresh packet, keeping the payload buffer's capacity for the next use.
  void reset() {
    std::vector<std::uint8_t> keep = std::move(payload);
    keep.clear();
    *this = Packet{};
    payload = std::move(keep);
  }
};

static_assert(offsetof(PacketFields, due_ps) + sizeof(core::TimePs) <= 64,
              "a hop's fields must stay in the packet's first cache line");
static_assert(std::is_trivially_copyable_v<PacketFields>);

// A FIFO of packets linked through Packet::next, for queues on the per-hop path (frames in
// flight on a link, switch egress queues): pushing and popping touch only the packets at the
// ends, with no separate array of slots to miss in the cache.
class PacketFifo {
 public:
  bool empty() const { return head_ == nullptr; }
  Packet* front() const { return head_; }
  Packet* back() const { return head_ ? tail_ : nullptr; }
  void push_back(Packet* p) {
    p->next = nullptr;
    (head_ ? tail_->next : head_) = p;
    tail_ = p;
  }
  Packet* pop_front() {
    Packet* p = head_;
    head_ = p->next;
    p->next = nullptr;
    return p;
  }

 private:
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
};

using PacketPool = core::ObjectPool<Packet>;

// The packets of this process (one SystemC kernel per process).
PacketPool& packet_pool();

// Returns every packet still in `fifo` to the pool (a run that stopped early).
inline void release_all(PacketFifo& fifo) {
  while (!fifo.empty()) packet_pool().release(fifo.pop_front());
}

}  // namespace podsim::fabric
