// `podsim config`: the fully resolved configuration as YAML, after `extends:` and --set, with
// every key the files leave out shown at its default.
#include <fmt/format.h>

#include <iostream>

#include "sims/command.h"

namespace podsim::sims {
namespace {

// Every key of a system file as a Markdown table; docs/configuration.md embeds this output.
std::string schema_table() {
  std::string table =
      "| key | type | default | range | meaning | source |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& row : core::config_schema<collectives::SystemFile>()) {
    table += fmt::format(
        "| `{}` | {} | {} | {} | {} | {} |\n", row.path, row.kind,
        row.required ? "required" : (row.default_text.empty() ? "\"\"" : row.default_text),
        row.range, row.doc, row.source);
  }
  return table;
}

class ConfigCommand : public Command {
 public:
  explicit ConfigCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "config", "Print the resolved configuration (after extends and --set) as YAML");
    subcommand->add_flag("--schema", schema_,
                         "print every configuration key with its type, default and meaning");
  }

  int run(const GlobalOptions& options) override {
    if (schema_) {
      std::cout << schema_table();
      return 0;
    }
    // Keys are checked one by one; rules across keys only warn, so that a configuration can be
    // inspected while it is being edited into shape.
    const auto system = options.load_system(core::BindChecks::kKeysOnly);
    const collectives::SystemFile file{system.config, system.tuning};
    const std::string yaml = core::print_config(file, system.tree);
    if (!options.json_file.empty()) {
      throw UsageError("--json: 'config' prints YAML; redirect its output to keep it");
    }
    std::cout << yaml;
    for (const auto& problem : core::cross_key_problems(file, system.tree)) {
      std::cerr << problem.to_string("warning") << " (simulations will refuse this)\n";
    }
    return 0;
  }

 private:
  bool schema_ = false;
};

}  // namespace

std::unique_ptr<Command> add_config_command(CLI::App& app) {
  return std::make_unique<ConfigCommand>(app);
}

}  // namespace podsim::sims
