// A RoCE v2 NIC with one or more Ethernet ports, the Reliable Connected service and DCQCN.
// Captures: verbs (QPs, posted sends and receives, completion queues); segmentation to the path
// MTU with real BTH/RETH/AETH/ImmDt headers; payload read from and written to memory through a
// TLM socket (one bulk transaction per packet, whose delay decides when the packet is ready or
// placed); a TX pipeline latency when a QP (re)starts sending and an RX pipeline latency on every
// packet received; cumulative, coalesced ACKs; go-back-N on NAK, implied NAK and timeout; the
// retransmission timer and retry limit with error completions and flushing; RDMA READ; ECN
// (data sent ECT(0), CE answered by at most one CNP per cnp_interval per QP) and DCQCN pacing per
// QP; PFC pause frames received per port and priority; per port, control frames (ACK, NAK, CNP)
// before data, and round-robin over QPs with a packet ready and a pacing time that has come.
// Ignores: memory keys and protection (every address the memory accepts is valid), RNR retry (a
// SEND with no receive posted fails the requester's WQE with kRnrRetryExceeded), atomics,
// limits on outstanding READs, sending PFC frames, CNPs for ACKs, the NIC's internal bandwidth
// (the link and the memory are the only throughput limits), and QP destruction.
//
// Timing: a packet is handed to the link no earlier than it is ready. A QP that starts sending
// (post to an idle QP, a go-back-N restart, a READ request arriving) readies its first packet
// after tx_pipeline_latency plus the payload read; each later packet is read while the one before
// it leaves, so a stream runs at line rate with the pipeline latency paid once. A received packet
// is handled rx_pipeline_latency after its tail arrives; its payload is written then, and its
// ACK (or receive completion) waits for the write. Both NICs of a QP must use the same mode
// (functional or timing only).
//
// Over the flow-level network (attach to a flow::FlowNetwork instead of a link; nic_flow.cpp), a
// message is one flow: the same verbs, completions, memory traffic and pipeline latencies, the
// same framing (its packets' wire bytes, its ACKs' share of the way back), but no packets, so no
// ECN, DCQCN, PFC or retransmission; a QP's messages still leave one after another.
//
// Verbs are called from a process or between sc_start() calls, not during elaboration (payload
// reads need the bound memory socket). Per-packet work (the RX pipeline, timers) runs as
// callbacks of the shared core::EventQueue, so a NIC has no SystemC process of its own.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/event_queue.h"
#include "core/ring.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/units.h"
#include "hw/fabric/link.h"
#include "hw/fabric/packet.h"
#include "hw/flow/flow_endpoint.h"
#include "hw/roce/completion_queue.h"
#include "hw/roce/congestion_window.h"
#include "hw/roce/dcqcn.h"
#include "hw/roce/requester.h"
#include "hw/roce/responder.h"
#include "hw/roce/roce_config.h"
#include "hw/roce/verbs.h"

namespace podsim::roce {

class Nic : public sc_core::sc_module,
            public fabric::LinkEndpoint,
            public flow::FlowEndpoint,
            private core::Timed {
  struct Port;
  struct Qp;
  struct Arrival;
  // What every packet's work starts from, declared first so that it follows the vtable pointers
  // of the LinkEndpoint and Timed bases: the link and the event queue prefetch those lines
  // first, and the prefetch hints then read these without waiting (see prefetch_send).
  std::vector<Port> ports_;
  std::vector<std::unique_ptr<Qp>> qps_;  // by index = QPN - kFirstQpn
  core::Ring<Arrival> arrivals_;          // one queue callback each, in arrival order
  core::EventQueue* queue_;

 public:
  tlm_utils::simple_initiator_socket<Nic> memory_socket;

  // Throws std::invalid_argument on a bad configuration (naming the key) or port count.
  // `functional`: payload bytes move through memory; otherwise only time (the system's mode).
  Nic(sc_core::sc_module_name name, int ports, const RoceConfig& config, bool functional = true);
  ~Nic() override;

  // Connects `port` to side `side` of `link`; the port's IPv4 and MAC addresses derive from
  // `address`. Each port once, before its QPs are created.
  void attach(int port, fabric::Link& link, int side, fabric::EndpointId address);
  // Connects `port` to the flow-level network at `address`, at line rate `rate`.
  void attach(int port, flow::FlowNetwork& network, fabric::EndpointId address,
              core::Bandwidth rate);

  // ---- Verbs. A bad call throws std::invalid_argument naming the NIC, the call and the problem.
  // A new QP sending from `port`; returns its QPN. The CQs must outlive the NIC's use of them.
  std::uint32_t create_qp(int port, CompletionQueue& send_cq, CompletionQueue& recv_cq);
  // Connects a QP to `remote_qpn` at endpoint `remote`. `send_psn` is this side's first PSN and
  // `expected_psn` the peer's (IBTA sq_psn and rq_psn); the peer must use them the other way round.
  void connect_qp(std::uint32_t qpn, fabric::EndpointId remote, std::uint32_t remote_qpn,
                  std::uint32_t send_psn = 0, std::uint32_t expected_psn = 0);
  void post_send(std::uint32_t qpn, const SendRequest& request);
  // Allowed before connect_qp, as in IBTA's INIT state.
  void post_recv(std::uint32_t qpn, const RecvRequest& request);

  enum class QpState : std::uint8_t { kInit, kConnected, kError };
  QpState qp_state(std::uint32_t qpn) const;
  // DCQCN's current rate of the QP in bit/s (the port's line rate when not limited).
  double qp_rate(std::uint32_t qpn);
  // The requester's retransmission state, for tests and tools.
  const Requester& requester(std::uint32_t qpn) const;

  int ports() const { return static_cast<int>(ports_.size()); }
  fabric::EndpointId address(int port) const;
  const RoceConfig& config() const { return config_; }

  struct PortStats {
    core::Counter* tx_packets;
    core::Counter* tx_bytes;  // wire bytes
    core::Counter* rx_packets;
    core::Counter* rx_bytes;
    core::Counter* data_packets_sent;  // requests and READ responses, retransmissions included
    core::Counter* data_bytes_sent;    // their payload
    core::Counter* data_packets_received;
    core::Counter* acks_sent;
    core::Counter* acks_received;
    core::Counter* naks_sent;
    core::Counter* naks_received;
    core::Counter* retransmitted_packets;
    core::Counter* timeouts;
    core::Counter* duplicates_received;
    core::Counter* out_of_sequence_received;
    core::Counter* cnps_sent;
    core::Counter* cnps_received;
    core::Counter* pfc_pauses_received;
    core::Counter* dropped;  // for an unknown QP or a QP not connected
  };
  const PortStats& port_stats(int port) const;
  core::Counter& completions() const { return *completions_; }
  core::Counter& completion_errors() const { return *completion_errors_; }

  // ---- fabric::LinkEndpoint
  fabric::Packet* next_to_send(int port, core::TimePs now, core::TimePs& retry_at) override;
  void receive(fabric::Packet* packet, int port) override;
  void prefetch_send(int port, int stage) const override;
  void prefetch_receive(int port, const fabric::Packet* packet, int stage) const override;

  // ---- flow::FlowEndpoint
  void flow_delivered(int port, void* token, std::uint32_t what) override;
  void flow_drained(void* token) override;

 private:
  static constexpr std::uint32_t kFirstQpn = 2;  // QP0 and QP1 are IBTA's management QPs
  static constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();
  // The two packet sources of a QP: its requester, and its responder's READ responses.
  enum FlowKind : int { kRequesterFlow = 0, kResponderFlow = 1 };

  // One packet source's packet being read from memory, and its place in the port's round robin.
  struct Flow {
    fabric::Packet* staged = nullptr;
    core::TimePs ready_ps = 0;
    Qp* qp = nullptr;  // the QP holding this flow
    FlowKind kind = kRequesterFlow;
    bool linked = false;
    Flow *prev = nullptr, *next = nullptr;  // in the port's ring
    Requester::Tx tx;                       // requester flow: what the staged packet is
  };

  // A READ the responder is answering.
  struct ReadWork {
    std::uint64_t first_seq = 0;  // responder sequence number of the first response
    std::uint64_t address = 0;
    std::uint64_t length = 0;
    std::uint32_t packets = 0;
    std::uint32_t next = 0;  // responses staged so far
  };

  // Flow mode: a message, from its post to its completion (nic_flow.cpp).
  struct FlowMessage {
    enum Stage : std::uint32_t { kStart, kFirstArrival, kLastArrival, kAck };
    Nic* sender = nullptr;  // allocated from its pool
    std::uint32_t qp = 0;   // the sender's QP index
    Nic* receiver = nullptr;
    std::uint32_t receiver_qp = 0;
    bool response = false;  // a READ's response data, responder to requester
    bool done = false;      // requester: its ACK (or READ data) is in
    bool flushed = false;   // its QP failed: it only waits for its pending events to end
    int pending = 0;        // network events and READ responses still to come for it
    CompletionStatus status = CompletionStatus::kSuccess;
    SendWqe wqe;                     // a request: its work request
    FlowMessage* request = nullptr;  // a READ response: the READ it answers
    std::uint64_t source = 0;        // where the sender reads the payload
    std::uint64_t target = 0;        // where the receiver writes it (WRITE, READ response)
    std::uint64_t length = 0;        // payload bytes
    std::uint32_t packets = 0;
    std::uint32_t acks = 0;                       // ACK frames the receiver sends for it
    std::uint32_t first_wire = 0, last_wire = 0;  // wire bytes of its first and last frames
    std::uint32_t last_payload = 0;
    double wire_bytes = 0;
    double ack_weight = 0;  // its ACKs' wire bytes per data wire byte
    // The frames its receiver sends back: its ACKs, or one NAK.
    std::uint32_t frames_back() const { return status == CompletionStatus::kSuccess ? acks : 1; }
  };
  struct FlowLane {
    core::Ring<FlowMessage*> queue;  // empty until used: most QPs of a large system never are
    std::size_t started = 0;         // requester: messages at the front that have started
    bool busy = false;               // a message of the lane is starting or in the network
  };

  // Laid out by use: what every packet of the QP touches first, then what sending and ACKs
  // touch (flows, requester), then what received requests touch (responder, receives), then the
  // rest; prefetch_qp names the groups.
  struct alignas(64) Qp {
    Qp(std::uint32_t qpn, int port, CompletionQueue& send_cq, CompletionQueue& recv_cq,
       const RoceConfig& config, double line_rate);
    std::uint32_t qpn;
    int port;
    QpState state = QpState::kInit;
    bool timer_queued = false;  // a timeout entry for this QP is in the timer heap
    bool in_send = false;       // a SEND's first packet took `receive`
    bool ack_deferred = false;  // an ACK or NAK waits for READ responses with lower PSNs
    bool cnp_sent = false;
    std::uint16_t udp_source = 0;
    fabric::EndpointId remote = fabric::kNoEndpoint;
    std::uint32_t remote_qpn = 0, remote_ip = 0;
    std::uint64_t remote_mac = 0;
    core::TimePs next_send_ps = 0;  // DCQCN pacing

    Flow flow[2];
    Requester requester;

    // Responder: where the message in progress goes.
    Responder responder;
    core::Ring<RecvRequest> receives;
    RecvRequest receive;
    std::uint64_t write_address = 0;
    std::uint64_t message_bytes = 0;

    CompletionQueue* send_cq;
    CompletionQueue* recv_cq;
    core::Ring<ReadWork> reads;
    fabric::AckSyndrome deferred_syndrome = fabric::AckSyndrome::kAck;
    std::uint32_t deferred_psn = 0;
    core::TimePs deferred_ready_ps = 0;
    core::TimePs last_cnp_ps = 0;
    core::TrackId track{};
    core::TimePs last_span_end = 0;
    core::TimeWeighted* rate_level = nullptr;
    Dcqcn dcqcn;
    std::unique_ptr<CongestionWindow> window;  // window_control: TCP's sender
    core::TimeWeighted* window_level = nullptr;

    // Flow mode: the requester's messages (started or not, until they complete, in order) and
    // the READ responses the responder has yet to send; the routes of its data and its ACKs,
    // and the NIC at the far end (QPs are never destroyed, so it stays).
    FlowLane lane[2];
    const flow::Route* route = nullptr;
    const flow::Route* ack_route = nullptr;
    Nic* peer = nullptr;
  };

  // A frame the port sends before data.
  struct Control {
    enum class Kind : std::uint8_t { kAck, kCnp };
    Kind kind = Kind::kAck;
    fabric::AckSyndrome syndrome = fabric::AckSyndrome::kAck;
    std::uint32_t qp = 0;  // index
    std::uint32_t psn = 0, msn = 0;
    core::TimePs ready_ps = 0;
  };

  // The counters behind PortStats, kept in the port so that a packet's counting costs no
  // lines of its own; those every packet touches first.
  struct PortCounters {
    core::Counter tx_packets, tx_bytes, rx_packets, rx_bytes, data_packets_sent, data_bytes_sent,
        data_packets_received, acks_sent, acks_received;
    core::Counter naks_sent, naks_received, retransmitted_packets, timeouts, duplicates_received,
        out_of_sequence_received, cnps_sent, cnps_received, pfc_pauses_received, dropped;
  };

  // What a frame sent or received touches comes first (prefetch_port names the lines).
  struct alignas(64) Port {
    core::Ring<Control> control;
    Flow* rr = nullptr;  // the flow offered the link next
    int linked = 0;
    fabric::Link* link = nullptr;
    flow::FlowNetwork* network = nullptr;  // flow mode: instead of a link
    int side = 0;
    std::uint32_t ip = 0;
    std::uint64_t mac = 0;
    core::TimePs paused_until[8] = {};
    PortCounters counters;
    fabric::EndpointId address = fabric::kNoEndpoint;
    core::Bandwidth rate{};
    PortStats stats{};  // points into `counters`
  };

  // Work the NIC does at a future time.
  struct Timed {
    enum class Kind : std::uint8_t { kTimeout, kRetire, kReceiveCompletion, kFail };
    core::TimePs at = 0;
    std::uint64_t order = 0;  // ties break in scheduling order
    Kind kind = Kind::kRetire;
    std::uint32_t qp = 0;
    Completion completion;  // kReceiveCompletion; kFail carries its status here
    bool operator>(const Timed& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  struct Arrival {
    fabric::Packet* packet = nullptr;
    int port = 0;
    core::TimePs at = 0;
  };

  // ---- nic.cpp: verbs, sending, timers
  static PortStats attach_port_stats(const std::string& prefix, PortCounters& counters);
  Qp& qp_of(std::uint32_t qpn, const char* call);
  const Qp& qp_of(std::uint32_t qpn, const char* call) const;
  [[noreturn]] void reject(const char* call, const std::string& problem) const;
  void check_send(const Qp& qp, const SendRequest& request) const;
  std::uint32_t index_of(const Qp& qp) const { return qp.qpn - kFirstQpn; }

  enum Tag : std::uint32_t { kArrival, kTimer };
  void fire(std::uint32_t tag) override;
  void prefetch(std::uint32_t tag, const void* hot, int stage) const override;
  bool stale(std::uint32_t tag) const override;
  void prefetch_port(const Port& port) const;
  void prefetch_qp(const Qp& qp, bool sending) const;
  void wake(int port) { ports_[port].link->wake(ports_[port].side); }
  // Nothing new on the port can leave before `at`.
  void wake_at(int port, core::TimePs at) { ports_[port].link->wake_at(ports_[port].side, at); }
  void kick(Qp& qp, FlowKind kind, core::TimePs issue_ps);
  void restart_requester(Qp& qp);
  void discard(Flow& flow);
  bool stage(Qp& qp, FlowKind kind, core::TimePs issue_ps);
  bool stage_request(Qp& qp, core::TimePs issue_ps);
  bool stage_response(Qp& qp, core::TimePs issue_ps);
  fabric::Packet* new_packet(const Qp& qp, int priority) const;
  fabric::Packet* next_data(Port& port, core::TimePs now, core::TimePs& retry);
  fabric::Packet* take(Qp& qp, FlowKind kind, core::TimePs now);
  fabric::Packet* build_control(const Control& c);
  void link_flow(Qp& qp, FlowKind kind);
  void unlink_flow(Port& port, Flow& flow);

  // Memory: a bulk transfer issued at `at`; false if the memory rejected it.
  bool transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                std::uint32_t length, core::TimePs at, core::TimePs& done);
  // The same bytes moved (functional mode) or the address checked, taking no time of the memory
  // (flow mode's payload between a message's first and last packets; nic_flow.cpp says why).
  bool move_untimed(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                    std::uint64_t length);

  void schedule(core::TimePs at, Timed::Kind kind, std::uint32_t qp,
                const Completion& completion = {});
  void arm_timer_callback();
  void on_timer();
  void run(const Timed& t);
  void ensure_timer(Qp& qp);
  void on_timeout(Qp& qp, core::TimePs now);
  void retire(Qp& qp);
  void complete_send(Qp& qp, const SendWqe& wqe, CompletionStatus status);
  void deliver(CompletionQueue& cq, const Completion& c);
  void fail_qp(Qp& qp, CompletionStatus send_status);

  // ---- nic_flow.cpp: messages over the flow-level network
  FlowMessage* new_message(Qp& qp);
  void end_message(FlowMessage* m);
  void unref(FlowMessage* m);
  void frame(FlowMessage& m, SendOpcode op, bool response) const;
  void flow_post(Qp& qp, const SendRequest& request);
  void flow_begin(Qp& qp, FlowKind kind, core::TimePs issue_ps, core::TimePs overlap_ps);
  void flow_start(FlowMessage& m);
  static bool is_send(const FlowMessage& m);
  void flow_first_arrival(FlowMessage& m);
  void flow_copy(FlowMessage& m, std::uint64_t offset, std::uint64_t length, std::uint64_t address,
                 core::TimePs* done);
  std::uint8_t* scratch(std::uint64_t bytes);  // functional mode: a buffer of at least `bytes`
  void flow_last_arrival(FlowMessage& m);
  PortCounters& count_arrival(const FlowMessage& m);
  bool flow_take_send(Qp& qp, FlowMessage& m);
  void flow_answer_read(Qp& qp, FlowMessage& request);
  void flow_acknowledge(FlowMessage& m, core::TimePs ready_ps);
  void flow_on_ack(FlowMessage& m);
  void flow_on_response(FlowMessage& m);
  void flow_retire(Qp& qp);
  void flow_fail_lanes(Qp& qp, CompletionStatus send_status);
  void flow_route(Qp& qp);
  Nic* peer_of(const Qp& qp) const;
  fabric::EndpointId address_of(const FlowMessage& m) const {
    return ports_[qps_[m.qp]->port].address;
  }
  flow::FlowNetwork& network_of(const Qp& qp) const { return *ports_[qp.port].network; }

  // ---- nic_receive.cpp: received packets
  void on_arrival();
  void process(fabric::Packet* packet, int port);
  void on_pfc(const fabric::Packet& packet, int port);
  void on_request(Qp& qp, fabric::Packet& packet);
  void take_request(Qp& qp, fabric::Packet& packet);
  bool place_send(Qp& qp, fabric::Packet& packet, std::uint64_t& address);
  void take_read_request(Qp& qp, const fabric::Packet& packet);
  void reexecute_read(Qp& qp, const fabric::Packet& packet);
  void on_acknowledge(Qp& qp, const fabric::Packet& packet);
  void on_read_response(Qp& qp, fabric::Packet& packet);
  void after_progress(Qp& qp, const Requester::Progress& progress);
  void on_cnp(Qp& qp);
  void window_acked(Qp& qp, std::uint64_t una_before);
  void on_congestion(Qp& qp);  // window_control: a loss or an ECN echo
  void observe_window(Qp& qp);
  void maybe_send_cnp(Qp& qp);
  void send_ack(Qp& qp, fabric::AckSyndrome syndrome, std::uint32_t psn, core::TimePs ready_ps);
  void flush_deferred_ack(Qp& qp, core::TimePs ready_ps);
  void receive_completion(Qp& qp, const RecvRequest& r, CompletionOpcode op,
                          CompletionStatus status, std::uint64_t bytes, const fabric::Packet* imm,
                          core::TimePs at);

  RoceConfig config_;
  bool functional_;
  std::uint64_t rto_ps_;
  fabric::Ecn data_ecn_;
  std::vector<Timed> timers_;  // a min-heap on (at, order)
  std::uint64_t timer_order_ = 0;
  std::vector<core::TimePs> timer_callbacks_;  // a min-heap: when this NIC's kTimer callbacks run
  tlm::tlm_generic_payload trans_;
  core::Counter* completions_;
  core::Counter* completion_errors_;
  std::deque<FlowMessage> flow_messages_;  // flow mode: every message made, reused
  std::vector<FlowMessage*> flow_free_;
  std::vector<std::uint8_t> flow_scratch_;  // functional flow mode: payload on its way
};

}  // namespace podsim::roce
