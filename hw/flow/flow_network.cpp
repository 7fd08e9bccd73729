#include "hw/flow/flow_network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/kernel.h"
#include "hw/fabric/link.h"

namespace podsim::flow {

namespace {
double ps_per_byte(const FlowLink& l) { return 8e12 / l.rate.bits_per_second; }
}  // namespace

FlowNetwork::FlowNetwork(sc_core::sc_module_name name)
    : sc_core::sc_module(name), queue_(&core::event_queue()) {
  core::StatsGroup g(this->name());
  flows_started_ = &g.counter("flows", "1", "flows started (one per message)");
  solves_ = &g.counter("solves", "1", "max-min recomputations (at most one per instant)");
  flows_resolved_ =
      &g.counter("flows_resolved", "1", "flow rates recomputed, summed over the solves");
  deliveries_made_ = &g.counter("deliveries", "1", "arrivals and acknowledgements handed back");
}

int FlowNetwork::add_link(const FlowLink& link) {
  if (!(link.rate.bits_per_second > 0)) {
    throw std::invalid_argument(fmt::format("{}: link {} has no rate", name(), links_.size()));
  }
  links_.push_back(link);
  carried_.push_back(0);
  link_flows_.push_back(0);
  return solver_.add_link(link.rate.bits_per_second);
}

void FlowNetwork::attach(fabric::EndpointId address, FlowEndpoint& endpoint, int port) {
  if (address == fabric::kNoEndpoint) {
    throw std::invalid_argument(fmt::format("{}: attach without an address", name()));
  }
  if (address >= endpoints_.size()) endpoints_.resize(std::size_t{address} + 1);
  Attachment& a = endpoints_[address];
  if (a.endpoint) {
    throw std::invalid_argument(fmt::format("{}: address {} attached twice", name(), address));
  }
  a = {&endpoint, port};
}

const Route& FlowNetwork::route(fabric::EndpointId src, fabric::EndpointId dst,
                                std::uint16_t entropy) {
  // Addresses are dense and far below 2^24.
  const std::uint64_t key = (std::uint64_t{src} << 40) ^ (std::uint64_t{dst} << 16) ^ entropy;
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  if (!router_) throw std::invalid_argument(fmt::format("{}: no router is set", name()));
  Route r = router_(src, dst, entropy);
  for (int l : r) {
    if (l < 0 || l >= links()) {
      throw std::invalid_argument(
          fmt::format("{}: the route from {} to {} names link {}", name(), src, dst, l));
    }
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

core::TimePs FlowNetwork::serialization_ps(int id, std::uint32_t wire_bytes) const {
  return fabric::frame_serialization_ps(ps_per_byte(link(id)), wire_bytes);
}

// The packet network's rules for one frame (fabric::Link, fabric::Switch): each link holds the
// frame for its serialization, no shorter than the frame takes to arrive from the hop before;
// a cut-through switch may send once the header is in, a store-and-forward one once the tail is,
// both after their pipeline latency.
core::TimePs FlowNetwork::tail_arrival(const Route& route, std::uint32_t wire_bytes,
                                       core::TimePs tail_left) const {
  if (route.empty()) return tail_left;
  core::TimePs start = tail_left - serialization_ps(route.front(), wire_bytes);
  core::TimePs tail_in = tail_left;  // the tail reaching the transmitter
  for (int id : route) {
    const FlowLink& l = link(id);
    const core::TimePs tx_end = std::max(start + serialization_ps(id, wire_bytes), tail_in);
    const core::TimePs tail = tx_end + l.propagation_ps;
    if (!l.to_switch) return tail;
    const core::TimePs due =
        l.cut_through
            ? start + serialization_ps(id, std::min(wire_bytes, fabric::kCutThroughWireBytes)) +
                  l.propagation_ps
            : tail;
    start = due + l.switch_latency_ps;
    tail_in = tail;
  }
  return tail_in;
}

void FlowNetwork::start(const Route& data, const Route* ack, double ack_weight, double wire_bytes,
                        FlowEndpoint& sink, void* token) {
  std::vector<MaxMinSolver::Use> uses;
  uses.reserve(data.size() + (ack ? ack->size() : 0));
  for (int l : data) uses.push_back({l, 1});
  if (ack && ack_weight > 0) {
    for (int l : *ack) uses.push_back({l, ack_weight});
  }
  for (const MaxMinSolver::Use& u : uses) carried_[std::size_t(u.link)] += u.weight * wire_bytes;
  const int id = solver_.add_weighted_flow(uses);
  if (static_cast<std::size_t>(id) >= flows_.size()) flows_.resize(std::size_t(id) + 1);
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.route = &data;
  for (int l : data) {
    peak_link_flows_ = std::max(peak_link_flows_, ++link_flows_[static_cast<std::size_t>(l)]);
  }
  f.sink = &sink;
  f.token = token;
  f.remaining_bits = wire_bytes * 8;
  f.rate = 0;
  f.since = core::now_ps();
  flows_started_->add();
  request_solve(core::now_ps());
}

void FlowNetwork::start_at(core::TimePs at, const Route& data, const Route* ack, double ack_weight,
                           double wire_bytes, FlowEndpoint& sink, void* token) {
  at = std::max(at, core::now_ps());
  waiting_.push_back({at, waiting_order_++, &data, ack, ack_weight, wire_bytes, &sink, token});
  std::push_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
  request_solve(at);
}

bool FlowNetwork::cancel_start(void* token) {
  auto it = std::find_if(waiting_.begin(), waiting_.end(),
                         [token](const Waiting& w) { return w.token == token; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  std::make_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
  return true;
}

// The flows due by now start, in the order they were due.
void FlowNetwork::start_waiting() {
  const core::TimePs now = core::now_ps();
  while (!waiting_.empty() && waiting_.front().at <= now) {
    std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<Waiting>());
    const Waiting w = waiting_.back();
    waiting_.pop_back();
    start(*w.data, w.ack, w.ack_weight, w.wire_bytes, *w.sink, w.token);
  }
}

// Everything that starts or ends at the solve's instant is in before the rates are recomputed
// (a solve already armed for then takes it).
void FlowNetwork::request_solve(core::TimePs at) {
  if (solve_interval_ps_ > 0)
    at = (at + solve_interval_ps_ - 1) / solve_interval_ps_ * solve_interval_ps_;
  if (!solves_armed_.insert(at).second) return;
  queue_->schedule(at, *this, kSolve);
}

void FlowNetwork::deliver(core::TimePs at, fabric::EndpointId to, void* token, std::uint32_t what) {
  if (to >= endpoints_.size() || !endpoints_[to].endpoint) {
    throw std::invalid_argument(fmt::format("{}: no endpoint has address {}", name(), to));
  }
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(deliveries_.size());
    if (slot + kDeliverBase >= (1u << 24)) {
      throw std::length_error(fmt::format("{}: more than 2^24 deliveries pending", name()));
    }
    deliveries_.emplace_back();
  }
  deliveries_[slot] = {endpoints_[to].endpoint, endpoints_[to].port, token, what};
  queue_->schedule(std::max(at, core::now_ps()), *this, kDeliverBase + slot, token);
}

void FlowNetwork::fire(std::uint32_t tag) {
  if (tag == kSolve) return solve();
  if (tag == kDrain) return drain();
  const std::uint32_t slot = tag - kDeliverBase;
  const Delivery d = deliveries_[slot];
  free_slots_.push_back(slot);
  deliveries_made_->add();
  d.endpoint->flow_delivered(d.port, d.token, d.what);
}

void FlowNetwork::solve() {
  const core::TimePs now = core::now_ps();
  start_waiting();  // while this solve is still armed: it is theirs
  solves_armed_.erase(now);
  const std::vector<int>& changed = solver_.solve();
  solves_->add();
  flows_resolved_->add(changed.size());
  core::TimePs earliest = std::numeric_limits<core::TimePs>::max();
  for (int id : changed) {
    Flow& f = flows_[static_cast<std::size_t>(id)];
    // The old rate held until now.
    f.remaining_bits = std::max(0.0, f.remaining_bits - f.rate * 1e-12 * double(now - f.since));
    f.since = now;
    f.rate = solver_.rate(id);
    const double ps = std::ceil(f.remaining_bits / f.rate * 1e12);
    const Drain d{now + static_cast<core::TimePs>(ps), id};
    if (f.queued) {
      drains_.update(f.drain, d);
    } else {
      f.drain = drains_.push(d);
      f.queued = true;
    }
    earliest = std::min(earliest, d.at);
  }
  if (!changed.empty()) arm_drain(earliest);
}

void FlowNetwork::arm_drain(core::TimePs at) {
  if (!drain_callbacks_.empty() && drain_callbacks_.front() <= at) return;
  drain_callbacks_.push_back(at);
  std::push_heap(drain_callbacks_.begin(), drain_callbacks_.end(), std::greater<core::TimePs>());
  queue_->schedule(at, *this, kDrain);
}

void FlowNetwork::drain() {
  std::pop_heap(drain_callbacks_.begin(), drain_callbacks_.end(), std::greater<core::TimePs>());
  drain_callbacks_.pop_back();
  const core::TimePs now = core::now_ps();
  while (!drains_.empty() && drains_.top().at <= now) {
    const int id = drains_.top().flow;
    drains_.pop();
    Flow& f = flows_[static_cast<std::size_t>(id)];
    FlowEndpoint* sink = f.sink;
    void* token = f.token;
    f.sink = nullptr;
    f.queued = false;
    for (int l : *f.route) --link_flows_[static_cast<std::size_t>(l)];
    solver_.remove_flow(id);
    request_solve(now);
    sink->flow_drained(token);
  }
  if (!drains_.empty()) arm_drain(drains_.top().at);
}

void FlowNetwork::add_carried(const std::vector<double>& before, const std::vector<double>& after) {
  if (before.size() != carried_.size() || after.size() != carried_.size()) {
    throw std::invalid_argument("flow network: carried bytes of another network");
  }
  for (std::size_t i = 0; i < carried_.size(); ++i) carried_[i] += after[i] - before[i];
}

}  // namespace podsim::flow
