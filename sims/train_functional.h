// `podsim train --functional` once its options are checked and its workers placed: the replicas
// and the one chip beside them trained for real, and the report (train_functional.cpp).
#pragma once

#include <string>

#include "collectives/system_file.h"
#include "hw/system/topology.h"
#include "sims/command.h"
#include "training/cluster.h"
#include "training/functional.h"
#include "training/model.h"

namespace podsim::sims {

// Elaborates `system` (its `topology`) in functional mode, trains, reports; the exit status.
// Throws UsageError when the replicas cannot run as placed.
int train_functionally(const GlobalOptions& options, const collectives::LoadedSystemFile& system,
                       system::Topology topology, const training::Model& model,
                       const training::Placement& placement, const training::FunctionalOptions& o,
                       const std::string& strategy);

}  // namespace podsim::sims
