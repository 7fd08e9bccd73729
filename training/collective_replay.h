// Identical collectives on an idle system take identical time: a data-parallel step all-reduces
// buckets of one size one after another, each alone on the fabric (the transformers' layers make
// dozens of equal buckets). The first of a kind is simulated; the next ones are replayed: the
// caller's thread waits the recorded duration, and what it counted (the statistics' counters, the
// flow network's link loads) is counted again.
// Exact, and taken only where it is: on the flow network, with timing-only chips, when both the
// recorded and the replayed collective start with nothing pending (no callback in the event queue,
// no SystemC activity but the caller's) and the recorded one ended with nothing pending either,
// for the same spec on the same communicator. The simulator is deterministic and its idle models
// keep no absolute time, so the replayed durations are the simulated ones to the picosecond (a
// test holds a step against its fully simulated twin).
// Ignores (not replayed): the trace's spans and the statistics that are not counters (callers turn
// replay off with --trace and --stats), a packet network's state.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "collectives/communicator.h"
#include "hw/core/units.h"
#include "hw/flow/flow_network.h"

namespace podsim::training {

class CollectiveReplay {
 public:
  // Replays nothing unless `enabled`, and then only on timing-only flow networks.
  explicit CollectiveReplay(bool enabled) : enabled_(enabled) {}

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
    std::vector<std::uint64_t> counters_before, counters_after;
    std::vector<double> carried_before, carried_after;
  };
  static Key key(const collectives::Communicator& comm, const collectives::Spec& spec);
  static bool replayable(collectives::Communicator& comm);
  static bool idle();
  void replay(flow::FlowNetwork& network, const Record& r);

  bool enabled_;
  std::map<Key, Record> records_;
  int simulated_ = 0, replayed_ = 0;
};

}  // namespace podsim::training
