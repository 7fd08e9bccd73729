// A full-duplex point-to-point link between two ports, each direction with its own transmitter.
// Captures: serialization at the link rate (the sending port's MAC is the link's transmitter, so
// a port sends one frame at a time), propagation delay (given, or 5 ns per meter of cable), and
// seeded injection of loss and corruption. Frames are pulled from the sender when the
// transmitter is free, so senders keep their own queues and priorities (PFC pause, rate limits)
// and nothing is buffered on the wire but frames in flight. Ignores: bit errors' positions (a
// corrupted frame fails its FCS at the receiver as a whole), link training and flaps.
//
// The link knows nothing of Ethernet beyond the frame sizes packets report, so other link kinds
// (IPU-Link, GW-Link) reuse it with their own packet framing.
#pragma once

#include <cmath>
#include <cstdint>
#include <systemc>

#include "core/config_binding.h"
#include "core/event_queue.h"
#include "core/random.h"
#include "core/ring.h"
#include "core/stats.h"
#include "core/units.h"
#include "hw/fabric/packet.h"

namespace podsim::fabric {

// What a cable adds beyond its endpoints' line rate: how long it is and how reliable. Systems
// describe their links with this; the rate comes from the ports at its ends.
struct CableConfig {
  core::Duration delay{};  // propagation; when zero, derived from `length`
  core::Length length{};
  double loss_rate = 0;        // probability that a frame vanishes on the wire
  double corruption_rate = 0;  // probability that a frame arrives with a bad FCS

  core::Duration propagation() const;
  template <class V>
  void describe(V& v) {
    v.field("delay", delay,
            core::Spec("propagation delay (overrides length)")
                .range(0, 1e15)
                .source("[N2], [N4]: 1us inter-switch; ~0.1us in-box [U]"));
    v.field("length", length,
            core::Spec("cable length; 5 ns per meter when delay is not given")
                .range(0, 1e6)
                .source("[N1] copper/fiber ~5 ns/m"));
    v.field("loss_rate", loss_rate, core::Spec("probability a frame is lost").range(0, 1));
    v.field("corruption_rate", corruption_rate,
            core::Spec("probability a frame is corrupted").range(0, 1));
  }
};

struct LinkConfig {
  core::Bandwidth rate{100e9};
  CableConfig cable;
  std::uint64_t seed = 1;  // loss and corruption draws

  template <class V>
  void describe(V& v) {
    v.field("rate", rate,
            core::Spec("line rate of each direction").positive().source("IEEE 802.3"));
    v.section("cable", cable, core::Spec("delay and reliability"));
  }
};

// What a cut-through receiver waits for before it forwards a frame: preamble+SFD and the first
// 64 bytes.
constexpr std::uint32_t kCutThroughWireBytes = 8 + 64;
// A frame's time on the wire at `ps_per_byte` (8e12 / bit rate), rounded up to a whole
// picosecond as Bandwidth::time_for does; frames are small enough that the product is exact in a
// double. The packet and the flow network both time frames with it.
inline core::TimePs frame_serialization_ps(double ps_per_byte, std::uint32_t wire_bytes) {
  return static_cast<core::TimePs>(std::ceil(wire_bytes * ps_per_byte - 1e-6));
}

// A node with ports that links attach to (a NIC, a switch, a host).
class LinkEndpoint {
 public:
  virtual ~LinkEndpoint() = default;
  // The transmitter of `port` is free: hand over the next frame, or nullptr when nothing may be
  // sent now. `retry_at` comes in as never: lower it to when to ask again (`now` for as soon as
  // the frame handed over is out; a later time when something waits on time, such as a PFC
  // pause or a rate limiter). Left at never, the link does not ask again until the endpoint
  // calls Link::wake(): an endpoint with nothing else queued saves the link a call per burst.
  virtual Packet* next_to_send(int port, core::TimePs now, core::TimePs& retry_at) = 0;
  // A frame arrived on `port`: its tail, or its head for a cut-through receiver. The endpoint
  // owns the packet from here and returns it to packet_pool() when done.
  virtual void receive(Packet* packet, int port) = 0;
  // True when frames should be delivered as their header arrives. Asked once, when the link
  // attaches, so the answer must not change afterwards.
  virtual bool cut_through(int /*port*/) const { return false; }

  // Hints from the link's prefetch stages (see core::Timed::prefetch), ahead of a call to
  // next_to_send or receive on `port`, in stages 1 to 3: stage 1 may read the endpoint's own
  // object, each later stage what the stage before prefetched. `packet` (stages 2 and 3 of
  // receive) is in cache. They must not change anything.
  virtual void prefetch_send(int /*port*/, int /*stage*/) const {}
  virtual void prefetch_receive(int /*port*/, const Packet* /*packet*/, int /*stage*/) const {}
};

// Where the frames sent from one side of a link go when the far side is simulated by another
// process (sims/parallel): the link hands each frame over, due time set, instead of delivering it.
class RemoteSide {
 public:
  virtual ~RemoteSide() = default;
  // Takes ownership of `packet`, due at the far end at packet->due_ps.
  virtual void ship(Packet* packet) = 0;
};

// Per-frame work runs as callbacks of the shared core::EventQueue rather than as kernel events of
// its own, so a link costs no SystemC process and a frame hop costs two cheap callbacks.
class Link : public sc_core::sc_module, private core::Timed {
 public:
  Link(sc_core::sc_module_name name, const LinkConfig& config);
  // Frames still on the wire when a run stops early go back to the pool.
  ~Link() override;

  // Connects side 0 or 1 of the link to an endpoint's port; both sides before simulation.
  void attach(int side, LinkEndpoint& endpoint, int port);
  // The endpoint on `side` has something new to send.
  void wake(int side);
  // The same, when the sender knows nothing can leave before `at`.
  void wake_at(int side, core::TimePs at);

  const LinkConfig& config() const { return config_; }
  // Frames sent from `side` go to `remote` (the far end lives in another process), which must
  // outlive the link; before simulation.
  void send_remote(int side, RemoteSide& remote);
  // A frame sent from `side` in another process, due here at packet->due_ps (after now); the
  // link owns it from here.
  void arrive(int side, Packet* packet);

  // Time to serialize `bytes` of wire bytes at the link rate.
  core::TimePs serialization_ps(std::uint32_t wire_bytes) const;

  // Statistics of the direction whose transmitter is on `side`.
  struct DirectionStats {
    core::Counter* frames;
    core::Counter* bytes;  // wire bytes
    core::Counter* lost;
    core::Counter* corrupted;
    core::Counter* busy_ps;  // time the transmitter spent serializing
  };
  const DirectionStats& stats(int side) const { return directions_[side].stats; }

 private:
  // One direction: the transmitter of `from` and the frames in flight towards `to`. What every
  // frame touches comes first, counters included, so a frame costs one or two cache lines here.
  struct alignas(64) Direction {
    LinkEndpoint* from = nullptr;
    LinkEndpoint* to = nullptr;
    int from_port = 0, to_port = 0;
    bool to_cut_through = false;  // the receiver's cut_through(), cached off the per-frame path
    bool tx_scheduled = false;    // a transmit attempt is pending at scheduled_ps
    bool faulty = false;          // loss or corruption is configured: draw for each frame
    core::TimePs tx_free_ps = 0;
    core::TimePs scheduled_ps = 0;  // callbacks for other times are stale and do nothing
    // In order (one transmitter, one propagation delay); due_ps is each one's arrival at `to`.
    PacketFifo in_flight;
    RemoteSide* remote = nullptr;  // where frames go instead when `to` is another process's
    core::Counter frames, bytes, busy_ps;
    core::Counter lost, corrupted;
    core::Random random;
    DirectionStats stats{};
  };

  enum Tag : std::uint32_t { kTransmit0, kTransmit1, kDeliver0, kDeliver1 };
  void fire(std::uint32_t tag) override;
  void prefetch(std::uint32_t tag, const void* hot, int stage) const override;
  void transmit(int side);
  void deliver(int side);
  void schedule_transmit(int side, core::TimePs at);
  void put_in_flight(int side, Packet* p);
  bool lost_or_corrupted(Direction& d, Packet* p);
  void make_stats(int side);

  LinkConfig config_;
  core::EventQueue* queue_;
  std::uint64_t keys_;  // the two directions' arrivals: keys_ and keys_ + 1 (schedule_keyed)
  core::TimePs propagation_ps_;
  double ps_per_byte_;  // serialization arithmetic done once, not per frame
  Direction directions_[2];
};

}  // namespace podsim::fabric
