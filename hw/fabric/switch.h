// An Ethernet switch for RoCE v2 fabrics: a shared packet buffer, per-port strict-priority egress
// queues, ECMP forwarding, PFC (802.1Qbb) for one lossless class and RED/ECN marking.
// Captures: cut-through (forwarding starts once the header is in) or store-and-forward, a fixed
// pipeline latency, HPCC-style buffer management (per-ingress reserve, dynamic threshold
// alpha x free shared buffer, PFC headroom, XOFF/XON with a resume offset), tail drop for lossy
// classes, PFC pause frames sent ahead of queued data and honoured per priority on egress,
// ECN marking at dequeue from the egress queue length, and a seeded 5-tuple ECMP hash.
// Ignores: the crossbar and its internal speed-up (a frame is in its egress queue, charged in
// full, as soon as it arrives; its buffer is freed when it starts to leave, as in HPCC's MMU),
// VLAN/MAC learning (routes come from the topology builder), weighted or DRR scheduling, more
// than one lossless class, per-port alpha shifts for mixed port speeds, multicast, and adaptive
// routing or packet spraying.
//
// The arithmetic (RED probability, ECMP hash, buffer admission and PFC thresholds) is in plain
// classes below so that tests drive it without the SystemC kernel.
#pragma once

#include <cstdint>
#include <limits>
#include <systemc>
#include <vector>

#include "core/config_binding.h"
#include "core/random.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/units.h"
#include "hw/fabric/link.h"
#include "hw/fabric/packet.h"
#include "hw/fabric/route_table.h"

namespace podsim::fabric {

// ---------------------------------------------------------------------------------------------
// Configuration

enum class SwitchMode { kCutThrough, kStoreAndForward };

struct EcnConfig {
  bool enabled = true;
  core::ByteSize kmin{400000};
  core::ByteSize kmax{1600000};
  double pmax = 0.2;

  template <class V>
  void describe(V& v) {
    const char* hpcc = "[N2] HPCC run.py, 100G: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2";
    v.field("enabled", enabled, core::Spec("mark ECT packets CE at dequeue (RED)"));
    v.field("kmin", kmin,
            core::Spec("egress queue length at or below which nothing is marked").source(hpcc));
    v.field("kmax", kmax,
            core::Spec("egress queue length at or above which every ECT packet is marked")
                .source(hpcc));
    v.field("pmax", pmax,
            core::Spec("marking probability as the queue reaches kmax").range(0, 1).source(hpcc));
  }
  void check(core::ConfigChecks& c) const;
};

struct PfcConfig {
  bool enabled = true;
  int lossless_priority = 3;
  core::ByteSize headroom{37500};
  core::ByteSize resume_offset{3 * 1024};
  core::ByteSize reserve{4 * 1024};
  int pause_quanta = 65535;

  template <class V>
  void describe(V& v) {
    const char* mmu = "[N2] HPCC switch-mmu.cc";
    v.field("enabled", enabled,
            core::Spec("pause upstream instead of dropping the lossless class"));
    v.field("lossless_priority", lossless_priority,
            core::Spec("802.1p priority of the lossless (RDMA) class")
                .range(0, 7)
                .source("[N2]: lossless class for RDMA (priority 3 by convention)"));
    v.field("headroom", headroom,
            core::Spec("per-port buffer for what arrives after XOFF is sent")
                .positive()
                .source("[N2] HPCC 3 x rate x link delay = 37.5 KB at 100G, 1 us"));
    v.field(
        "resume_offset", resume_offset,
        core::Spec("XON once the ingress class is this far below its XOFF threshold").source(mmu));
    v.field("reserve", reserve,
            core::Spec("per-port buffer guaranteed to the lossless class").source(mmu));
    v.field("pause_quanta", pause_quanta,
            core::Spec("XOFF pause time in quanta of 512 bit times")
                .range(1, 65535)
                .source("[N1] IEEE 802.1Qbb XOFF with max quanta (335.5 us at 100G)"));
  }
};

struct SwitchConfig {
  int ports = 32;
  core::ByteSize buffer{32ull << 20};
  SwitchMode mode = SwitchMode::kCutThrough;
  core::Duration pipeline_latency{500000};  // 0.5 us
  std::uint64_t ecmp_seed = 1;
  double alpha = 0.125;
  int priorities = 8;
  int control_priority = 6;
  EcnConfig ecn;
  PfcConfig pfc;

  template <class V>
  void describe(V& v) {
    v.field("ports", ports,
            core::Spec("ports (the topology builder sets it; 32 is a 100G ToR)").range(1, 65535));
    v.field("buffer", buffer,
            core::Spec("shared packet buffer")
                .positive()
                .source("[N2] HPCC mix/config.txt BUFFER_SIZE 32 (MiB) at 100G; SimAI"));
    v.choice("mode", mode,
             core::Choices<SwitchMode>{{"cut-through", SwitchMode::kCutThrough},
                                       {"store-and-forward", SwitchMode::kStoreAndForward}},
             core::Spec("start forwarding at header arrival, or only once the tail is in")
                 .source("[N7]: DC switch ASICs are cut-through"));
    v.field("pipeline_latency", pipeline_latency,
            core::Spec("from a frame's arrival (header or tail, by mode) to its egress eligibility")
                .min(0)
                .source("[N7] cut-through ASICs 0.5-1 us port to port (anchors use 0)"));
    v.field("ecmp_seed", ecmp_seed,
            core::Spec("seeds the ECMP hash and the ECN marking stream; give each switch its own")
                .source("[N2], [N4]: 5-tuple hash, per-switch seed"));
    v.field("alpha", alpha,
            core::Spec("dynamic threshold: a lossy queue or lossless ingress class may hold alpha"
                       " x the free shared buffer")
                .positive()
                .max(64)
                .source("[N2] HPCC switch-mmu.cc, alpha 1/8 (shift 3)"));
    v.field("priorities", priorities,
            core::Spec("egress queues per port (802.1p priorities)")
                .range(1, 8)
                .source("[N1] IEEE 802.1Qbb: 8 priorities"));
    v.field("control_priority", control_priority,
            core::Spec("priority of ACK/NAK/CNP frames, served strictly first")
                .range(0, 7)
                .source("[N8] CNP priority 6; [N2] ACKs at high priority"));
    v.section("ecn", ecn, core::Spec("RED/ECN marking at egress"));
    v.section("pfc", pfc, core::Spec("priority flow control of the lossless class"));
  }
  void check(core::ConfigChecks& c) const;
};

// ---------------------------------------------------------------------------------------------
// Arithmetic

// RED on the egress queue: nothing at or below kmin, everything at or above kmax, and a
// probability rising linearly to pmax in between (as HPCC's switch marks).
double red_mark_probability(std::uint64_t queue_bytes, std::uint64_t kmin, std::uint64_t kmax,
                            double pmax);

constexpr std::uint8_t kIpProtocolUdp = 17;

// A well-mixed hash of a flow's 5-tuple under a switch's seed. Deterministic; switches with
// different seeds split the same flows differently, which avoids polarization across tiers.
inline std::uint64_t flow_hash(std::uint32_t src_ip, std::uint32_t dst_ip, std::uint16_t src_port,
                               std::uint16_t dst_port, std::uint8_t protocol, std::uint64_t seed) {
  const std::uint64_t addresses = (std::uint64_t{src_ip} << 32) | dst_ip;
  const std::uint64_t rest =
      (std::uint64_t{src_port} << 24) | (std::uint64_t{dst_port} << 8) | protocol;
  return core::Random::mix(core::Random::mix(addresses ^ seed) ^ rest);
}

inline std::uint64_t flow_hash(const Packet& p, std::uint64_t seed) {
  return flow_hash(p.src_ip, p.dst_ip, p.src_port, p.dst_port, kIpProtocolUdp, seed);
}

// One of `count` group members, uniformly, by multiplying instead of dividing.
inline std::uint32_t ecmp_member(std::uint64_t hash, std::uint32_t count) {
  return static_cast<std::uint32_t>(((hash >> 32) * count) >> 32);
}

// The shared buffer's accounting, HPCC style. Each port keeps `reserve` and `headroom` bytes
// for the lossless class; the rest is shared. A lossless ingress class (port, lossless priority)
// fills its reserve, then the shared pool while it stays under the dynamic threshold alpha x
// free shared bytes; past it the switch sends XOFF and what is still in flight lands in
// headroom (dropped only when headroom is exhausted). XON follows once headroom is empty and
// the class's shared bytes are resume_offset under the threshold. A lossy frame is dropped
// when its egress queue would exceed the threshold or the shared pool is full.
//
// The pool's totals live here; each port's part (PortAccount) lives with the caller, so a
// switch keeps it in the same cache line as the port's other per-frame state. Byte counts are
// 32-bit: a buffer is below 4 GiB.
class SharedBuffer {
 public:
  static constexpr int kMaxPriorities = 8;
  struct Params {
    std::uint64_t capacity = 0;
    double alpha = 0.125;
    int ports = 1;
    int priorities = 8;
    int lossless_priority = -1;  // -1: no lossless class (PFC off)
    std::uint64_t reserve = 0, headroom = 0, resume_offset = 0;
  };
  enum class Admit : std::uint8_t { kAccepted, kDroppedBuffer, kDroppedHeadroom };
  enum class Pfc : std::uint8_t { kNone, kPause, kResume };
  struct Verdict {
    Admit admit;
    Pfc pfc;  // change of the ingress class's pause state to announce upstream
  };
  // Bytes of one ingress port's lossless class, by where they are held.
  struct Ingress {
    std::uint32_t reserve = 0, shared = 0, headroom = 0;
    bool xoff = false;
  };
  // One port's share: bytes queued at its egress (per priority and in all) and held by its
  // ingress lossless class.
  struct PortAccount {
    std::uint32_t queue_bytes[kMaxPriorities] = {};
    std::uint32_t port_bytes = 0;
    Ingress ingress;
  };

  // Throws std::invalid_argument when the capacity does not fit the 32-bit accounting.
  explicit SharedBuffer(const Params& params);

  // A frame of `bytes` that came in on `in` for the queue (`out`, `priority`); charged when
  // accepted.
  Verdict admit(PortAccount& in, PortAccount& out, int priority, std::uint32_t bytes);
  // An accepted frame leaves its egress queue.
  Pfc release(PortAccount& in, PortAccount& out, int priority, std::uint32_t bytes);

  // alpha x the shared bytes still free.
  std::uint64_t threshold() const {
    return static_cast<std::uint64_t>(params_.alpha *
                                      static_cast<double>(shared_capacity_ - shared_used_));
  }
  bool lossless(int priority) const { return priority == params_.lossless_priority; }
  std::uint64_t used() const { return used_; }
  std::uint64_t high_water() const { return high_water_; }
  std::uint64_t shared_capacity() const { return shared_capacity_; }
  std::uint64_t shared_used() const { return shared_used_; }

 private:
  Verdict admit_lossless(Ingress& g, std::uint32_t bytes);
  bool admit_lossy(const PortAccount& out, int priority, std::uint32_t bytes);
  Pfc release_lossless(Ingress& g, std::uint32_t bytes);

  Params params_;
  std::uint64_t shared_capacity_;
  std::uint64_t shared_used_ = 0, used_ = 0, high_water_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The module

class Switch : public sc_core::sc_module, public LinkEndpoint {
 public:
  Switch(sc_core::sc_module_name name, const SwitchConfig& config);
  // Frames still queued when a run stops early go back to the pool.
  ~Switch() override;

  // Connects `port` to side `side` of `link` (and the link to this port).
  void attach(int port, Link& link, int side);
  // Candidate egress ports per destination endpoint; the topology builder fills it.
  RouteTable& routes() { return routes_; }
  const RouteTable& routes() const { return routes_; }
  int ports() const { return config_.ports; }
  const SwitchConfig& config() const { return config_; }
  const SharedBuffer& buffer() const { return buffer_; }
  // Frames whose ECN marking RED has had to decide (a draw of the marking stream, or a certain
  // mark): none while every egress queue has stayed below the marking threshold.
  std::uint64_t red_decisions() const { return red_decisions_; }

  Packet* next_to_send(int port, core::TimePs now, core::TimePs& retry_at) override;
  void receive(Packet* packet, int port) override;
  bool cut_through(int) const override { return config_.mode == SwitchMode::kCutThrough; }
  void prefetch_send(int port, int stage) const override;
  void prefetch_receive(int port, const Packet* packet, int stage) const override;

  struct PortStats {
    core::Counter* rx_frames;
    core::Counter* rx_bytes;  // frame bytes, MAC header to FCS
    core::Counter* tx_frames;
    core::Counter* tx_bytes;
    core::Counter* drops_buffer;    // lossy tail drops, counted at the egress port
    core::Counter* drops_no_route;  // counted at the ingress port
    core::Counter* drops_headroom;  // lossless drops past headroom, at the ingress port
    core::Counter* pfc_pause_sent;
    core::Counter* pfc_resume_sent;
    core::Counter* pfc_pause_received;
    core::Counter* pfc_resume_received;
    core::Counter* ecn_marks;
    core::Counter* max_queue_bytes;  // egress bytes queued on the port, all priorities
  };
  const PortStats& port_stats(int port) const { return ports_[port].stats; }
  const core::Counter& buffer_high_water() const { return high_water_; }

 private:
  static constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();
  static constexpr int kMaxPriorities = SharedBuffer::kMaxPriorities;

  // One port, laid out by how often each part is touched. A frame through the switch reads its
  // egress port's first line, the FIFO of its priority and the egress's accounting line, and
  // its ingress port's accounting line and first line; everything after is rare.
  struct alignas(64) Port {
    Link* link = nullptr;
    int side = 0;
    std::uint8_t nonempty = 0;     // priorities with queued frames
    std::uint8_t pfc_pending = 0;  // priorities whose pause state the peer must be told
    std::uint8_t xoff = 0;         // priorities we hold paused upstream
    std::uint8_t paused = 0;       // priorities the peer has paused (see paused_until)
    // When the link will next ask for a frame (now when it is busy sending): an enqueue wakes
    // the link only when that is later than the new frame's eligibility.
    core::TimePs next_call_ps = kNever;
    core::TimePs refresh_ps = 0;  // re-send XOFF by then while it holds, before the peer resumes
    core::Counter tx_frames, tx_bytes, max_queue_bytes, rx_bytes;

    // Egress queues; each packet's due_ps is its eligibility, in_port where it came in.
    PacketFifo fifo[kMaxPriorities];

    SharedBuffer::PortAccount account;
    core::Counter rx_frames;

    // Rare: PFC from the peer, and what only drops, pauses and marks touch.
    core::TimePs paused_until[kMaxPriorities] = {};  // valid for priorities in `paused`
    core::Bandwidth rate{};
    core::TimePs xoff_ps = 0;  // what our XOFF pauses the peer for, at this port's rate
    core::Counter drops_buffer, drops_no_route, drops_headroom, ecn_marks;
    core::Counter pfc_pause_sent, pfc_resume_sent, pfc_pause_received, pfc_resume_received;
    PortStats stats{};
  };

  void make_stats();
  int route(const Packet& p) const;
  int route_candidate(const Packet& p) const;
  int first_to_serve(const Port& p) const;
  void on_pause_frame(Packet* frame, int port);
  void announce_pfc(int in_port, int priority, SharedBuffer::Pfc change);
  void enqueue(Packet* p, int in_port, int out_port, int priority);
  Packet* take_eligible(int port, core::TimePs now, core::TimePs& retry);
  Packet* dequeue(int port, int priority);
  Packet* make_pfc_frame(int port, core::TimePs now);
  void mark_ecn(Packet* p, int port, int priority);
  void wake(int port);

  // What every frame reads of the switch itself comes first, next to the vtable pointer, with
  // the few configuration values a frame needs copied off the cold configuration.
  std::vector<Port> ports_;
  std::uint64_t ecmp_seed_;
  std::uint8_t priorities_;
  bool ecn_enabled_;
  std::uint8_t priority_queue_[kMaxPriorities];  // 802.1p priority -> queue
  std::uint8_t service_order_[kMaxPriorities];   // control first, then highest to lowest
  core::TimePs latency_ps_;
  RouteTable routes_;
  SharedBuffer buffer_;
  core::Counter high_water_;
  core::Random random_;
  std::uint64_t red_decisions_ = 0;
  SwitchConfig config_;
  core::TrackId track_;
};

}  // namespace podsim::fabric
