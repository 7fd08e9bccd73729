// Packs instructions written with sequential meaning into bundles for the exposed pipeline:
// each instruction goes into the first bundle where its slot is free, the bundle's immediate
// agrees, and every dependence on earlier instructions is honoured (a read waits out the
// writer's latency; a write never lands before an earlier read or write of its register; memory
// operations keep their order, a load after a store waits a bundle, a fence separates what
// comes before it from what comes after). A block ends at a label or after a loop, jump or
// halt, which takes the block's last bundle; the block is padded until every result has landed,
// so the next block again sees sequential meaning. A loop's body is not: it is padded only as far
// as its next pass needs (a read of what the pass before wrote, a write after the pass before's
// write of the same register), and what still lands after its last pass is the residual the
// block after the loop waits out (tpc_llvm schedules loops the same way: the exposed pipeline
// runs on across a hardware loop's end).
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
  int residual = 0;            // a loop body: bundles after its end until every result lands
};

// Latencies are those of `generation` (isa.yaml). `loop_body`: the block is a loop's whole body,
// run again right after itself.
BlockSchedule schedule_block(const std::vector<ScheduleItem>& block, Generation generation,
                             bool loop_body = false);

}  // namespace podsim::tpc
