#include "collectives/system_file.h"

namespace podsim::collectives {

LoadedSystemFile load_system_file(const std::string& name_or_file,
                                  const std::vector<std::string>& overrides,
                                  core::BindChecks checks) {
  LoadedSystemFile loaded;
  loaded.tree = system::make_system_loader().load("systems", name_or_file, overrides);
  SystemFile file = core::bind_config<SystemFile>(loaded.tree, checks);
  loaded.config = std::move(file.system);
  loaded.tuning = std::move(file.collectives);
  return loaded;
}

}  // namespace podsim::collectives
