// perftest-style traffic over a modeled system: flows of RDMA WRITEs between chip ports, laid
// out by a pattern (pair, incast, permutation, all-to-all), driven through the NICs' verbs, with
// per-flow completion times and, for a pair, ib_write_lat-style per-message latencies.
// Captures: which ports each flow uses (a direct in-box link when both chips share an
// all-to-all box, else the chip's scale-out port on the chosen rail), several QPs per flow,
// seeded permutations, and a byte-for-byte check of what arrived in functional mode.
// Ignores: reads, sends and bidirectional tests; perftest's CPU-side overheads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "hw/roce/completion_queue.h"
#include "hw/system/system_model.h"

namespace podsim::sims {

enum class NetPattern { kPair, kIncast, kPermutation, kAllToAll };

struct NetPlan {
  NetPattern pattern = NetPattern::kPair;
  std::uint64_t bytes = 1ull << 20;  // per flow
  int qps = 1;                       // per flow
  int from = 0, to = 1;              // pair
  int senders = 7;  // incast: this many chips send to chip 0 (from other boxes if there are)
  int rail = 0;     // scale-out port used when chips are not in one box
  int iters = 0;    // pair: sequential messages for latency (0: one bulk flow)
  std::uint64_t seed = 1;
};

struct FlowResult {
  int src_chip = 0, dst_chip = 0;
  int src_port = 0, dst_port = 0;
  // The flow's region: slot k of its source chip's send half of memory and of its destination
  // chip's receive half, so no two flows share bytes.
  std::uint32_t src_slot = 0, dst_slot = 0;
  std::uint64_t bytes = 0;
  core::TimePs start_ps = 0, end_ps = 0;
  bool ok = false;
  std::uint64_t wrong_bytes = 0;
};

// Builds the flows of a plan, each with its own memory regions; throws std::invalid_argument
// naming the option at fault when the plan does not fit the system (chips, rails, memory).
std::vector<FlowResult> plan_flows(const NetPlan& plan, const system::Topology& topology,
                                   const system::SystemConfig& config);

class NetWorkload : public sc_core::sc_module {
 public:
  // `progress` hears the fraction of messages completed (for a progress bar); may be empty.
  // `local` says which chips this process simulates (all when empty; sims/parallel): flows are
  // posted and timed where their source is, checked where their destination is, and every
  // process opens every flow's QPs so that their numbers are those of a single process.
  NetWorkload(sc_core::sc_module_name name, system::SystemModel& model, const NetPlan& plan,
              std::vector<FlowResult> flows, std::function<void(double)> progress = {},
              std::function<bool(int chip)> local = {});

  const std::vector<FlowResult>& flows() const { return flows_; }
  std::vector<FlowResult>& flows() { return flows_; }
  std::vector<core::TimePs>& latencies() { return latencies_; }
  bool local(int chip) const { return !local_ || local_(chip); }
  // Per-message latencies of a pair run with iters > 0.
  const std::vector<core::TimePs>& latencies() const { return latencies_; }
  bool finished() const { return finished_; }
  // Another process's part of the run did not finish (sims/parallel).
  void mark_unfinished() { finished_ = false; }
  // In functional mode, counts each flow's bytes that differ from what was sent (untimed: after
  // the run, when every flow into a chip has landed, whichever process sent it).
  void check_destinations();

 private:
  SC_HAS_PROCESS(NetWorkload);
  void run();
  void on_completion(std::size_t flow, const roce::Completion& c);
  void run_bulk();
  void run_latency();
  void fill_sources();
  std::uint64_t src_address(std::size_t flow) const;
  std::uint64_t dst_address(std::size_t flow) const;
  // The seeded bytes of a flow, generated a chunk at a time so huge flows need no huge buffer.
  template <class Visit>
  void for_each_chunk(std::size_t flow, Visit visit) const;
  roce::CompletionQueue& new_cq();
  std::uint32_t open_qp(const FlowResult& flow, roce::CompletionQueue& send_cq);

  system::SystemModel& model_;
  NetPlan plan_;
  std::vector<FlowResult> flows_;
  std::vector<core::TimePs> latencies_;
  std::vector<std::unique_ptr<roce::CompletionQueue>> cqs_;
  roce::CompletionQueue idle_cq_;
  std::function<void(double)> progress_;
  std::function<bool(int)> local_;
  std::size_t pending_ = 0, posted_ = 0;  // messages in flight, and posted in all
  sc_core::sc_event all_done_;            // receive side of WRITEs: nothing completes there
  bool finished_ = false;
};

}  // namespace podsim::sims
