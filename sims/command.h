// What every `podsim` subcommand shares: the global options, a way to report bad input, and the
// interface a subcommand implements.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/system_file.h"
#include "hw/system/model_options.h"

namespace podsim::parallel {
class MpiSession;
}

namespace podsim::sims {

struct GlobalOptions {
  std::string system = "hls2";
  std::vector<std::string> overrides;  // --set KEY=VALUE, in order
  std::uint64_t seed = 1;
  std::string stats_file;
  std::string trace_file;
  std::string log_spec;
  std::string json_file;
  bool quiet = false;
  bool lock_step = false;  // keep the event queue in step with the SystemC kernel
  system::NetworkMode network = system::NetworkMode::kPacket;
  bool system_given = false;  // --system was on the command line
  // Set when mpirun started this process among others (sims/parallel): the command simulates its
  // part of the system, and only rank 0 reports.
  const parallel::MpiSession* mpi = nullptr;

  system::ModelOptions model_options(bool functional) const { return {seed, functional, network}; }

  collectives::LoadedSystemFile load_system(
      core::BindChecks checks = core::BindChecks::kAll) const {
    return collectives::load_system_file(system, overrides, checks);
  }
};

// A bad argument: reported as "podsim: error: ..." with exit status 2, before anything runs.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Command {
 public:
  virtual ~Command() = default;
  // Runs after the command line parsed; returns the exit status.
  virtual int run(const GlobalOptions& options) = 0;
  // Whether the command runs a simulation (and so can write --stats and --trace).
  virtual bool simulates() const { return false; }
  // Whether it splits its system among the processes of an mpirun.
  virtual bool runs_under_mpirun() const { return false; }

  CLI::App* subcommand = nullptr;  // set when the command registers itself
};

// Each subcommand registers itself and its options on the application.
std::unique_ptr<Command> add_info_command(CLI::App& app);
std::unique_ptr<Command> add_config_command(CLI::App& app);
std::unique_ptr<Command> add_selftest_command(CLI::App& app);
std::unique_ptr<Command> add_net_command(CLI::App& app);
std::unique_ptr<Command> add_collective_command(CLI::App& app);
std::unique_ptr<Command> add_kernel_command(CLI::App& app);
std::unique_ptr<Command> add_run_command(CLI::App& app);
std::unique_ptr<Command> add_serve_command(CLI::App& app);
std::unique_ptr<Command> add_sweep_command(CLI::App& app);
std::unique_ptr<Command> add_plot_command(CLI::App& app);
std::unique_ptr<Command> add_train_command(CLI::App& app);
std::unique_ptr<Command> add_validate_command(CLI::App& app);

// Runs `check`, which may throw UsageError, on every process of an mpirun and makes the verdict
// common: when it failed on any of them, it fails on all, with the first failure's message (so
// that no process goes on to wait for one that stopped). Without mpirun, just runs it.
void agree_on(const GlobalOptions& options, const std::function<void()>& check);

// Writes `text` to `path` whole or not at all; a failure is reported as a UsageError.
void write_output_file(const std::string& path, const std::string& text);
// A size given to option `flag`: a size with a unit ("1MiB"), plain bytes ("4096") or nccl-tests'
// K/M/G/T suffixes for powers of 1024 ("128M"); a UsageError naming the option when it is not one
// or is zero.
std::uint64_t parse_size_option(const std::string& flag, const std::string& text);
// CPU seconds this process has used so far (user and system).
double cpu_seconds();

// The podsim command line; returns the process exit status.
int run_podsim(int argc, char** argv);

}  // namespace podsim::sims
