// The flow-level network (`--network flow`): the same cables, switches and routes as the packet
// network, but a message crosses them as one flow instead of packets. Captures: every direction
// of every cable as a link of its line rate; a flow's route as its packets would take it (the
// caller's router: each switch's table and ECMP hash); flows sharing links by max-min fairness
// (max_min.h), recomputed whenever flows start or end (once per simulated instant, or at the
// next multiple of a solve interval when one is set, and only for the flows the changes can
// reach); a flow's acknowledgements as a small weighted share of the links they cross back; and
// a frame's latency over a route as the packet
// network gives an unqueued frame: serialization on each link, propagation, each switch's
// pipeline latency, cut-through (forwarding once the header is in) or store-and-forward.
// Ignores: queues, PFC, ECN marking and DCQCN, drops and retransmission (flows always arrive),
// and the ordering of frames within a link; docs/network.md says where this departs from the
// packet network and by how much.
//
// Endpoints (NIC ports) start flows and ask for deliveries: a message handed back to an
// endpoint at a chosen time (the tail of a flow arriving, an acknowledgement, the endpoint's own
// pipeline delay). Callbacks run on the shared core::EventQueue.
#pragma once

#include <boost/heap/d_ary_heap.hpp>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "core/event_queue.h"
#include "core/stats.h"
#include "core/units.h"
#include "hw/fabric/packet.h"
#include "hw/flow/flow_endpoint.h"
#include "hw/flow/max_min.h"

namespace podsim::flow {

// One direction of a cable and what its far end adds to a frame's latency.
struct FlowLink {
  core::Bandwidth rate{};
  core::TimePs propagation_ps = 0;
  bool to_switch = false;              // the far end is a switch (otherwise a NIC)
  bool cut_through = false;            // that switch forwards once a frame's header is in
  core::TimePs switch_latency_ps = 0;  // its pipeline latency
};

class FlowNetwork : public sc_core::sc_module, private core::Timed {
 public:
  using Router =
      std::function<Route(fabric::EndpointId src, fabric::EndpointId dst, std::uint16_t entropy)>;

  explicit FlowNetwork(sc_core::sc_module_name name);

  // A directed link; returns its id. Throws std::invalid_argument on a rate that is not positive.
  int add_link(const FlowLink& link);
  const FlowLink& link(int id) const { return links_[static_cast<std::size_t>(id)]; }
  int links() const { return static_cast<int>(links_.size()); }
  // Rates are recomputed at multiples of `interval_ps` only (0: at the instant anything
  // changes): a flow starts at its rate 0 and a drained flow's share is given back at the next
  // multiple.
  void set_solve_interval(core::TimePs interval_ps) { solve_interval_ps_ = interval_ps; }
  // How a flow's route is found: its source and destination addresses and its entropy (a RoCE
  // QP's UDP source port).
  void set_router(Router router) { router_ = std::move(router); }
  // `port` of `endpoint` answers to `address`. Throws std::invalid_argument when the address is
  // taken.
  void attach(fabric::EndpointId address, FlowEndpoint& endpoint, int port);

  // The route from `src` to `dst` (cached: a reference that stays valid). Throws
  // std::invalid_argument from the router when there is none.
  const Route& route(fabric::EndpointId src, fabric::EndpointId dst, std::uint16_t entropy);
  // When the tail of a `wire_bytes` frame reaches the end of `route`, its tail having left the
  // source at `tail_left` with nothing ahead of it anywhere.
  core::TimePs tail_arrival(const Route& route, std::uint32_t wire_bytes,
                            core::TimePs tail_left) const;
  // Time to serialize `wire_bytes` on link `id`.
  core::TimePs serialization_ps(int id, std::uint32_t wire_bytes) const;

  // Starts a flow of `wire_bytes` over `data` now; its acknowledgements load the links of
  // `ack` (may be null) with `ack_weight` x its rate. `sink.flow_drained(token)` runs when the
  // last byte has left the source.
  void start(const Route& data, const Route* ack, double ack_weight, double wire_bytes,
             FlowEndpoint& sink, void* token);
  // The same from `at` (not before now): the flow joins at the solve that its start brings, so
  // the caller needs no event of its own to start it. Until then cancel_start(token) withdraws
  // it (returning whether it was still waiting).
  void start_at(core::TimePs at, const Route& data, const Route* ack, double ack_weight,
                double wire_bytes, FlowEndpoint& sink, void* token);
  bool cancel_start(void* token);
  // Calls flow_delivered(port, token, what) on the endpoint at `to` at time `at` (not before
  // now). Throws std::invalid_argument when no endpoint answers to `to`.
  void deliver(core::TimePs at, fabric::EndpointId to, void* token, std::uint32_t what);
  // The endpoint at `address`, or null.
  FlowEndpoint* endpoint(fabric::EndpointId address) const {
    return address < endpoints_.size() ? endpoints_[address].endpoint : nullptr;
  }

  // Wire bytes the flows started so far put on directed link `id` (data and ACKs).
  double carried_bytes(int id) const { return carried_[static_cast<std::size_t>(id)]; }
  // Every directed link's carried bytes; add_carried() adds after[i] - before[i] to link i, what
  // a stretch of simulation replayed rather than simulated carried (training/collective_replay.h).
  const std::vector<double>& carried() const { return carried_; }
  void add_carried(const std::vector<double>& before, const std::vector<double>& after);
  std::uint64_t flows_started() const { return flows_started_->value(); }
  // The most flows that ever crossed one link at once (ACKs not counted).
  int peak_link_flows() const { return peak_link_flows_; }

 private:
  // When each flow drains, earliest first: one entry per flow, moved when its rate changes
  // (a mutable heap: no stale entries pile up while a long flow's rate is recomputed).
  struct Drain {
    core::TimePs at;
    int flow;
    bool operator>(const Drain& o) const { return at != o.at ? at > o.at : flow > o.flow; }
  };
  using DrainHeap =
      boost::heap::d_ary_heap<Drain, boost::heap::arity<4>, boost::heap::mutable_<true>,
                              boost::heap::compare<std::greater<Drain>>>;
  struct Flow {
    const Route* route = nullptr;
    FlowEndpoint* sink = nullptr;
    void* token = nullptr;
    double remaining_bits = 0;
    double rate = 0;  // bit/s
    core::TimePs since = 0;
    DrainHeap::handle_type drain;
    bool queued = false;  // in the drain heap
  };
  struct Delivery {
    FlowEndpoint* endpoint = nullptr;
    int port = 0;
    void* token = nullptr;
    std::uint32_t what = 0;
  };
  struct Attachment {
    FlowEndpoint* endpoint = nullptr;
    int port = 0;
  };
  // A flow waiting to start (start_at).
  struct Waiting {
    core::TimePs at;
    std::uint64_t order;  // among those due at the same time, the order they came in
    const Route* data;
    const Route* ack;
    double ack_weight, wire_bytes;
    FlowEndpoint* sink;
    void* token;
    bool operator>(const Waiting& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  enum Tag : std::uint32_t { kSolve = 0, kDrain = 1, kDeliverBase = 2 };

  void fire(std::uint32_t tag) override;
  void request_solve(core::TimePs at);
  void start_waiting();
  void solve();
  void drain();
  void arm_drain(core::TimePs at);

  core::EventQueue* queue_;
  core::TimePs solve_interval_ps_ = 0;
  std::vector<FlowLink> links_;
  std::vector<double> carried_;  // by link
  std::vector<int> link_flows_;  // by link: the flows whose data crosses it now
  int peak_link_flows_ = 0;
  Router router_;
  std::vector<Attachment> endpoints_;  // by address
  std::unordered_map<std::uint64_t, Route> routes_;
  MaxMinSolver solver_;
  std::vector<Flow> flows_;  // by solver id
  DrainHeap drains_;
  std::vector<core::TimePs> drain_callbacks_;  // a min-heap of when kDrain callbacks run
  std::set<core::TimePs> solves_armed_;        // when kSolve callbacks run
  std::vector<Waiting> waiting_;               // a min-heap
  std::uint64_t waiting_order_ = 0;
  std::vector<Delivery> deliveries_;  // by slot (tag - kDeliverBase)
  std::vector<std::uint32_t> free_slots_;
  core::Counter* flows_started_;
  core::Counter* solves_;
  core::Counter* flows_resolved_;
  core::Counter* deliveries_made_;
};

}  // namespace podsim::flow
