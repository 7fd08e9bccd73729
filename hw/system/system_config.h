// The description of a system: which chip, how many in a box, how the box wires them, and how
// many ports each chip keeps for scale-out. Captures the box-level facts of hardware.md
// section 3 (HLS-1, HLS-2, HLS-3). Ignores switches, racks and multi-box fabrics, which arrive
// with the network fabric model; scale-out ports are counted but not yet connected.
#pragma once

#include <string>

#include "hw/chip/chip_config.h"
#include "hw/core/config_binding.h"
#include "hw/core/config_tree.h"

namespace podsim::system {

enum class BoxWiring { kAllToAll, kNone };

struct BoxConfig {
  int chips = 8;
  BoxWiring wiring = BoxWiring::kAllToAll;
  int links_per_peer = 1;
  template <class V>
  void describe(V& v) {
    v.field("chips", chips, core::Spec("chips in one box").range(1, 64).source("hardware.md 3"));
    v.choice("wiring", wiring,
             core::Choices<BoxWiring>{{"all-to-all", BoxWiring::kAllToAll},
                                      {"none", BoxWiring::kNone}},
             core::Spec("how the box joins its chips' scale-up ports"));
    v.field("links_per_peer", links_per_peer,
            core::Spec("direct links between each pair of chips (all-to-all wiring)")
                .range(1, 64)
                .source("hardware.md 3"));
  }
};

struct ScaleOutConfig {
  int ports_per_chip = 0;
  template <class V>
  void describe(V& v) {
    v.field("ports_per_chip", ports_per_chip,
            core::Spec("NIC ports per chip reserved for scale-out").range(0, 256).source(
                "hardware.md 3"));
  }
};

struct SystemConfig {
  std::string name;
  std::string description;
  chip::ChipConfig chip;
  BoxConfig box;
  ScaleOutConfig scale_out;

  template <class V>
  void describe(V& v) {
    v.field("name", name, core::Spec("system name").required());
    v.field("description", description, core::Spec("one line about the system"));
    v.section("chip", chip, core::Spec("the chip preset and its overrides").required());
    v.section("box", box, core::Spec("chips per box and their wiring"));
    v.section("scale_out", scale_out, core::Spec("ports that leave the box"));
  }

  // NIC ports a chip needs for its box wiring.
  int scale_up_ports_per_chip() const {
    return box.wiring == BoxWiring::kAllToAll ? (box.chips - 1) * box.links_per_peer : 0;
  }

  void check(core::ConfigChecks& c) const {
    const int needed = scale_up_ports_per_chip() + scale_out.ports_per_chip;
    if (needed > chip.nic.ports) {
      c.fail("chip.nic.ports",
             "the system needs " + std::to_string(needed) + " NIC ports per chip (" +
                 std::to_string(scale_up_ports_per_chip()) + " scale-up + " +
                 std::to_string(scale_out.ports_per_chip) + " scale-out) but the chip has " +
                 std::to_string(chip.nic.ports));
    }
  }
};

// Presets and files for systems; a system's `chip:` key holds a chip preset.
core::ConfigLoader make_system_loader();

// Loads --system NAME|FILE with --set overrides and binds it; throws core::ConfigError.
struct LoadedSystem {
  core::ConfigNode tree;
  SystemConfig config;
};
LoadedSystem load_system(const std::string& name_or_file, const std::vector<std::string>& overrides,
                         core::BindChecks checks = core::BindChecks::kAll);

}  // namespace podsim::system
