// Engines' tests run work on a chip as every program does: through the driver and a Synapse
// runtime on chip 0's host (synapse/single_node.h for one kernel or MME operation).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/units.h"
#include "hw/system/system_model.h"
#include "synapse/runtime.h"
#include "synapse/single_node.h"

namespace podsim::test {

// Runs `program` on chip 0's host with the device probed and opened and a runtime over it, then
// simulates until nothing is left; returns what the program threw, or empty.
std::string with_runtime(system::SystemModel& model,
                         const std::function<void(synapse::Runtime&)>& program);

// The span of the TPCs' (or MMEs') work on chip 0 so far: the first start to the last end.
core::TimePs tpc_span(system::SystemModel& model);
core::TimePs mme_span(system::SystemModel& model);

// The buffers a plan's graph node takes (all but scratch), and back into the plan's order.
std::vector<std::vector<std::uint8_t>> node_buffers(
    const tpc::KernelPlan& plan, const std::vector<std::vector<std::uint8_t>>& all);

}  // namespace podsim::test
