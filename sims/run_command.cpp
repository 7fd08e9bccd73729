// `podsim run`: a workload on chip 0 of a system, run the way an application runs it: the
// Synapse-like stack (synapse/) compiles its graphs to recipes and launches them through the
// driver (driver/), which reaches the chip only through PCIe. Workloads: an MLP trained with SGD
// (workloads/mlp.h) and one transformer layer's forward and backward (workloads/transformer.h).
// Prints each step's loss and simulated time, the engines' busy time and utilisation, HBM
// traffic, what the compiler did (and what ran on the host), and, with --check, the results
// against the CPU reference.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "driver/device.h"
#include "driver/pci_probe.h"
#include "hw/chip/chip.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"
#include "hw/system/topology.h"
#include "sims/chip_software.h"
#include "sims/command.h"
#include "sims/memory_budget.h"
#include "synapse/session.h"
#include "workloads/mlp.h"
#include "workloads/transformer.h"

namespace podsim::sims {
namespace {

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
  Activity& operator+=(const Activity& o) {
    now += o.now;
    device += o.device;
    tpc_busy += o.tpc_busy;
    mme_busy += o.mme_busy;
    dma_busy += o.dma_busy;
    hbm_bytes += o.hbm_bytes;
    return *this;
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

// What --check found: the worst difference from the CPU reference, relative to the reference's
// magnitude, and the reference's loss per step.
struct Check {
  double worst = 0, tolerance = 0;
  std::string compared;
  std::vector<double> losses;
};

// Five steps of rounding in the type: f32 to 1e-4, bf16 and f16 to 2% (5% for a transformer
// layer's gradients, which sum long products of rounded values).
double tolerance_of(tpc::Dtype t, double low_precision) {
  return t == tpc::Dtype::kF32 ? 1e-4 : low_precision;
}

// A workload as the command drives it, inside the host program.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual double step(int step) = 0;
  virtual Check check(int steps, const std::vector<double>& losses) = 0;
};

class MlpWorkload : public Workload {
 public:
  MlpWorkload(synapse::Session& s, const workloads::MlpConfig& c) : config_(c), mlp_(s, c) {}
  double step(int step) override { return mlp_.step(step); }
  Check check(int steps, const std::vector<double>& losses) override {
    Check c{0, tolerance_of(config_.dtype, 2e-2), "losses",
            workloads::reference_losses(config_, steps)};
    for (std::size_t i = 0; i < losses.size(); ++i)
      c.worst = std::max(c.worst, std::abs(losses[i] - c.losses[i]) / std::abs(c.losses[i]));
    return c;
  }

 private:
  workloads::MlpConfig config_;
  workloads::Mlp mlp_;
};

class TransformerWorkload : public Workload {
 public:
  TransformerWorkload(synapse::Session& s, const workloads::TransformerConfig& c)
      : config_(c), block_(s, c) {}
  double step(int) override { return block_.step(); }
  // Every output and gradient, each relative to its largest element.
  Check check(int steps, const std::vector<double>& losses) override {
    const workloads::Tensors want =
        workloads::transformer_reference(config_, workloads::transformer_inputs(config_));
    Check c{0, tolerance_of(config_.dtype, 5e-2), "the output, dx and every parameter gradient",
            std::vector<double>(static_cast<std::size_t>(steps), want.at("loss")[0])};
    for (const auto& [name, got] : block_.results()) {
      const std::vector<double>& w = want.at(name);
      double scale = 0, worst = 0;
      for (std::size_t i = 0; i < w.size(); ++i) {
        scale = std::max(scale, std::abs(w[i]));
        worst = std::max(worst, std::abs(got[i] - w[i]));
      }
      if (scale > 0) c.worst = std::max(c.worst, worst / scale);
    }
    // L sums products of both signs: its error is held to its terms' magnitude.
    for (std::size_t i = 0; i < losses.size(); ++i)
      c.worst = std::max(c.worst, std::abs(losses[i] - c.losses[i]) / want.at("loss_scale")[0]);
    return c;
  }

 private:
  workloads::TransformerConfig config_;
  workloads::TransformerBlock block_;
};

class RunCommand : public Command {
 public:
  explicit RunCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "run", "run a workload on one chip through the driver and the Synapse-like stack");
    subcommand->add_option("--workload", workload_, "mlp (trains it) or transformer-block")
        ->check(CLI::IsMember({"mlp", "transformer-block"}))
        ->capture_default_str();
    subcommand->add_option("--steps", steps_, "steps")->capture_default_str();
    subcommand->add_option("--mode", mode_, "eager: op by op; lazy: one graph per step")
        ->check(CLI::IsMember({"eager", "lazy"}))
        ->capture_default_str();
    subcommand->add_option("--dtype", dtype_, "f32, bf16 or f16")->capture_default_str();
    subcommand->add_option("--batch", batch_,
                           "samples (mlp, default 128) or sequences (transformer-block, "
                           "default 2) per step");
    subcommand->add_option("--layers", mlp_.layers, "mlp: inputs, hidden widths, classes")
        ->delimiter(',')
        ->type_name("N,N,...")
        ->capture_default_str();
    subcommand->add_option("--lr", mlp_.lr, "mlp: SGD learning rate")->capture_default_str();
    subcommand->add_option("--momentum", mlp_.momentum, "mlp: SGD momentum")->capture_default_str();
    subcommand
        ->add_option("--sequence", transformer_.sequence,
                     "transformer-block: tokens per "
                     "sequence")
        ->capture_default_str();
    subcommand->add_option("--hidden", transformer_.hidden, "transformer-block: model width")
        ->capture_default_str();
    subcommand->add_option("--heads", transformer_.heads, "transformer-block: attention heads")
        ->capture_default_str();
    subcommand->add_option("--ffn", transformer_.ffn, "transformer-block: MLP width")
        ->capture_default_str();
    subcommand
        ->add_option_function<std::string>(
            "--attention",
            [this](const std::string& v) { transformer_.fused_attention = v == "fused"; },
            "transformer-block: unfused, or fused (a sequence at a time, its scores computed "
            "again in the backward pass, as FusedSDPA)")
        ->check(CLI::IsMember({"unfused", "fused"}))
        ->default_str("unfused");
    subcommand->add_flag("--check", check_,
                         "compute the same on the CPU in double precision and compare");
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    configure(options);
    const std::string system_name = options.system_given ? options.system : "hls1";
    const auto system = collectives::load_system_file(system_name, options.overrides);
    const driver::DeviceProperties props = served_device(system, "run", system_name);
    require_memory(estimate_bytes(), fmt::format("podsim run {}", workload_),
                   "use a smaller workload (--layers, --batch, --hidden, --sequence)");
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    system::SystemModel model("system", system.config,
                              system::build_topology(system.config, &system.tree),
                              options.model_options(true));
    Outcome o;
    o.failure = run_with_runtime(model, props, [&](synapse::Runtime& runtime) {
      run_steps(runtime, model.chip(0), options.quiet, o);
    });
    const double cpu = cpu_seconds() - cpu_before;
    if (!o.failure.empty()) {
      fmt::print(stderr, "podsim: run failed: {}\n", o.failure);
      return 1;
    }
    if (options.quiet) {
      for (std::size_t i = 0; i < o.rows.size(); ++i) print_row(model.chip(0), o.rows[i], i == 0);
    }
    const int status = summary(model.chip(0), system_name, o, cpu);
    if (!options.stats_file.empty())
      core::stats_registry().write(options.stats_file, core::now_ps());
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!options.json_file.empty())
      write_output_file(options.json_file,
                        to_json(o, cpu, system_name, model.chip(0)).dump(2) + "\n");
    return status;
  }

 private:
  struct Outcome {
    std::vector<StepRow> rows;
    synapse::SessionStats stats;
    std::optional<Check> check;
    core::TimePs simulated = 0;
    std::string failure;
  };

  void configure(const GlobalOptions& options) {
    const auto dtype = tpc::find_dtype(dtype_);
    if (!dtype) throw UsageError(fmt::format("--dtype {}: f32, bf16 or f16", dtype_));
    if (steps_ < 1) throw UsageError("--steps must be at least 1");
    if (batch_ == 0) batch_ = mlp() ? 128 : 2;
    mlp_.dtype = transformer_.dtype = *dtype;
    mlp_.seed = transformer_.seed = options.seed;
    mlp_.batch = transformer_.batch = batch_;
    const std::string problem = mlp() ? mlp_.problem() : transformer_.problem();
    if (!problem.empty()) throw UsageError(fmt::format("run {}: {}", workload_, problem));
  }
  bool mlp() const { return workload_ == "mlp"; }

  // The workload's steps, in the host CPU's program.
  void run_steps(synapse::Runtime& runtime, chip::Chip& chip, bool quiet, Outcome& o) {
    synapse::Session session(runtime,
                             mode_ == "eager" ? synapse::Mode::kEager : synapse::Mode::kLazy);
    std::unique_ptr<Workload> w;
    if (mlp()) {
      w = std::make_unique<MlpWorkload>(session, mlp_);
    } else {
      w = std::make_unique<TransformerWorkload>(session, transformer_);
    }
    std::vector<double> losses;
    for (int step = 0; step < steps_; ++step) {
      const Activity before = Activity::of(chip, session);
      const double loss = w->step(step);
      o.rows.push_back({step, loss, Activity::of(chip, session) - before});
      losses.push_back(loss);
      if (!quiet) print_row(chip, o.rows.back(), o.rows.size() == 1);
    }
    o.stats = session.stats();
    o.simulated = core::now_ps();
    if (check_) o.check = w->check(steps_, losses);
  }

  // The tensors a step holds on the device (sparse host-side backing) and once more on the host
  // for transfers, with room for the runtime's buffers.
  std::uint64_t estimate_bytes() const {
    std::uint64_t elements = 0;
    if (mlp()) {
      for (std::size_t l = 0; l + 1 < mlp_.layers.size(); ++l) {
        elements += 3ull * mlp_.layers[l] * mlp_.layers[l + 1];
        elements += 4ull * mlp_.batch * mlp_.layers[l + 1];
      }
    } else {
      const std::uint64_t h = transformer_.hidden, f = transformer_.ffn, t = transformer_.tokens(),
                          s = transformer_.sequence;
      elements = 2 * (4 * h * h + 2 * h * f) + t * (20 * h + 4 * f) +
                 4 * s * s * transformer_.heads * transformer_.batch;
    }
    return 2 * elements * 4 + (64ull << 20);
  }

  std::string description() const {
    if (mlp()) {
      return fmt::format("mlp {} batch {}", fmt::join(mlp_.layers, "-"), mlp_.batch);
    }
    return fmt::format("transformer-block batch {} sequence {} hidden {} heads {} ffn {}",
                       transformer_.batch, transformer_.sequence, transformer_.hidden,
                       transformer_.heads, transformer_.ffn);
  }

  void print_row(chip::Chip& c, const StepRow& r, bool header) const {
    if (header) {
      fmt::print("{:>5} {:>12} {:>11} {:>11} {:>6} {:>6} {:>6} {:>10}\n", "step", "loss", "step_us",
                 "device_us", "tpc%", "mme%", "dma%", "hbm_MB");
    }
    const Activity& a = r.activity;
    fmt::print("{:>5} {:>12.6g} {:>11.2f} {:>11.2f} {:>6.1f} {:>6.1f} {:>6.1f} {:>10.3f}\n", r.step,
               r.loss, static_cast<double>(a.now) * 1e-6, static_cast<double>(a.device) * 1e-6,
               percent(a.tpc_busy, a.device, c.tpc_cores()),
               percent(a.mme_busy, a.device, c.mme_engines()),
               percent(a.dma_busy, a.now, c.dma_engines()),
               static_cast<double>(a.hbm_bytes) * 1e-6);
  }

  int summary(chip::Chip& c, const std::string& system, const Outcome& o, double cpu) const {
    Activity total;
    for (const StepRow& r : o.rows) total += r.activity;
    const auto us = [](core::TimePs t) { return static_cast<double>(t) * 1e-6; };
    fmt::print("workload   {}, {}, {} mode, {} steps on {} chip 0 ({}) through the driver\n",
               description(), tpc::info(mlp_.dtype).name, mode_, o.rows.size(), system,
               c.config().name);
    fmt::print(
        "engines    over the launches' {:.2f} us: {} TPCs busy {:.1f}% ({:.2f} us each), "
        "{} MMEs busy {:.1f}% ({:.2f} us each)\n",
        us(total.device), c.tpc_cores(), percent(total.tpc_busy, total.device, c.tpc_cores()),
        us(total.tpc_busy) / c.tpc_cores(), c.mme_engines(),
        percent(total.mme_busy, total.device, c.mme_engines()),
        us(total.mme_busy) / c.mme_engines());
    fmt::print("dma        {} engines busy {:.2f} us in all (inputs, results, uploads)\n",
               c.dma_engines(), us(total.dma_busy));
    fmt::print("memory     HBM traffic {:.3f} MB ({:.2f} GB/s over the steps' {:.2f} us)\n",
               static_cast<double>(total.hbm_bytes) * 1e-6,
               total.now ? static_cast<double>(total.hbm_bytes) / us(total.now) * 1e-3 : 0.0,
               us(total.now));
    fmt::print("compiler   {} graph{} compiled, {} recipe cache hit{}, {} launch{}\n",
               o.stats.compiles, o.stats.compiles == 1 ? "" : "s", o.stats.cache_hits,
               o.stats.cache_hits == 1 ? "" : "s", o.stats.launches,
               o.stats.launches == 1 ? "" : "es");
    for (const std::string& note : o.stats.notes) fmt::print("compiler   {}\n", note);
    int status = 0;
    if (o.check) {
      const bool ok = o.check->worst <= o.check->tolerance;
      fmt::print(
          "check      {} against the CPU's double precision: worst relative difference "
          "{:.2e} ({} the {} tolerance {:.0e})\n",
          o.check->compared, o.check->worst, ok ? "within" : "OUTSIDE", tpc::info(mlp_.dtype).name,
          o.check->tolerance);
      if (!ok) status = 1;
    }
    fmt::print("simulator  {:.2f} s CPU for {:.2f} us simulated (probe, set-up and the steps)\n",
               cpu, us(o.simulated));
    return status;
  }

  nlohmann::json to_json(const Outcome& o, double cpu, const std::string& system,
                         chip::Chip& c) const {
    nlohmann::json j;
    j["system"] = system;
    j["chip"] = c.config().name;
    j["engines"] = {{"tpc", c.tpc_cores()}, {"mme", c.mme_engines()}, {"dma", c.dma_engines()}};
    j["workload"] = workload_;
    j["description"] = description();
    j["mode"] = mode_;
    j["dtype"] = tpc::info(mlp_.dtype).name;
    for (std::size_t i = 0; i < o.rows.size(); ++i) {
      const StepRow& r = o.rows[i];
      nlohmann::json s{{"step", r.step},
                       {"loss", r.loss},
                       {"step_ps", r.activity.now},
                       {"device_ps", r.activity.device},
                       {"tpc_busy_ps", r.activity.tpc_busy},
                       {"mme_busy_ps", r.activity.mme_busy},
                       {"dma_busy_ps", r.activity.dma_busy},
                       {"hbm_bytes", r.activity.hbm_bytes}};
      if (o.check) s["reference_loss"] = o.check->losses[i];
      j["steps"].push_back(s);
    }
    if (o.check) {
      j["check"] = {{"worst_relative_difference", o.check->worst},
                    {"tolerance", o.check->tolerance},
                    {"ok", o.check->worst <= o.check->tolerance}};
    }
    j["compiles"] = o.stats.compiles;
    j["cache_hits"] = o.stats.cache_hits;
    j["launches"] = o.stats.launches;
    j["compiler_notes"] = o.stats.notes;
    j["simulation_cpu_s"] = cpu;
    return j;
  }

  std::string workload_ = "mlp";
  int steps_ = 5;
  std::string mode_ = "lazy";
  std::string dtype_ = "bf16";
  std::uint32_t batch_ = 0;
  bool check_ = false;
  workloads::MlpConfig mlp_;
  workloads::TransformerConfig transformer_;
};

}  // namespace

std::unique_ptr<Command> add_run_command(CLI::App& app) {
  return std::make_unique<RunCommand>(app);
}

}  // namespace podsim::sims
