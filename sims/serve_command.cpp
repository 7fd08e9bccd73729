// `podsim serve`: one simulated box whose devices several client processes share, each a
// program under the LD_PRELOAD shim with PODSIM_SERVER set to the server's socket (the ranks of a
// job on one box, each on its own device, in one simulated time). Runs until interrupted.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include "shim/remote_server.h"
#include "sims/command.h"

namespace podsim::sims {
namespace {

driver::shim::RemoteServer* serving = nullptr;

extern "C" void stop_serving(int) {
  if (serving != nullptr) serving->stop();
}

// A socket only its user reaches, in a folder of that user's: $XDG_RUNTIME_DIR, or /tmp's
// podsim-<uid> (made 0700).
std::string default_socket() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && *runtime != '\0') return std::string(runtime) + "/podsim.sock";
  const std::string folder = "/tmp/podsim-" + std::to_string(geteuid());
  mkdir(folder.c_str(), 0700);
  struct stat st {};
  if (stat(folder.c_str(), &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    throw UsageError(folder + " is not a folder only you can reach: give --socket PATH");
  }
  return folder + "/server.sock";
}

class ServeCommand : public Command {
 public:
  std::string socket;
  int devices = 0;

  int run(const GlobalOptions& options) override {
    GlobalOptions chosen = options;
    if (!options.system_given) chosen.system = "hls1";  // what the Gaudi1 clients expect
    const auto loaded = chosen.load_system();
    const int chips = loaded.config.box.chips;
    if (devices < 0 || devices > chips) {
      throw UsageError(fmt::format("--devices {}: 1 to {} (the box's chips)", devices, chips));
    }
    driver::shim::ModelServer::Setup setup;
    setup.system = loaded.config;
    setup.devices = devices == 0 ? std::min(chips, 16) : devices;
    const std::string path = socket.empty() ? default_socket() : socket;
    auto* model = new driver::shim::ModelServer([setup] { return setup; });  // lives to the end
    if (model->devices() == 0) return 1;                                     // it said why
    std::unique_ptr<driver::shim::RemoteServer> server;
    try {
      server = std::make_unique<driver::shim::RemoteServer>(*model, path);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--socket: ") + e.what());
    }
    serving = server.get();
    std::signal(SIGINT, stop_serving);
    std::signal(SIGTERM, stop_serving);
    if (!options.quiet) {
      fmt::print(
          "podsim serve: {} device{} of {} ({}) at {}\n"
          "clients: LD_PRELOAD=<build>/shim/libpodsim-accel.so PODSIM_SERVER={} PROGRAM\n",
          setup.devices, setup.devices == 1 ? "" : "s", chosen.system, loaded.config.chip.name,
          path, path);
      std::fflush(stdout);
    }
    server->run();
    serving = nullptr;
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> add_serve_command(CLI::App& app) {
  auto command = std::make_unique<ServeCommand>();
  auto* sub = app.add_subcommand(
      "serve",
      "Serve the first box's devices to client processes under the driver shim, in one "
      "simulation (system default: hls1)");
  sub->add_option("--socket", command->socket,
                  "the Unix socket to listen on (default $XDG_RUNTIME_DIR/podsim.sock or "
                  "/tmp/podsim-UID/server.sock); must not exist");
  sub->add_option("--devices", command->devices,
                  "how many of the box's chips to serve (default all, at most 16)")
      ->check(CLI::PositiveNumber);
  command->subcommand = sub;
  return command;
}

}  // namespace podsim::sims
