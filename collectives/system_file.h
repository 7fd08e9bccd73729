// A system file as the collectives read it: the hardware that hw/system builds
// (system::SystemConfig, its keys at the top level) and the `collectives:` section with the
// `auto` tuning table, which belongs to this layer. Every command that reads a --system goes
// through here, so a file is checked whole, once.
#pragma once

#include <string>
#include <vector>

#include "collectives/tuning.h"
#include "core/config_binding.h"
#include "hw/system/system_config.h"

namespace podsim::collectives {

struct SystemFile {
  system::SystemConfig system;
  TuningConfig collectives;

  template <class V>
  void describe(V& v) {
    system.describe(v);
    v.section("collectives", collectives, core::Spec("how collectives pick their algorithm"));
  }
  void check(core::ConfigChecks& c) const { system.check(c); }
};

struct LoadedSystemFile {
  core::ConfigNode tree;
  system::SystemConfig config;
  TuningConfig tuning;
};
// Loads --system NAME|FILE with --set overrides and binds it; throws core::ConfigError.
LoadedSystemFile load_system_file(const std::string& name_or_file,
                                  const std::vector<std::string>& overrides,
                                  core::BindChecks checks = core::BindChecks::kAll);

}  // namespace podsim::collectives
