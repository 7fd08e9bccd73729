// A whole system as SystemC modules, elaborated from its topology: per chip a RoCE NIC with all
// of its ports and the memory its payload moves through, a switch per switch node with its
// forwarding table, and a link per cable.
// Captures: every port wired as the topology says, endpoint addresses, per-component seeds
// mixed from the run seed (so switches and links draw independent streams, and one seed
// reproduces a run), and per chip the reduction engine and sequencer that run collectives. Ignores:
// the chips' engines (TPC, MME, DMA), which arrive with their models; until then the memory behind
// each NIC is a MemoryTarget with the chip's HBM bandwidth (or, for a host without HBM, its PCIe
// bandwidth).
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "hw/chip/reduction_engine.h"
#include "hw/chip/sequencer.h"
#include "hw/core/memory_target.h"
#include "hw/fabric/link.h"
#include "hw/fabric/switch.h"
#include "hw/roce/nic.h"
#include "hw/system/system_config.h"
#include "hw/system/topology.h"

namespace podsim::system {

// The memory behind a chip's NIC: HBM when the chip has it, else host memory over PCIe.
core::MemoryTargetConfig chip_memory_config(const SystemConfig& config);

struct ModelOptions {
  std::uint64_t seed = 1;
};

class SystemModel : public sc_core::sc_module {
 public:
  SystemModel(sc_core::sc_module_name name, const SystemConfig& config, Topology topology,
              const ModelOptions& options);

  const SystemConfig& config() const { return config_; }
  const Topology& topology() const { return topology_; }
  int chips() const { return topology_.chips; }
  roce::Nic& nic(int chip) { return *nics_[static_cast<std::size_t>(chip)]; }
  core::MemoryTarget& memory(int chip) { return *memories_[static_cast<std::size_t>(chip)]; }
  chip::ReductionEngine& reduction_engine(int chip) {
    return *engines_[static_cast<std::size_t>(chip)];
  }
  chip::Sequencer& sequencer(int chip) { return *sequencers_[static_cast<std::size_t>(chip)]; }
  // The switch of a topology node, or nullptr when the node is a NIC.
  fabric::Switch* switch_of_node(int node) {
    return switches_[static_cast<std::size_t>(node)].get();
  }
  fabric::Link& link(int index) { return *links_[static_cast<std::size_t>(index)]; }
  std::size_t links() const { return links_.size(); }
  // Endpoint address of a chip's port.
  fabric::EndpointId address(int chip, int port) const;

 private:
  void build_chips(const ModelOptions& options);
  void build_switches(const ModelOptions& options);
  void build_links(const ModelOptions& options);

  SystemConfig config_;
  Topology topology_;
  std::vector<std::unique_ptr<core::MemoryTarget>> memories_;
  std::vector<std::unique_ptr<roce::Nic>> nics_;
  std::vector<std::unique_ptr<chip::ReductionEngine>> engines_;
  std::vector<std::unique_ptr<chip::Sequencer>> sequencers_;
  std::vector<std::unique_ptr<fabric::Switch>> switches_;  // indexed by topology node
  std::vector<std::unique_ptr<fabric::Link>> links_;
};

}  // namespace podsim::system
