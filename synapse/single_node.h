// One TPC kernel of the library or one MME operation run on a device the way every program
// reaches it: as a graph of one node, compiled for the runtime's target (on fewer engines when
// asked), its operands in device memory the runtime allocated, copied in and read back through
// the runtime's copy streams in functional runs, launched on a compute stream. What `podsim
// kernel`, bench/compute and the engines' tests run.
// Captures: the launch as a user times it (events around it on its stream: submission, the
// recipe's first upload, the engines, the completion). Ignores nothing of the path; the engines'
// own span is the caller's to read off the chip (engine::EngineShell::first_start, last_end).
#pragma once

#include <cstdint>
#include <vector>

#include "hw/mme/operation.h"
#include "hw/tpc/kernels/library.h"
#include "synapse/runtime.h"

namespace podsim::synapse {

struct SingleNodeRun {
  core::TimePs launch_ps = 0;            // from before the launch to its completion
  std::vector<std::uint64_t> addresses;  // where the operands were (freed again), in order
  std::vector<std::string> notes;        // the compiler's (placements, fusions)
};

// Runs kernel `request` (tpc::plan_kernel's plan) on the first `engines` TPCs (all when 0).
// `buffers`: the plan's buffers other than scratch, in its order, copied in before and read back
// after (outputs and in-out ones); nullptr in timing-only runs (nothing is copied). Throws
// RuntimeError or std::invalid_argument naming what the device cannot run.
SingleNodeRun run_kernel(Runtime& runtime, const tpc::KernelRequest& request, int engines,
                         std::vector<std::vector<std::uint8_t>>* buffers);

// Runs `op` (its addresses ignored) on the first `engines` MMEs (all when 0). `operands`: A, B
// and C's bytes in the operation's layouts, C read back after; nullptr in timing-only runs.
SingleNodeRun run_mme(Runtime& runtime, const mme::MmeOperation& op, int engines,
                      std::vector<std::vector<std::uint8_t>>* operands);

}  // namespace podsim::synapse
