// A communicator: a set of chips of a modeled system, one rank each, the QPs between them
// that algorithms send on, and collectives started asynchronously on them. Each collective
// becomes one program per rank (see ring.h), compiled into command buffers (command_compiler.h)
// that the chips' queue managers run (launcher.h), so every step (each RDMA write, reduction and
// copy) happens on the modeled QMANs, sync managers, NICs and DMA engines.
// Captures: QPs created and connected on first use over the link the topology offers (the
// direct in-box link, else the scale-out rail), several collectives in flight at once, splits
// by color and key, chunks doubled until the command buffers fit the chips. Ignores the host
// side's own time (building programs and starting them costs no simulated time) but for its
// notices: a rank's end reaches the other hosts after collectives.notice_latency, and what waits
// for ranks (a collective's end, a hierarchical one's next phase) goes on then.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/collective.h"
#include "collectives/command_compiler.h"
#include "collectives/tuning.h"
#include "core/kernel.h"
#include "hw/system/system_model.h"

namespace podsim::collectives {

class Launcher;

// A collective in flight.
struct Handle {
  Spec spec;
  Algorithm algorithm = Algorithm::kRing;  // what kAuto resolved to
  int ranks = 0;
  int id = 0;
  int trace_row = 0;  // a hierarchical phase's: which of the pieces sharing the phase it is
  core::TimePs start_ps = 0, end_ps = 0;
  // When each rank finished (a hierarchical collective's ranks all at its last phase's end), for
  // nccl-tests' per-rank averages.
  std::vector<core::TimePs> rank_end_ps;
  int remaining = 0;  // ranks not yet finished
  bool ok = true;
  bool done() const { return remaining == 0; }
  // From a thread holding the handle: returns once the collective has finished.
  void wait_done() {
    while (!done()) {
      ++waiters_;
      sc_core::wait(finished_);
      --waiters_;
    }
  }
  // Runs `next` when the collective finishes (at once if it has), for chaining phases.
  void then(std::function<void()> next) {
    if (done()) return next();
    on_done_ = std::move(next);
  }
  // At `end`, the last rank's own end (the hosts learn of it later: notice_latency).
  void finish(core::TimePs end) {
    end_ps = end;
    // Only for a waiter, which keeps the handle (and so the event) alive until it wakes.
    if (waiters_ > 0) core::notify_now(finished_);
    if (on_done_) std::exchange(on_done_, nullptr)();
  }

  double seconds() const { return static_cast<double>(end_ps - start_ps) * 1e-12; }

 private:
  std::function<void()> on_done_;
  sc_core::sc_event finished_;
  int waiters_ = 0;
};

// Ranks laid out box by box: `boxes` boxes of `per_box` ranks on the same local chips, and the
// scale-out rails (`lanes`) between boxes.
struct Hierarchy {
  int boxes = 1, per_box = 1, lanes = 1;
};

class Communicator {
 public:
  // Rank i runs on chips[i]; `auto` resolves by `tuning` (the system file's, or the defaults).
  // Throws std::invalid_argument on an empty list, a chip outside the system or a chip named
  // twice.
  Communicator(system::SystemModel& model, std::vector<int> chips,
               TuningConfig tuning = TuningConfig{});

  // The communicators of a split: ranks with the same color form one, ordered by key (then by
  // rank), as MPI_Comm_split does. Returns one communicator per color, by color.
  std::map<int, Communicator> split(const std::vector<int>& colors,
                                    const std::vector<int>& keys) const;

  int size() const { return static_cast<int>(chips_.size()); }
  int chip(int rank) const { return chips_[static_cast<std::size_t>(rank)]; }
  system::SystemModel& model() const { return model_; }

  // The QP rank `from` sends to rank `to` on, over lane `lane` (direct link or rail), created
  // and connected on first use.
  std::uint32_t qp(int from, int to, int lane = 0);

  // The algorithm `spec` runs with: its own, or for kAuto the first rule of the tuning table
  // (a system file's collectives.auto) that matches and can run here; with none, the mesh for an
  // all-to-all and the ring for the rest.
  Algorithm resolve(const Spec& spec) const;
  // `spec` with a hierarchical all-reduce's phase across the boxes decided: its own, or for
  // kAuto the `across` of the first hierarchical tuning rule that matches (the ring when none
  // does).
  Spec with_across(const Spec& spec) const;
  // Whether `algorithm` runs `spec` on these ranks (the operation, rings, pipeline depth, box
  // structure).
  bool can_run(const Spec& spec, Algorithm algorithm) const;
  // True when every pair of ranks shares a direct link.
  bool fully_linked() const;
  // How many boxes the ranks' chips lie in.
  int boxes_spanned() const;
  // True when the boxes are IPU-Link ladders, where only rings over neighbours run.
  bool on_ladders() const;
  // True when every pair of ranks can reach each other: directly, over the scale-out network, or
  // within one ladder box through neighbours (an algorithm whose peers are not neighbours there
  // is refused by the link it lacks).
  bool connected() const;
  // The box structure when the ranks come box by box, in whole boxes of all-to-all wired chips.
  std::optional<Hierarchy> hierarchy() const;

  // Throws std::invalid_argument naming the problem when `spec` cannot run here (a bad count or
  // chunk, buffers beyond chip memory, an algorithm the ranks' wiring does not allow).
  void validate(const Spec& spec) const;
  // Bytes of each chip's memory a functional run of `spec` writes per rank (its buffers and the
  // scratch its algorithm uses), which the host then holds. Call after validate.
  std::uint64_t footprint(const Spec& spec) const;

  // From a thread: opens every rank's device and sets up its side of the collectives (as
  // ncclCommInitRank does), so that the first collective's time is its own, and returns once
  // every rank's host has heard (a host notice) that every rank is ready; in a parallel run each
  // process sets up its own ranks, and all return at the same time. Throws std::runtime_error
  // naming the chip when a device cannot be opened, on every process (the notice says so).
  // Optional: a collective started first does the set-up inside its own time.
  void open();

  // Starts a collective now; the handle's `finished` event fires when every rank is done.
  // Throws std::invalid_argument on a spec the communicator cannot run (naming the problem).
  std::shared_ptr<Handle> start(const Spec& spec);
  // Starts several collectives on these ranks as one (one set of queues on each chip; the
  // lanes of a hierarchical phase), none of them hierarchical; the handle tells of all of them
  // and carries the first's spec. Throws std::invalid_argument as start does.
  std::shared_ptr<Handle> start_together(const std::vector<Spec>& specs);

 private:
  // The first tuning rule that matches `spec` (op, span, size) and can run it, of `algorithm`
  // when given.
  const TuningRule* first_rule(const Spec& spec, std::optional<Algorithm> algorithm) const;
  static int next_collective_id();
  // Whether the chips are coarse: programs run on the direct launcher, not compiled.
  bool coarse() const;
  // The rank each rank's QPs lead to.
  std::function<int(int rank, std::uint32_t qpn)> peer_of() const;
  std::uint64_t buffers_end(const Spec& spec) const;
  std::shared_ptr<Handle> new_handle(const Spec& spec, Algorithm algorithm) const;
  std::shared_ptr<const CommandCompiler> compile(std::vector<std::pair<Spec, Algorithm>> runs,
                                                 const Launcher& launcher);
  Program program(const Spec& spec, Algorithm algorithm, int rank);
  Program rings_program(const Spec& spec, int rank);
  Program shared_rings_program(const Spec& spec, int rank);  // reduce-scatter, all-gather
  void check_hierarchical(const Spec& spec) const;
  void start_hierarchical(const Spec& spec, const Layout& l, const std::shared_ptr<Handle>& handle);
  Communicator& box(int b);       // the ranks of box b
  Communicator& rail(int local);  // local rank `local` of every box
  // When tracing, a span on rank r's row of its chip, from `start` to `end`: row
  // "collectives" for whole collectives, "phase_<op>..." for a hierarchical one's phases.
  void trace_rank(int r, const Handle& handle, core::TimePs end) const;

  system::SystemModel& model_;
  std::vector<int> chips_;
  TuningConfig tuning_;
  std::map<std::tuple<int, int, int>, std::uint32_t> qps_;    // (from, to, lane) -> QPN at from
  std::vector<std::unique_ptr<Communicator>> boxes_, rails_;  // made on first hierarchical use
  bool runs_phases_ = false;  // a box or rail of a hierarchical collective
};

}  // namespace podsim::collectives
