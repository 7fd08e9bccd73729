// Identical collectives on an idle system take identical time: a data-parallel step all-reduces
// buckets of one size one after another, each alone on the fabric (the transformers' layers make
// dozens of equal buckets). The first of a kind is simulated; the next ones are replayed: the
// caller's thread waits the recorded duration, and what it counted (the statistics' counters, the
// flow network's link loads) is counted again.
// Exact, and taken only where it is: with timing-only chips, when both the recorded and the
// replayed collective start quiet (no callback due but stale timers such as the retransmission
// deadlines of acknowledged QPs, no SystemC process due before them) and the recorded one ended
// quiet too, for the same spec on the same communicator, on a network that comes back to the same
// state once drained (no ECN mark decided yet, no random losses: a flow network always). Detailed
// chips do set-up work the first time a collective runs, so there a kind is replayed once two in
// a row took as long. The simulator is deterministic and its quiet models keep no absolute time,
// so the replayed durations are the simulated ones to the picosecond (tests hold steps against
// their fully simulated twins on both networks).
// Through congestion (an opt-in): once a switch has decided an ECN mark, the network no longer
// comes back to the same state (the marking stream has moved, DCQCN rates recover from cuts), so
// exactness is gone; replaying then still requires the quiet starts and ends, and a replayed
// collective takes the time its recorded twin took, with that twin's marks and CNPs counted again.
// It is an approximation, as sampling is: docs/training.md measures its agreement.
// Ignores (not replayed): the trace's spans and the statistics that are not counters (callers turn
// replay off with --trace and --stats); through congestion, the replayed collective's effect on
// the marking streams and on the DCQCN rates of the collectives after it.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "collectives/communicator.h"
#include "core/units.h"
#include "hw/flow/flow_network.h"

namespace podsim::training {

// What may be replayed: nothing, what replays exactly, or that and collectives after ECN marks.
enum class ReplayMode { kOff, kExact, kThroughCongestion };

class CollectiveReplay {
 public:
  // Replays nothing unless enabled, and then only on timing-only systems.
  explicit CollectiveReplay(ReplayMode mode) : mode_(mode) {}

  // From a SystemC thread: runs `spec` on `comm`, or replays it; returns once every host knows
  // it ended, with its duration. Throws std::runtime_error when it fails.
  core::TimePs run(collectives::Communicator& comm, const collectives::Spec& spec);

  int simulated() const { return simulated_; }
  int replayed() const { return replayed_; }

 private:
  using Key = std::tuple<const collectives::Communicator*, int, int, int, int, std::uint64_t, bool,
                         std::uint64_t, std::uint64_t, int, int, int, int, int, int>;
  struct Record {
    core::TimePs duration = 0;
    bool confirmed = false;  // to be replayed
    std::vector<std::uint64_t> counters_before, counters_after;
    std::vector<double> carried_before, carried_after;
  };
  static Key key(const collectives::Communicator& comm, const collectives::Spec& spec);
  static bool replayable(collectives::Communicator& comm);
  bool idle(collectives::Communicator& comm) const;
  static bool needs_confirmation(collectives::Communicator& comm);
  void replay(flow::FlowNetwork* network, const Record& r);

  ReplayMode mode_;
  std::map<Key, Record> records_;
  int simulated_ = 0, replayed_ = 0;
};

}  // namespace podsim::training
