// Packs instructions written with sequential meaning into bundles for the exposed pipeline:
// each instruction goes into the first bundle where its slot is free, the bundle's immediate
// agrees, and every dependence on earlier instructions is honoured (a read waits out the
// writer's latency; a write never lands before an earlier read or write of its register; memory
// operations keep their order, a load after a store waits a bundle, a fence separates what
// comes before it from what comes after). A block ends at a label or after a loop, jump or
// halt, which takes the block's last bundle; the block is padded until every result has landed,
// so the next block again sees sequential meaning.
// Plain C++: the assembler feeds it blocks, tests drive it directly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/tpc/isa.h"

namespace podsim::tpc {

struct ScheduleItem {
  Instruction instruction;
  // What the instruction needs in the bundle's immediate: a value, or a label (not known yet,
  // so it shares the bundle's immediate with nobody).
  std::optional<std::uint32_t> immediate;
  bool label = false;
};

struct BlockSchedule {
  std::vector<int> bundle_of;  // per item, its bundle within the block
  int bundles = 0;             // the block's length, padding included
};

// Latencies are those of `generation` (isa.yaml).
BlockSchedule schedule_block(const std::vector<ScheduleItem>& block, Generation generation);

}  // namespace podsim::tpc
