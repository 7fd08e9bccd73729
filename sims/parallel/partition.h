// How a system is split among the processes of an MPI-parallel packet-level run: whole boxes to
// each process (contiguous runs of boxes, so a rack stays together when the counts allow), each
// switch to the process holding most of the ports it is cabled to, and the cables between
// processes' parts cut. Frames crossing a cut are handed over between windows of simulated
// time; the shortest cut cable's propagation delay is the lookahead that makes the windows safe.
// Captures: the assignment, the cut cables and the lookahead, and a description of the choice
// for the user. Ignores: load measured at run time (parts are balanced by chips and switches).
#pragma once

#include <string>
#include <vector>

#include "core/units.h"
#include "hw/system/topology.h"

namespace podsim::parallel {

struct Partition {
  int parts = 1;
  int boxes = 0;
  std::vector<int> part_of_node;  // by topology node
  std::vector<int> part_of_chip;
  std::vector<int> first_box;     // of each part; the part holds boxes first_box[p] up to the next
  std::vector<int> cut_links;     // topology links whose ends lie in different parts
  core::TimePs lookahead_ps = 0;  // the shortest cut link's propagation delay

  bool owns_chip(int part, int chip) const {
    return part_of_chip[static_cast<std::size_t>(chip)] == part;
  }
  // "2 processes, by box: boxes 0-7 | 8-15; 384 cables cut, lookahead 1 us"
  std::string describe() const;
};

// Splits `topology` into `parts` parts of whole boxes. Throws std::invalid_argument when there are
// fewer boxes than parts, or when a cut cable's delay is under 2 ps (no lookahead to work with).
Partition partition_by_box(const system::Topology& topology, int parts);

}  // namespace podsim::parallel
