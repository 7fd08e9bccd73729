// `podsim run`: a workload on chip 0 of a system, run the way an application runs it: the
// Synapse-like stack (synapse/) compiles its graphs to recipes and launches them through the
// driver (driver/), which reaches the chip only through PCIe. Prints each step's loss and
// simulated time, the engines' busy time and utilisation, HBM traffic, what the compiler did,
// and, with --check, the losses against the CPU reference.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "driver/device.h"
#include "driver/pci_probe.h"
#include "hw/chip/chip.h"
#include "hw/core/kernel.h"
#include "hw/core/stats.h"
#include "hw/core/trace.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"
#include "hw/system/topology.h"
#include "sims/command.h"
#include "sims/memory_budget.h"
#include "synapse/session.h"
#include "workloads/mlp.h"

namespace podsim::sims {
namespace {

// Host physical memory the driver keeps for itself and what the application allocates from.
constexpr driver::KernelMemory kDriverMemory{1ull << 30, 1ull << 30};
constexpr synapse::HostRegion kApplicationMemory{4ull << 30, 4ull << 30};

// What the engines and the HBM have done so far.
struct Activity {
  core::TimePs now = 0, device = 0;
  std::uint64_t tpc_busy = 0, mme_busy = 0, dma_busy = 0, hbm_bytes = 0;

  static Activity of(chip::Chip& c, const synapse::Session& s) {
    Activity a;
    a.now = core::now_ps();
    a.device = s.stats().device_time;
    for (int i = 0; i < c.tpc_cores(); ++i) a.tpc_busy += c.tpc(i).stats().busy_ps.value();
    for (int i = 0; i < c.mme_engines(); ++i) a.mme_busy += c.mme(i).stats().busy_ps.value();
    for (int i = 0; i < c.dma_engines(); ++i) a.dma_busy += c.dma(i).stats().busy_ps.value();
    if (c.hbm() != nullptr) a.hbm_bytes = c.hbm()->bytes_moved();
    return a;
  }
  Activity operator-(const Activity& o) const {
    return {now - o.now,           device - o.device,     tpc_busy - o.tpc_busy,
            mme_busy - o.mme_busy, dma_busy - o.dma_busy, hbm_bytes - o.hbm_bytes};
  }
};

struct StepRow {
  int step;
  double loss;
  Activity activity;
};

double percent(std::uint64_t busy, core::TimePs span, int engines) {
  return span > 0 && engines > 0
             ? 100.0 * static_cast<double>(busy) / (static_cast<double>(span) * engines)
             : 0.0;
}

class RunCommand : public Command {
 public:
  explicit RunCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "run", "train a workload on one chip through the driver and the Synapse-like stack");
    subcommand->add_option("--workload", workload_, "what to run")
        ->check(CLI::IsMember({"mlp"}))
        ->capture_default_str();
    subcommand->add_option("--steps", steps_, "training steps")->capture_default_str();
    subcommand->add_option("--mode", mode_, "eager: op by op; lazy: one graph per step")
        ->check(CLI::IsMember({"eager", "lazy"}))
        ->capture_default_str();
    subcommand->add_option("--layers", config_.layers, "mlp: inputs, hidden widths, classes")
        ->delimiter(',')
        ->type_name("N,N,...")
        ->capture_default_str();
    subcommand->add_option("--batch", config_.batch, "samples per step")->capture_default_str();
    subcommand->add_option("--dtype", dtype_, "f32, bf16 or f16")->capture_default_str();
    subcommand->add_option("--lr", config_.lr, "SGD learning rate")->capture_default_str();
    subcommand->add_option("--momentum", config_.momentum, "SGD momentum")->capture_default_str();
    subcommand->add_flag("--check", check_,
                         "train the same network on the CPU in double precision and compare "
                         "the losses");
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    const auto dtype = tpc::find_dtype(dtype_);
    if (!dtype) throw UsageError(fmt::format("--dtype {}: f32, bf16 or f16", dtype_));
    config_.dtype = *dtype;
    config_.seed = options.seed;
    if (auto p = config_.problem(); !p.empty()) throw UsageError("run mlp: " + p);
    if (steps_ < 1) throw UsageError("--steps must be at least 1");
    const std::string system_name = options.system_given ? options.system : "hls1";
    const auto system = collectives::load_system_file(system_name, options.overrides);
    driver::DeviceProperties props;
    try {
      props = driver::DeviceProperties::of(system.config.chip, HL_SERVER_GAUDI_HLS1);
    } catch (const std::invalid_argument& e) {
      throw UsageError(
          fmt::format("run: {}: the driver serves Gaudi1-class chips ({}); try "
                      "--system hls1",
                      system_name, e.what()));
    }
    require_memory(estimate_bytes(), fmt::format("podsim run {}", workload_),
                   "use smaller --layers or --batch");
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    system::SystemModel model("system", system.config,
                              system::build_topology(system.config, &system.tree),
                              {options.seed, true});
    std::vector<StepRow> rows;
    synapse::SessionStats stats;
    std::string failure;
    core::TimePs simulated = 0;
    system::HostSide& host = model.host(0);
    host.cpu().run([&](host::HostCpu& cpu) {
      try {
        const driver::PciFunction pci =
            driver::probe(cpu, host.bus(0), {host.window_base(0), host.window_size()});
        driver::Device device(cpu, host.memory(), pci, props, kDriverMemory);
        synapse::Runtime runtime(device, host.memory(), kApplicationMemory);
        synapse::Session session(runtime,
                                 mode_ == "eager" ? synapse::Mode::kEager : synapse::Mode::kLazy);
        workloads::Mlp mlp(session, config_);
        chip::Chip& chip = model.chip(0);
        for (int step = 0; step < steps_; ++step) {
          const Activity before = Activity::of(chip, session);
          const double loss = mlp.step(step);
          rows.push_back({step, loss, Activity::of(chip, session) - before});
          if (!options.quiet) print_row(chip, rows.back(), rows.size() == 1);
        }
        stats = session.stats();
        simulated = core::now_ps();
      } catch (const std::exception& e) {
        failure = e.what();
      }
    });
    sc_core::sc_start();
    const double cpu = cpu_seconds() - cpu_before;
    if (!failure.empty()) {
      fmt::print(stderr, "podsim: run failed: {}\n", failure);
      return 1;
    }
    if (options.quiet) {
      for (std::size_t i = 0; i < rows.size(); ++i) print_row(model.chip(0), rows[i], i == 0);
    }
    int status = 0;
    std::vector<double> reference;
    if (check_) reference = workloads::reference_losses(config_, steps_);
    summary(model.chip(0), system_name, rows, stats, reference, cpu, simulated, status);
    if (!options.stats_file.empty())
      core::stats_registry().write(options.stats_file, core::now_ps());
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!options.json_file.empty())
      write_output_file(options.json_file, to_json(rows, stats, reference, cpu).dump(2) + "\n");
    return status;
  }

 private:
  // The tensors a step holds (weights, momenta, activations and gradients), on the device
  // (sparse host-side backing) and once more on the host for transfers.
  std::uint64_t estimate_bytes() const {
    std::uint64_t elements = 0;
    for (std::size_t l = 0; l + 1 < config_.layers.size(); ++l) {
      elements += 3ull * config_.layers[l] * config_.layers[l + 1];
      elements += 4ull * config_.batch * config_.layers[l + 1];
    }
    return 2 * elements * 4 + (64ull << 20);
  }

  void print_row(chip::Chip& c, const StepRow& r, bool header) const {
    if (header) {
      fmt::print("{:>5} {:>10} {:>11} {:>11} {:>6} {:>6} {:>6} {:>10}\n", "step", "loss", "step_us",
                 "device_us", "tpc%", "mme%", "dma%", "hbm_MB");
    }
    const Activity& a = r.activity;
    fmt::print("{:>5} {:>10.6f} {:>11.2f} {:>11.2f} {:>6.1f} {:>6.1f} {:>6.1f} {:>10.3f}\n", r.step,
               r.loss, static_cast<double>(a.now) * 1e-6, static_cast<double>(a.device) * 1e-6,
               percent(a.tpc_busy, a.device, c.tpc_cores()),
               percent(a.mme_busy, a.device, c.mme_engines()),
               percent(a.dma_busy, a.now, c.dma_engines()),
               static_cast<double>(a.hbm_bytes) * 1e-6);
  }

  void summary(chip::Chip& c, const std::string& system, const std::vector<StepRow>& rows,
               const synapse::SessionStats& stats, const std::vector<double>& reference, double cpu,
               core::TimePs simulated, int& status) const {
    Activity total;
    for (const StepRow& r : rows) {
      total.now += r.activity.now;
      total.device += r.activity.device;
      total.tpc_busy += r.activity.tpc_busy;
      total.mme_busy += r.activity.mme_busy;
      total.dma_busy += r.activity.dma_busy;
      total.hbm_bytes += r.activity.hbm_bytes;
    }
    fmt::print(
        "workload   mlp {} batch {}, {}, {} mode, {} steps on {} chip 0 ({}) through the "
        "driver\n",
        fmt::join(config_.layers, "-"), config_.batch, tpc::info(config_.dtype).name, mode_,
        rows.size(), system, c.config().name);
    fmt::print(
        "engines    over the launches' {:.2f} us: {} TPCs busy {:.1f}% ({:.2f} us each), "
        "{} MMEs busy {:.1f}% ({:.2f} us each)\n",
        static_cast<double>(total.device) * 1e-6, c.tpc_cores(),
        percent(total.tpc_busy, total.device, c.tpc_cores()),
        static_cast<double>(total.tpc_busy) * 1e-6 / c.tpc_cores(), c.mme_engines(),
        percent(total.mme_busy, total.device, c.mme_engines()),
        static_cast<double>(total.mme_busy) * 1e-6 / c.mme_engines());
    fmt::print("dma        {} engines busy {:.2f} us in all (inputs, losses, program uploads)\n",
               c.dma_engines(), static_cast<double>(total.dma_busy) * 1e-6);
    fmt::print("memory     HBM traffic {:.3f} MB ({:.2f} GB/s over the steps' {:.2f} us)\n",
               static_cast<double>(total.hbm_bytes) * 1e-6,
               total.now ? static_cast<double>(total.hbm_bytes) /
                               (static_cast<double>(total.now) * 1e-12) * 1e-9
                         : 0.0,
               static_cast<double>(total.now) * 1e-6);
    fmt::print("compiler   {} graph{} compiled, {} recipe cache hit{}, {} launch{}\n",
               stats.compiles, stats.compiles == 1 ? "" : "s", stats.cache_hits,
               stats.cache_hits == 1 ? "" : "s", stats.launches, stats.launches == 1 ? "" : "es");
    if (!reference.empty()) {
      double worst = 0;
      for (std::size_t i = 0; i < rows.size(); ++i)
        worst = std::max(worst, std::abs(rows[i].loss - reference[i]) / reference[i]);
      const double tolerance = tolerance_of(config_.dtype);
      const bool ok = worst <= tolerance;
      fmt::print(
          "check      losses against the CPU's double-precision training: worst relative "
          "difference {:.2e} ({} the {} tolerance {:.0e})\n",
          worst, ok ? "within" : "OUTSIDE", tpc::info(config_.dtype).name, tolerance);
      if (!ok) status = 1;
    }
    fmt::print("simulator  {:.2f} s CPU for {:.2f} us simulated (probe, set-up and the steps)\n",
               cpu, static_cast<double>(simulated) * 1e-6);
  }

  // Five steps of rounding in the weights' type: f32 to 1e-4, bf16 and f16 to 2%.
  static double tolerance_of(tpc::Dtype t) { return t == tpc::Dtype::kF32 ? 1e-4 : 2e-2; }

  nlohmann::json to_json(const std::vector<StepRow>& rows, const synapse::SessionStats& stats,
                         const std::vector<double>& reference, double cpu) const {
    nlohmann::json j;
    j["workload"] = workload_;
    j["mode"] = mode_;
    j["layers"] = config_.layers;
    j["batch"] = config_.batch;
    j["dtype"] = tpc::info(config_.dtype).name;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const StepRow& r = rows[i];
      nlohmann::json s{{"step", r.step},
                       {"loss", r.loss},
                       {"step_ps", r.activity.now},
                       {"device_ps", r.activity.device},
                       {"tpc_busy_ps", r.activity.tpc_busy},
                       {"mme_busy_ps", r.activity.mme_busy},
                       {"dma_busy_ps", r.activity.dma_busy},
                       {"hbm_bytes", r.activity.hbm_bytes}};
      if (!reference.empty()) s["reference_loss"] = reference[i];
      j["steps"].push_back(s);
    }
    j["compiles"] = stats.compiles;
    j["cache_hits"] = stats.cache_hits;
    j["launches"] = stats.launches;
    j["simulation_cpu_s"] = cpu;
    return j;
  }

  std::string workload_ = "mlp";
  int steps_ = 5;
  std::string mode_ = "lazy";
  std::string dtype_ = "bf16";
  bool check_ = false;
  workloads::MlpConfig config_;
};

}  // namespace

std::unique_ptr<Command> add_run_command(CLI::App& app) {
  return std::make_unique<RunCommand>(app);
}

}  // namespace podsim::sims
