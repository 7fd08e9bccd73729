// `podsim kernel`: one TPC kernel of the library, or one GEMM or convolution on the MMEs, on chip 0
// of a system: checked against its CPU reference, timed, and set beside its roofline (the HBM's
// bandwidth and the engines' peak), with the engines' utilisation and the simulator's speed.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "hw/chip/chip.h"
#include "hw/system/topology.h"
#include "sims/chip_software.h"
#include "sims/command.h"
#include "sims/compute_job.h"
#include "sims/memory_budget.h"

namespace podsim::sims {
namespace {

double us(double ps) { return ps * 1e-6; }

std::string rate(double value, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (value >= 1000 && i < 5) value /= 1000, ++i;
  return fmt::format("{:.3g} {}{}", value, prefixes[i], unit);
}

void list_operations() {
  fmt::print("TPC kernels (hw/tpc/kernels; docs/tpc/kernels.md):\n");
  for (const tpc::KernelInfo& k : tpc::kernel_infos()) {
    std::vector<std::string> types;
    for (tpc::Dtype t : k.dtypes) types.emplace_back(tpc::info(t).name);
    fmt::print("  {:<22} {}\n  {:<22} types {}; --shape {}{}\n", k.name, k.summary, "",
               fmt::join(types, ","), k.shape_help,
               k.params.empty() ? "" : fmt::format("; --param {}", fmt::join(k.params, ", ")));
  }
  fmt::print(
      "MME operations (docs/mme.md), types f32, bf16, f16 (--to: the result's type):\n"
      "  {:<22} C = A B: --shape M,N,K[,BATCH]; --trans-a, --trans-b, --accumulate\n"
      "  {:<22} convolution, NHWC input, KRSC filters: --shape N,C,H,W,K,R,S;\n"
      "  {:<22} --param stride=, pad=, dilation= (or their _h, _w forms)\n"
      "  {:<22} the input's gradient from the output's (same shape and parameters)\n"
      "  {:<22} the filters' gradient (same shape and parameters)\n",
      "gemm", "conv_fwd", "", "conv_dgrad", "conv_wgrad");
}

class KernelCommand : public Command {
 public:
  explicit KernelCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "kernel", "run one TPC kernel or one GEMM/convolution on a chip, checked and timed");
    subcommand->add_option("name", request_.name,
                           "a kernel (see --list), gemm, conv_fwd, "
                           "conv_dgrad or conv_wgrad");
    subcommand->add_flag("--list", list_, "list the kernels and MME operations with their shapes");
    subcommand->add_option("--shape", request_.shape, "sizes, comma-separated (see --list)")
        ->delimiter(',')
        ->type_name("N,N,...");
    subcommand->add_option("--dtype", request_.dtype, "element type")->capture_default_str();
    subcommand->add_option("--to", request_.to,
                           "cast's target type; an MME operation's result type");
    subcommand->add_option("--param", params_, "a kernel's parameter (repeatable)")
        ->type_name("NAME=VALUE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    subcommand
        ->add_option("--engines", request_.engines,
                     "TPCs (kernels) or MMEs (GEMM, convolutions) to use; 0: all")
        ->capture_default_str();
    subcommand->add_flag("--trans-a", request_.trans_a, "gemm: A is stored K x M");
    subcommand->add_flag("--trans-b", request_.trans_b, "gemm: B is stored N x K");
    subcommand->add_flag("--accumulate", request_.accumulate, "add the result to what C holds");
    subcommand->add_flag("--timing-only", timing_only_,
                         "move no data and check nothing (large shapes)");
    subcommand->add_flag("--tile-reuse", tile_reuse_,
                         "TPCs replay the measured timing of identical tiles (timing only; "
                         "docs/tpc/core.md)");
  }

  bool simulates() const override { return !list_; }

  int run(const GlobalOptions& options) override {
    if (list_) {
      list_operations();
      return 0;
    }
    if (request_.name.empty())
      throw UsageError("kernel: name a kernel or operation (--list shows them)");
    if (request_.shape.empty())
      throw UsageError(
          fmt::format("kernel {}: give --shape (--list shows what it means)", request_.name));
    if (request_.engines < 0) throw UsageError("--engines must not be negative");
    if (tile_reuse_ && !timing_only_)
      throw UsageError("--tile-reuse needs --timing-only: replayed tiles move no data");
    for (const std::string& p : params_) {
      const auto eq = p.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError(fmt::format("--param {}: write NAME=VALUE", p));
      request_.params[p.substr(0, eq)] = p.substr(eq + 1);
    }
    ComputeJob job(request_);
    auto overrides = options.overrides;
    if (tile_reuse_) overrides.push_back("chip.tpc.core.tile_reuse=true");
    const auto system = collectives::load_system_file(options.system, overrides);
    const driver::DeviceProperties props = served_device(system, "kernel", options.system);
    const std::uint64_t device = chip::memory_size(system.config.chip);
    if (job.device_bytes() > device) {
      throw UsageError(fmt::format(
          "kernel {}: the operands take {}, more than the chip's {} of device memory",
          job.description(), approximate_size(job.device_bytes()), approximate_size(device)));
    }
    require_memory(job.host_bytes(!timing_only_),
                   fmt::format("podsim kernel {}", job.description()),
                   "run it with --timing-only (no data is kept or checked) or a smaller --shape");
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    system::SystemModel model("system", system.config,
                              system::build_topology(system.config, &system.tree),
                              options.model_options(!timing_only_));
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const double cpu_elaborated = cpu_seconds();
    const ComputeResult r = job.run(model, props, options.seed, options.lock_step);
    report(options, system.config.name, model, job, r, cpu_elaborated - cpu_before);
    if (!r.finished || !r.ok) return 1;
    return r.check_failures.empty() ? 0 : 1;
  }

 private:
  std::string engines_line(system::SystemModel& model, const ComputeJob& job,
                           const ComputeResult& r) const {
    chip::Chip& c = model.chip(0);
    if (job.mme()) {
      const auto& e = c.config().mme.engine;
      const int n = request_.engines ? request_.engines : c.mme_engines();
      return fmt::format("{} MME{} of {}x{} at {}: arrays busy {:.1f}% of the run", n,
                         n == 1 ? "" : "s", e.rows, e.cols, core::to_string(e.clock),
                         100 * r.engine_busy);
    }
    const int n = request_.engines ? request_.engines : c.tpc_cores();
    return fmt::format("{} TPC{} at {}: busy {:.1f}% of the run, {} bundles issued", n,
                       n == 1 ? "" : "s", core::to_string(c.config().tpc.core.clock),
                       100 * r.engine_busy, r.bundles);
  }

  void report(const GlobalOptions& options, const std::string& system_name,
              system::SystemModel& model, const ComputeJob& job, const ComputeResult& r,
              double elaboration_cpu) const {
    const double run_cpu = r.simulation_cpu;
    chip::Chip& c = model.chip(0);
    const double seconds = static_cast<double>(r.time) * 1e-12;
    const double hbm = c.config().hbm.bandwidth.bytes_per_second();
    const double bandwidth = seconds > 0 ? r.bytes_moved / seconds : 0;
    const double flop_rate = seconds > 0 ? r.flops / seconds : 0;
    fmt::print("kernel     {} on {} chip 0 ({})\n", r.description, system_name, c.config().name);
    if (!r.finished) {
      fmt::print(
          "result     FAILED: the run did not complete ({} error events; --log shows them)\n",
          c.error_count());
    } else {
      fmt::print("time       {:.3f} us{}\n", us(static_cast<double>(r.time)),
                 r.ok ? "" : "  (an engine raised an error)");
      fmt::print("memory     {} moved by the engines: {}/s ({:.1f}% of the HBM's {}/s)\n",
                 rate(r.bytes_moved, "B"), rate(bandwidth, "B"),
                 hbm > 0 ? 100 * bandwidth / hbm : 0.0, rate(hbm, "B"));
      fmt::print("compute    {}: {}/s ({:.1f}% of the engines' peak {}/s)\n", rate(r.flops, "FLOP"),
                 rate(flop_rate, "FLOP"), r.peak_flops > 0 ? 100 * flop_rate / r.peak_flops : 0.0,
                 rate(r.peak_flops, "FLOP"));
      const std::string bounds =
          job.mme() ? fmt::format("memory {:.3f} us, compute {:.3f} us", us(r.memory_ps),
                                  us(r.compute_ps))
                    : fmt::format("memory {:.3f} us, issue {:.3f} us: {} {} ops", us(r.memory_ps),
                                  us(r.compute_ps), r.busiest_slot_ops, r.busiest_slot);
      fmt::print("roofline   {:.3f} us, {} bound ({}): the run takes {:.2f}x the roofline\n",
                 us(r.roofline_ps),
                 r.memory_bound ? "memory"
                 : job.mme()    ? "compute"
                                : "issue",
                 bounds, r.roofline_ps > 0 ? static_cast<double>(r.time) / r.roofline_ps : 0.0);
      fmt::print("engines    {}\n", engines_line(model, job, r));
    }
    if (!r.checked) {
      fmt::print("check      not checked ({})\n",
                 timing_only_ ? "timing only" : "the run did not complete");
    } else if (r.check_failures.empty()) {
      fmt::print("check      ok: every result within its tolerance against the CPU reference\n");
    } else {
      for (const std::string& f : r.check_failures) fmt::print("check      WRONG: {}\n", f);
    }
    const double work = job.mme() ? r.flops / 1e12 : static_cast<double>(r.bundles) / 1e6;
    fmt::print("simulator  {:.3g} {} in {:.2f} s CPU ({:.3g} {}/s), elaboration {:.2f} s\n", work,
               job.mme() ? "TFLOP" : "M bundles", run_cpu, run_cpu > 0 ? work / run_cpu : 0.0,
               job.mme() ? "TFLOP" : "M bundles", elaboration_cpu);
    if (!options.stats_file.empty())
      core::stats_registry().write(options.stats_file, core::now_ps());
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!options.json_file.empty())
      write_output_file(options.json_file, to_json(r, run_cpu, elaboration_cpu).dump(2) + "\n");
  }

  static nlohmann::json to_json(const ComputeResult& r, double run_cpu, double elaboration_cpu) {
    nlohmann::json j;
    j["operation"] = r.description;
    j["finished"] = r.finished;
    j["ok"] = r.ok && r.check_failures.empty();
    j["time_ps"] = r.time;
    j["flops"] = r.flops;
    j["bytes_moved"] = r.bytes_moved;
    j["min_bytes"] = r.min_bytes;
    j["roofline_ps"] = r.roofline_ps;
    j["memory_bound_ps"] = r.memory_ps;
    j["compute_bound_ps"] = r.compute_ps;  // TPC kernels: the issue-bound time
    j["bound"] = r.memory_bound ? "memory" : r.busiest_slot.empty() ? "compute" : "issue";
    if (!r.busiest_slot.empty()) {
      j["busiest_slot"] = r.busiest_slot;
      j["busiest_slot_ops"] = r.busiest_slot_ops;
    }
    j["peak_flops_per_s"] = r.peak_flops;
    j["engine_busy_fraction"] = r.engine_busy;
    j["tpc_bundles"] = r.bundles;
    j["checked"] = r.checked;
    j["check_failures"] = r.check_failures;
    j["simulator"] = {{"run_cpu_seconds", run_cpu}, {"elaboration_cpu_seconds", elaboration_cpu}};
    return j;
  }

  ComputeRequest request_;
  std::vector<std::string> params_;
  bool list_ = false, timing_only_ = false, tile_reuse_ = false;
};

}  // namespace

std::unique_ptr<Command> add_kernel_command(CLI::App& app) {
  return std::make_unique<KernelCommand>(app);
}

}  // namespace podsim::sims
