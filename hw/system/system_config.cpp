#include "hw/system/system_config.h"

namespace podsim::system {

core::ConfigLoader make_system_loader() {
  core::ConfigLoader loader(core::ConfigLoader::default_config_dirs());
  loader.nest("systems", "chip", "chips");
  return loader;
}

}  // namespace podsim::system
