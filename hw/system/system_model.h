// A whole system as SystemC modules, elaborated from its topology: boxes of chips
// (system.box3.chip5, each a chip::Chip with its own blocks), a switch per switch node with its
// forwarding table, and a link per cable.
// Captures: every port wired as the topology says, endpoint addresses, per-component seeds
// mixed from the run seed (so switches and links draw independent streams, and one seed
// reproduces a run), and the system's mode (functional or timing only) handed to every chip;
// in flow mode, a flow::FlowNetwork over the same cables and routes instead of switches and links;
// and per box its host with the PCIe tree that holds the box's chips (host_side.h); with coarse
// chips (model_options.h), chips built network-side (no engines, queues or sync managers). Ignores:
// what is inside a chip (chip.h) and a host.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <systemc>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "hw/chip/chip.h"
#include "hw/fabric/link.h"
#include "hw/fabric/switch.h"
#include "hw/flow/flow_network.h"
#include "hw/roce/nic.h"
#include "hw/system/host_notices.h"
#include "hw/system/host_side.h"
#include "hw/system/model_options.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::system {

class SystemModel : public sc_core::sc_module {
 public:
  SystemModel(sc_core::sc_module_name name, const SystemConfig& config, Topology topology,
              const ModelOptions& options);
  ~SystemModel() override;

  const SystemConfig& config() const { return config_; }
  const Topology& topology() const { return topology_; }
  int chips() const { return topology_.chips; }
  bool functional() const { return functional_; }
  NetworkMode network_mode() const { return flow_ ? NetworkMode::kFlow : NetworkMode::kPacket; }
  ChipModel chip_model() const { return chip_model_; }
  // The flow-level network, or nullptr in packet mode.
  flow::FlowNetwork* flow_network() { return flow_.get(); }
  chip::Chip& chip(int index) { return *chips_[static_cast<std::size_t>(index)]; }
  roce::Nic& nic(int index) { return chip(index).nic(); }
  // The host of box `box`, whose PCIe tree holds the box's chips.
  HostSide& host(int box) { return *hosts_[static_cast<std::size_t>(box)]; }
  // The switch of a topology node, or nullptr when the node is a NIC (or in flow mode).
  fabric::Switch* switch_of_node(int node) {
    const auto n = static_cast<std::size_t>(node);
    return n < switches_.size() ? switches_[n].get() : nullptr;
  }
  fabric::Link& link(int index) { return *links_[static_cast<std::size_t>(index)]; }
  std::size_t links() const { return links_.size(); }  // 0 in flow mode
  // Wire bytes sent over topology link `index` from its `a` end (side 0) or its `b` end, in
  // either network mode.
  double link_bytes(int index, int side);
  // Whether the network's state comes back to the same after traffic has drained: no switch has
  // had to decide an ECN mark (so no generator has moved and no DCQCN rate has been cut) and no
  // link loses or corrupts frames at random. Always so in flow mode.
  bool congestion_free() const;
  // Endpoint address of a chip's port.
  fabric::EndpointId address(int chip, int port) const;

  // How the hosts tell one another what software spanning chips needs to know (host_notices.h).
  HostNotices& notices() { return *notices_; }
  // Whether this process simulates `chip` (all of them, unless a parallel run says otherwise):
  // software starts work only on the chips simulated here.
  bool simulates(int chip) const { return !simulated_ || simulated_(chip); }
  void set_simulated(std::function<bool(int chip)> simulated) { simulated_ = std::move(simulated); }

  // The one instance of T kept with this system, made as T(*this) on first use: how software
  // that runs on the system (the collectives library's launcher, which owns queues and sync
  // objects on every chip) is shared by all its users without hw/ knowing of it.
  template <class T>
  T& attached() {
    std::shared_ptr<void>& slot = attached_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(*this);
    return *static_cast<T*>(slot.get());
  }

 private:
  void build_chips();
  void build_switches(const ModelOptions& options);
  void build_links(const ModelOptions& options);
  void build_flow_network(const ModelOptions& options);

  SystemConfig config_;
  Topology topology_;
  bool functional_;
  ChipModel chip_model_;
  std::vector<std::unique_ptr<sc_core::sc_module>> boxes_;
  std::vector<std::unique_ptr<chip::Chip>> chips_;         // by chip index
  std::vector<HostSide*> hosts_;                           // by box, owned by their box module
  std::vector<std::unique_ptr<fabric::Switch>> switches_;  // indexed by topology node
  std::vector<std::unique_ptr<fabric::Link>> links_;
  std::unique_ptr<flow::FlowNetwork> flow_;
  std::unique_ptr<HostNotices> notices_;
  std::function<bool(int)> simulated_;
  std::map<std::type_index, std::shared_ptr<void>> attached_;
};

}  // namespace podsim::system
