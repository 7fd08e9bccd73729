// What a host-staged strategy (data_parallel.h) runs on beside the workers' chips: the boxes'
// PCIe trees as a rate model (hw/system/pcie_staging.h) and, when the workers span several
// hosts (each box's, or its servers' with host.servers), the hosts' front-end network
// (hw/system/host_network.h) elaborated as a system of its own with a communicator over the hosts
// the workers use, in the order their first ranks come. Captures: which host serves which rank, the
// hosts' collectives run on their modeled NICs and switches with the host CPU's reductions.
// Ignores: nothing of its own; see the models it builds.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/tuning.h"
#include "hw/system/model_options.h"
#include "hw/system/pcie_staging.h"
#include "hw/system/system_config.h"
#include "hw/system/system_model.h"
#include "training/data_parallel.h"

namespace podsim::training {

class HostStaging {
 public:
  // For workers on `chips` of `system` (rank r on chips[r]). The hosts' system is elaborated with
  // `options` (its chips coarse: a host's NICs and CPU) when the workers span several hosts.
  // Throws std::invalid_argument naming the host.network key when the hosts cannot be wired.
  HostStaging(const system::SystemConfig& system, const std::vector<int>& chips,
              system::ModelOptions options, const collectives::TuningConfig& tuning = {});
  ~HostStaging();

  HostPath path() { return path_; }
  int hosts() const { return hosts_; }
  // "2 hosts over a front-end network of 2 x 100 Gb/s ports each (roce); PCIe staging over each
  // box's tree" (or over the chips' switches, through gateways: the parts' own words), for
  // reports.
  std::string description() const { return description_; }

 private:
  system::PcieStaging staging_;
  std::unique_ptr<system::SystemModel> network_;
  std::unique_ptr<collectives::Communicator> comm_;
  HostPath path_;
  int hosts_ = 0;
  std::string description_;
};

}  // namespace podsim::training
