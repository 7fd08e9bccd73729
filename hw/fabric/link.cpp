#include "hw/fabric/link.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/kernel.h"

namespace podsim::fabric {

namespace {
constexpr double kPicosecondsPerMeter = 5000;  // [N1] ~5 ns/m in copper and fiber
constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();
}  // namespace

core::Duration CableConfig::propagation() const {
  if (delay.ps > 0) return delay;
  return core::Duration{static_cast<std::int64_t>(length.meters * kPicosecondsPerMeter + 0.5)};
}

Link::Link(sc_core::sc_module_name name, const LinkConfig& config)
    : sc_module(name), config_(config) {
  core::validate_config(config_);
  propagation_ps_ = static_cast<core::TimePs>(config_.cable.propagation().ps);
  ps_per_byte_ = 8e12 / config_.rate.bits_per_second;
  for (int side = 0; side < 2; ++side) {
    directions_[side].random.reseed(core::Random::mix(config_.seed * 2 + side));
    directions_[side].faulty = config_.cable.loss_rate > 0 || config_.cable.corruption_rate > 0;
    make_stats(side);
  }
  queue_ = &core::event_queue();
  keys_ = queue_->take_keys(2);
}

Link::~Link() {
  for (auto& d : directions_) release_all(d.in_flight);
  core::stats_registry().forget(name());
}

void Link::fire(std::uint32_t tag) {
  switch (tag) {
    case kTransmit0:
    case kTransmit1: {
      const int side = static_cast<int>(tag - kTransmit0);
      Direction& d = directions_[side];
      // Only the latest scheduled attempt counts; earlier reschedules left stale callbacks.
      if (!d.tx_scheduled || d.scheduled_ps != core::now_ps()) return;
      transmit(side);
      return;
    }
    default:
      deliver(static_cast<int>(tag - kDeliver0));
  }
}

// Stage 1 reads the direction and prefetches the endpoint object (and the frame arriving);
// the endpoint's own stages follow one stage later. Transmit: the sender's port state, then its
// next frame. Deliver: the receiver's port, then where the receiver will put the frame.
void Link::prefetch(std::uint32_t tag, const void* /*hot: the direction*/, int stage) const {
  const Direction& d = directions_[tag & 1];
  const bool deliver = tag >= kDeliver0;
  const LinkEndpoint* endpoint = deliver ? d.to : d.from;
  if (!endpoint) return;
  const Packet* p = d.in_flight.front();
  if (stage == 1) {
    __builtin_prefetch(&d.frames, 1);  // the counters' line
    // The link's own constants (queue, propagation, rate), behind the module's base.
    __builtin_prefetch(&queue_);
    __builtin_prefetch(&ps_per_byte_);
    __builtin_prefetch(endpoint);
    __builtin_prefetch(reinterpret_cast<const char*>(endpoint) + 64);
    if (deliver && p) __builtin_prefetch(p);
    return;
  }
  if (!deliver) {
    endpoint->prefetch_send(d.from_port, stage - 1);
    if (stage == 4 && d.in_flight.back()) __builtin_prefetch(d.in_flight.back(), 1);
    return;
  }
  if (!p) return;
  // Frames that arrive back to back are delivered by one callback.
  if (stage == 2 && p->next) __builtin_prefetch(p->next);
  endpoint->prefetch_receive(d.to_port, stage == 2 ? nullptr : p, stage - 1);
}

void Link::make_stats(int side) {
  core::StatsGroup group(std::string(name()) + (side == 0 ? ".a_to_b" : ".b_to_a"));
  Direction& d = directions_[side];
  auto& s = d.stats;
  s.frames = &group.attach("frames", d.frames, "1", "frames put on the wire");
  s.bytes =
      &group.attach("wire_bytes", d.bytes, "B", "bytes on the wire, preamble and gap included");
  s.lost = &group.attach("lost", d.lost, "1", "frames dropped by loss injection");
  s.corrupted =
      &group.attach("corrupted", d.corrupted, "1", "frames that failed the receiver's FCS check");
  s.busy_ps = &group.attach("busy_ps", d.busy_ps, "ps", "time spent serializing");
}

void Link::attach(int side, LinkEndpoint& endpoint, int port) {
  if (side != 0 && side != 1)
    throw std::invalid_argument(std::string(name()) + ": side must be 0 or 1");
  if (directions_[side].from) {
    throw std::logic_error(std::string(name()) + ": side " + std::to_string(side) +
                           " attached twice");
  }
  directions_[side].from = &endpoint;
  directions_[side].from_port = port;
  directions_[1 - side].to = &endpoint;
  directions_[1 - side].to_port = port;
  directions_[1 - side].to_cut_through = endpoint.cut_through(port);
}

core::TimePs Link::serialization_ps(std::uint32_t wire_bytes) const {
  return frame_serialization_ps(ps_per_byte_, wire_bytes);
}

void Link::wake(int side) { wake_at(side, core::now_ps()); }

void Link::wake_at(int side, core::TimePs at) {
  const Direction& d = directions_[side];
  schedule_transmit(side, std::max({at, core::now_ps(), d.tx_free_ps}));
}

void Link::schedule_transmit(int side, core::TimePs at) {
  Direction& d = directions_[side];
  if (d.tx_scheduled && d.scheduled_ps <= at) return;
  d.tx_scheduled = true;
  d.scheduled_ps = at;
  queue_->schedule(at, *this, kTransmit0 + static_cast<std::uint32_t>(side), &d);
}

void Link::transmit(int side) {
  Direction& d = directions_[side];
  d.tx_scheduled = false;
  const core::TimePs now = core::now_ps();
  if (now < d.tx_free_ps) return schedule_transmit(side, d.tx_free_ps);
  if (!d.from || !d.to) return;
  core::TimePs retry = kNever;
  Packet* p = d.from->next_to_send(d.from_port, now, retry);
  if (!p) {
    if (retry != kNever) schedule_transmit(side, std::max(retry, now));
    return;
  }
  const std::uint32_t wire = p->wire_bytes();
  const core::TimePs tx_end = std::max(now + serialization_ps(wire), p->tail_arrival_ps);
  d.tx_free_ps = tx_end;
  d.frames.add();
  d.bytes.add(wire);
  d.busy_ps.add(tx_end - now);
  if (retry != kNever) schedule_transmit(side, std::max(retry, tx_end));
  if (d.faulty && lost_or_corrupted(d, p)) return;
  p->tail_arrival_ps = tx_end + propagation_ps_;
  p->due_ps = d.to_cut_through
                  ? now + serialization_ps(std::min(wire, kCutThroughWireBytes)) + propagation_ps_
                  : p->tail_arrival_ps;
  if (d.remote) return d.remote->ship(p);
  put_in_flight(side, p);
}

void Link::put_in_flight(int side, Packet* p) {
  Direction& d = directions_[side];
  if (d.in_flight.empty()) {
    queue_->schedule_keyed(p->due_ps, *this, kDeliver0 + static_cast<std::uint32_t>(side),
                           keys_ + static_cast<std::uint64_t>(side), &d);
  }
  d.in_flight.push_back(p);
}

void Link::send_remote(int side, RemoteSide& remote) {
  if (side != 0 && side != 1)
    throw std::invalid_argument(std::string(name()) + ": side must be 0 or 1");
  directions_[side].remote = &remote;
}

void Link::arrive(int side, Packet* packet) {
  if (packet->due_ps <= core::now_ps()) {
    throw std::logic_error(std::string(name()) + ": a frame from another process arrived late");
  }
  put_in_flight(side, packet);
}

// Draws the cable's faults for one frame: true when the frame is lost (and released).
bool Link::lost_or_corrupted(Direction& d, Packet* p) {
  if (d.random.chance(config_.cable.loss_rate)) {
    d.lost.add();
    packet_pool().release(p);
    return true;
  }
  p->corrupted = d.random.chance(config_.cable.corruption_rate);
  return false;
}

void Link::deliver(int side) {
  Direction& d = directions_[side];
  const core::TimePs now = core::now_ps();
  while (!d.in_flight.empty() && d.in_flight.front()->due_ps <= now) {
    Packet* p = d.in_flight.pop_front();
    if (p->corrupted) {
      d.corrupted.add();
      packet_pool().release(p);
      continue;
    }
    d.to->receive(p, d.to_port);
  }
  if (!d.in_flight.empty()) {
    queue_->schedule_keyed(d.in_flight.front()->due_ps, *this,
                           kDeliver0 + static_cast<std::uint32_t>(side),
                           keys_ + static_cast<std::uint64_t>(side), &d);
  }
}

}  // namespace podsim::fabric
