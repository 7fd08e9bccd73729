#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/units.h"
#include "sims/command.h"
#include "sims/parallel/mpi_session.h"

namespace podsim::sims {
namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;

void add_global_options(CLI::App& app, GlobalOptions& o) {
  app.add_option("--system", o.system, "system preset name or YAML file")
      ->capture_default_str()
      ->type_name("NAME|FILE");
  app.add_option("--set", o.overrides,
                 "override a configuration key, e.g. --set chip.nic.ports=20 (repeatable)")
      ->type_name("KEY=VALUE")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--seed", o.seed, "seed for every random choice in the run")
      ->capture_default_str();
  app.add_option("--stats", o.stats_file, "write every module's statistics (.json or .csv)")
      ->type_name("FILE");
  app.add_option("--trace", o.trace_file, "write a Chrome/Perfetto JSON timeline")
      ->type_name("FILE");
  app.add_option("--log", o.log_spec,
                 "log levels, e.g. info or hbm=debug,fabric=trace (levels: error, warning, "
                 "info, debug, trace)")
      ->type_name("SPEC");
  app.add_option("--json", o.json_file, "write the command's results as JSON")->type_name("FILE");
  app.add_flag("-q,--quiet", o.quiet, "print only results and errors; no progress bar");
  static const std::map<std::string, system::NetworkMode> networks{
      {"packet", system::NetworkMode::kPacket}, {"flow", system::NetworkMode::kFlow}};
  app.add_option("--network", o.network,
                 "how frames cross the fabric: packet (every frame through switches and links) "
                 "or flow (each message one flow sharing links max-min fairly: much faster, no "
                 "congestion dynamics; docs/network.md)")
      ->transform(CLI::CheckedTransformer(networks, CLI::ignore_case))
      ->type_name("packet|flow");
  app.add_flag("--lock-step", o.lock_step,
               "enter the SystemC kernel at every simulated time callbacks are due (slower; the "
               "results are the same, which this checks)");
}

void set_up_logging(const GlobalOptions& o) {
  std::string error;
  std::string spec = o.log_spec.empty() ? (o.quiet ? "warning" : "info") : o.log_spec;
  const auto levels = core::parse_log_spec(spec, &error);
  if (!levels) throw UsageError("--log " + o.log_spec + ": " + error);
  core::set_log_levels(*levels);
  core::install_report_handler();
}

// An output file must be creatable before anything runs, so a long simulation never ends in a
// write error.
void check_writable(const char* flag, const std::string& file) {
  if (file.empty()) return;
  const auto dir = std::filesystem::absolute(file).parent_path();
  if (!std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("{} {}: cannot create the file: '{}' is not a writable directory",
                                 flag, file, dir.string()));
  }
}

void check_outputs_apply(const GlobalOptions& o, const Command& command, const std::string& name) {
  check_writable("--json", o.json_file);
  check_writable("--stats", o.stats_file);
  check_writable("--trace", o.trace_file);
  const auto ext = std::filesystem::path(o.stats_file).extension();
  if (!o.stats_file.empty() && ext != ".json" && ext != ".csv") {
    throw UsageError(fmt::format("--stats {}: use a .json or .csv file", o.stats_file));
  }
  if (command.simulates()) return;
  for (const auto& [flag, file] : {std::pair{"--stats", o.stats_file}, {"--trace", o.trace_file}}) {
    if (!file.empty()) {
      throw UsageError(fmt::format("{} {}: '{}' runs no simulation, so there is nothing to record",
                                   flag, file, name));
    }
  }
}

int run_parsed(CLI::App& app, const GlobalOptions& options,
               const std::vector<std::unique_ptr<Command>>& commands) {
  for (const auto& command : commands) {
    if (!command->subcommand->parsed()) continue;
    if (options.mpi && !command->runs_under_mpirun()) {
      throw UsageError(fmt::format(
          "'{}' runs in one process; under mpirun only 'net' and 'collective' split their system "
          "among processes, and 'sweep' its points (run '{}' without mpirun, or with -np 1)",
          command->subcommand->get_name(), command->subcommand->get_name()));
    }
    agree_on(options,
             [&] { check_outputs_apply(options, *command, command->subcommand->get_name()); });
    set_up_logging(options);
    return command->run(options);
  }
  std::cerr << app.help();
  return kExitBadInput;
}

}  // namespace

void agree_on(const GlobalOptions& options, const std::function<void()>& check) {
  std::string error;
  try {
    check();
  } catch (const UsageError& e) {
    if (!options.mpi) throw;
    error = e.what();
  }
  if (!options.mpi) return;
  std::string first;
  for (const auto& said : options.mpi->gather(error)) {
    if (first.empty()) first = said;
  }
  std::vector<std::uint64_t> failed{error.empty() ? 0u : 1u};
  options.mpi->sum(failed);
  if (failed[0] == 0) return;
  throw UsageError(!first.empty()  ? first
                   : error.empty() ? "another process refused the run"
                                   : error);
}

void write_output_file(const std::string& path, const std::string& text) {
  try {
    core::write_file_atomically(path, text);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

namespace {

// nccl-tests' sizes: plain bytes ("4096"), or a K, M, G or T suffix for powers of 1024 ("128M").
std::optional<std::uint64_t> parse_nccl_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 19 || text.size() > digits + 1) return std::nullopt;
  const std::string suffix = text.substr(digits);
  int shift = 0;
  if (!suffix.empty()) {
    const auto at = std::string("KMGT").find(static_cast<char>(std::toupper(suffix[0])));
    if (at == std::string::npos) return std::nullopt;
    shift = 10 * (static_cast<int>(at) + 1);
  }
  const std::uint64_t value = std::stoull(text.substr(0, digits));
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    return std::nullopt;
  return value << shift;
}

}  // namespace

std::uint64_t parse_size_option(const std::string& flag, const std::string& text) {
  std::uint64_t bytes = 0;
  if (const auto nccl = parse_nccl_size(text)) {
    bytes = *nccl;
  } else {
    std::string error;
    const auto size = core::parse_byte_size(text, &error);
    if (!size) {
      throw UsageError(fmt::format("{} {}: {}; or plain bytes, or nccl-tests' K, M, G suffixes",
                                   flag, text, error));
    }
    bytes = size->bytes;
  }
  if (bytes == 0) throw UsageError(flag + " must be greater than zero");
  return bytes;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

namespace {

// MPI, when mpirun started this process; its other ranks print nothing to stdout (rank 0
// reports the run).
std::unique_ptr<parallel::MpiSession> start_mpi(int& argc, char**& argv) {
  if (!parallel::MpiSession::launched_by_mpirun()) return nullptr;
  auto mpi = std::make_unique<parallel::MpiSession>(argc, argv);
  if (mpi->rank() != 0 && !std::freopen("/dev/null", "w", stdout)) {
    throw std::runtime_error("cannot silence the standard output of a rank other than 0");
  }
  return mpi;
}

}  // namespace

int run_podsim(int argc, char** argv) {
  CLI::App app{
      "podsim: a timing-accurate model of Gaudi-class accelerator clusters.\n"
      "Run 'podsim COMMAND --help' for a command's options.",
      "podsim"};
  app.require_subcommand(1);
  GlobalOptions options;
  add_global_options(app, options);
  std::vector<std::unique_ptr<Command>> commands;
  for (auto add : {add_info_command, add_config_command, add_selftest_command, add_net_command,
                   add_collective_command, add_kernel_command, add_run_command, add_serve_command,
                   add_sweep_command, add_plot_command, add_train_command, add_validate_command}) {
    commands.push_back(add(app));
    commands.back()->subcommand->fallthrough()->footer(
        "Global options, accepted before or after the command (see podsim --help):\n"
        "  --system NAME|FILE  --set KEY=VALUE  --seed N  --stats FILE  --trace FILE\n"
        "  --log SPEC  --json FILE  -q,--quiet  --lock-step  --network packet|flow");
  }
  std::unique_ptr<parallel::MpiSession> mpi;
  try {
    mpi = start_mpi(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "podsim: cannot start MPI: " << e.what() << "\n";
    return kExitFailure;
  }
  if (mpi && mpi->size() > 1) options.mpi = mpi.get();
  // Every process of an mpirun meets the same bad input; rank 0 alone says so.
  const bool reports = !mpi || mpi->rank() == 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!reports) return e.get_exit_code() == 0 ? 0 : kExitBadInput;
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  options.system_given = app.get_option("--system")->count() > 0;
  try {
    return run_parsed(app, options, commands);
  } catch (const core::ConfigError& e) {
    for (const auto& d : e.diagnostics()) {
      if (reports) std::cerr << d.to_string() << "\n";
    }
    return kExitBadInput;
  } catch (const UsageError& e) {
    if (reports) std::cerr << "podsim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "podsim: internal error" << (mpi ? fmt::format(" (rank {})", mpi->rank()) : "")
              << ": " << e.what() << "\n";
    // The other processes may be waiting for this one in a window's exchange.
    if (options.mpi) options.mpi->abort(kExitFailure);
    return kExitFailure;
  }
}

}  // namespace podsim::sims
