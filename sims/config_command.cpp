// `podsim config`: the fully resolved configuration as YAML, after `extends:` and --set, with
// every key the files leave out shown at its default.
#include <fmt/format.h>

#include <iostream>

#include "sims/command.h"

namespace podsim::sims {
namespace {

class ConfigCommand : public Command {
 public:
  int run(const GlobalOptions& options) override {
    // Keys are checked one by one; rules across keys only warn, so that a configuration can be
    // inspected while it is being edited into shape.
    const auto system = options.load_system(core::BindChecks::kKeysOnly);
    const std::string yaml = core::print_config(system.config, system.tree);
    if (!options.json_file.empty()) {
      throw UsageError("--json: 'config' prints YAML; redirect its output to keep it");
    }
    std::cout << yaml;
    for (const auto& problem : core::cross_key_problems(system.config, system.tree)) {
      std::cerr << problem.to_string("warning") << " (simulations will refuse this)\n";
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_config_command(CLI::App& app) {
  auto command = std::make_unique<ConfigCommand>();
  command->subcommand = app.add_subcommand(
      "config", "Print the resolved configuration (after extends and --set) as YAML");
  return command;
}

}  // namespace podsim::sims
