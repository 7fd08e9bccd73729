#include "hw/system/system_config.h"

namespace podsim::system {

core::ConfigLoader make_system_loader() {
  core::ConfigLoader loader(core::ConfigLoader::default_config_dirs());
  loader.nest("systems", "chip", "chips");
  return loader;
}

LoadedSystem load_system(const std::string& name_or_file, const std::vector<std::string>& overrides,
                         core::BindChecks checks) {
  LoadedSystem loaded;
  loaded.tree = make_system_loader().load("systems", name_or_file, overrides);
  loaded.config = core::bind_config<SystemConfig>(loaded.tree, checks);
  return loaded;
}

}  // namespace podsim::system
