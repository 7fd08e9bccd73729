#include "training/host_staging.h"

#include <fmt/format.h>

#include <algorithm>

#include "hw/system/host_network.h"
#include "hw/system/topology.h"

namespace podsim::training {

HostStaging::HostStaging(const system::SystemConfig& system, const std::vector<int>& chips,
                         system::ModelOptions options, const collectives::TuningConfig& tuning)
    : staging_(system) {
  std::vector<int> hosts;  // the hosts the workers use, in the order of their first ranks
  for (int chip : chips) {
    const int host = chip / system.chips_per_host();
    auto at = std::find(hosts.begin(), hosts.end(), host);
    if (at == hosts.end()) at = hosts.insert(hosts.end(), host);
    path_.host_of_rank.push_back(static_cast<int>(at - hosts.begin()));
  }
  hosts_ = static_cast<int>(hosts.size());
  path_.staging = &staging_;
  path_.reduce_bytes_per_s = system.host.cpu.reduce_bandwidth.bits_per_second / 8;
  path_.update_bytes_per_s = system.host.cpu.update_bandwidth.bits_per_second / 8;
  const system::HostNetworkConfig& n = system.host.network;
  description_ = fmt::format("{} host{}", hosts_, hosts_ == 1 ? "" : "s");
  if (hosts_ == 1) {
    description_ += "; " + staging_.description();
    return;
  }
  const system::SystemConfig config = system::host_network_system(system);
  options.chips = system::ChipModel::kCoarse;
  network_ = std::make_unique<system::SystemModel>("hosts", config, system::build_topology(config),
                                                   options);
  comm_ = std::make_unique<collectives::Communicator>(*network_, hosts, tuning);
  path_.hosts = comm_.get();
  description_ +=
      fmt::format(" over {} of {} x {:g} Gb/s ports each ({})",
                  n.attach == system::HostAttach::kScaleOut ? "the chips' scale-out switches, NICs"
                                                            : "a front-end network",
                  n.ports, n.port_speed.bits_per_second / 1e9,
                  n.transport == system::HostTransport::kTcp ? "tcp" : "roce");
  description_ += "; " + staging_.description();
}

HostStaging::~HostStaging() = default;

}  // namespace podsim::training
