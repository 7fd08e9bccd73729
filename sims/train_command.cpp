// `podsim train`: synchronous data-parallel training steps of a model (training/model.h) on the
// system's chips. The step's compute comes from a profile: each distinct layer run through
// Synapse and the driver on one chip of the system's kind (training/profile.h), measured in a
// child process (a SystemC kernel elaborates once per process) on a one-box copy of the system,
// or read from a file `--profile-out` wrote. The gradients' all-reduces then run on the whole
// system's modeled chips and fabric as the strategy issues them (training/data_parallel.h).
// Prints the step's time, compute, communication and what is exposed, samples per second and
// the efficiency against linear scaling. --functional instead trains the MNIST net for real
// (training/functional.h) and compares the replicas with one chip on their whole batch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <sstream>

#include "collectives/communicator.h"
#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "hw/system/topology.h"
#include "sims/chip_software.h"
#include "sims/command.h"
#include "sims/fabric_totals.h"
#include "sims/forked_run.h"
#include "sims/memory_budget.h"
#include "sims/progress.h"
#include "sims/train_functional.h"
#include "sims/train_report.h"
#include "training/cluster.h"
#include "training/data_parallel.h"
#include "training/functional.h"
#include "training/host_staging.h"
#include "training/ipu_pipeline.h"
#include "training/ipu_profile.h"
#include "training/memory_fit.h"
#include "training/profile.h"

namespace podsim::sims {
namespace {

double ms(core::TimePs t) { return static_cast<double>(t) * 1e-9; }

// The system reduced to its first box, for measuring one chip's compute.
system::SystemConfig one_box(system::SystemConfig config) {
  config.boxes = 1;
  config.network.kind = system::NetworkKind::kNone;
  return config;
}

class TrainCommand : public Command {
 public:
  explicit TrainCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "train", "synchronous data-parallel training steps of a model on the system's chips");
    auto* c = subcommand;
    c->add_option("--model", model_.name,
                  fmt::format("{}", fmt::join(training::model_names(), ", ")))
        ->capture_default_str();
    c->add_option("--batch", model_.batch, "samples per worker per step (default: the model's)");
    c->add_option("--layers", model_.layers, "transformer layers (default: the model's)");
    c->add_option("--hidden", model_.hidden, "model width (default: the model's)");
    c->add_option("--heads", model_.heads, "attention heads (default: the model's)");
    c->add_option("--sequence", model_.sequence, "tokens per sample (default: the model's)");
    c->add_option("--vocab", model_.vocab, "vocabulary (default: the model's)");
    c->add_option("--dropout", model_.dropout,
                  "probability of dropping attention probabilities and residual branches in "
                  "the transformer layers; 0: no dropout (default: the model's, 0.1 for BERT "
                  "and GPT-2)")
        ->check(CLI::Range(0.0, 0.999));
    c->add_option("--packed", model_.packed,
                  "transformers: sequences of equal length packed into each row, attention "
                  "masked between them (BERT's packed pretraining data: 2 for MLPerf's); 0: "
                  "none")
        ->check(CLI::Range(0u, 64u));
    c->add_option("--attention", model_.attention,
                  "transformers: unfused (each node over the whole batch, the probabilities kept "
                  "for the backward pass) or fused (a sequence at a time, flash-attention style "
                  "as Habana's FusedSDPA with recompute: nothing of the S x S scores kept, the "
                  "backward computing them again) (default: the model's: unfused for BERT, "
                  "fused for the GPT-style decoder)")
        ->check(CLI::IsMember({"unfused", "fused"}));
    c->add_option("--mlm-head", model_.mlm_head,
                  "BERT: masked (the masked tokens gathered first, the head on them alone, as "
                  "NVIDIA's BERT), all (the head on every token and the loss's scores gathered "
                  "after it, as Habana's MLPerf BERT) or every (the head and the loss on every "
                  "token, as Hugging Face's BertForMaskedLM) (default: masked)")
        ->check(CLI::IsMember({"masked", "all", "every"}));
    c->add_option("--optimizer", model_.optimizer,
                  "adamw, lamb, lars or sgd (momentum), run on fp32 master weights (default: "
                  "the model's: lamb for BERT, lars for ResNet-50, adamw otherwise)")
        ->check(CLI::IsMember(training::optimizer_names()));
    c->add_option("--strategy", strategy_,
                  "hccl: bucketed all-reduces on the chips' RoCE ports, overlapping backward; "
                  "horovod: tensor fusion cycles, ring all-reduces (--staging); "
                  "ipu-multiworker: gradients streamed to the hosts, reduced between them and "
                  "applied by the host CPU; popdist (IPU systems): rings over the IPU-Links "
                  "after backward; ipu-server (IPU systems): IPU-Links in each server, then the "
                  "hosts' network")
        ->check(CLI::IsMember({"hccl", "horovod", "ipu-multiworker", "popdist", "ipu-server"}))
        ->capture_default_str();
    c->add_option("--staging", staging_,
                  "horovod: device (all-reduces on the chips' ports) or host (over PCIe to the "
                  "hosts, reduced there and between them over their network, as with MPI)")
        ->check(CLI::IsMember({"device", "host"}))
        ->capture_default_str();
    c->add_option("--fusion", fusion_text_, "horovod: fusion threshold, a size")
        ->capture_default_str();
    c->add_option("--cycle-time", cycle_text_, "horovod: fusion cycle time, a duration")
        ->capture_default_str();
    c->add_option("--ranks", ranks_, "workers, one per chip from chip 0 (default: every chip)");
    c->add_option("--tf-config", tf_config_,
                  "the workers as TensorFlow's TF_CONFIG (JSON text or a file): one per chip, "
                  "each host a box");
    c->add_option("--hosts", hosts_, "the workers as an mpirun host list: host1:8,host2:8");
    c->add_option("--num-nodes", num_nodes_, "Lightning's num_nodes (with --devices): boxes");
    c->add_option("--devices", devices_, "Lightning's devices per node (with --num-nodes)");
    c->add_option("--steps", steps_, "steps; the first also broadcasts the parameters")
        ->capture_default_str();
    c->add_option("--accumulate", accumulate_,
                  "micro-batches per step: gradients accumulate over this many forward and "
                  "backward passes and are averaged once, overlapping the last")
        ->capture_default_str();
    c->add_option("--pipeline", pipeline_,
                  "IPUs per replica (IPU systems, popdist): the model's layers cut into this many "
                  "pipeline stages, for models one IPU cannot hold; --ranks counts IPUs")
        ->capture_default_str();
    c->add_option("--pipeline-schedule", schedule_text_,
                  "with --pipeline: Graphcore's schedule: grouped (every stage's forward, then "
                  "every backward; faster), interleaved (a backward as soon as its activations "
                  "are made; less memory) or sequential (one micro-batch at a time)");
    c->add_flag("--recompute", recompute_,
                "IPU systems: recomputation: each layer keeps only its output through the "
                "forward pass and recomputes its other activations in the backward pass (a "
                "forward pass more, for less memory)");
    c->add_flag("--shard-optimizer", shard_optimizer_,
                "popdist: replicated tensor sharding of the optimizer state: each replica keeps "
                "and updates 1/R of it; gradients reduce-scattered, new weights all-gathered");
    c->add_option("--bucket", bucket_text_,
                  "gradient bucket cap (DDP's bucket_cap_mb), a size: 25MiB, 0 for one bucket")
        ->capture_default_str();
    c->add_option("--grad-dtype", grad_dtype_, "gradients' type on the wire: bf16 or fp32")
        ->check(CLI::IsMember({"bf16", "fp32"}))
        ->capture_default_str();
    c->add_flag("--no-broadcast", no_broadcast_,
                "skip the first step's broadcast of the parameters (every worker restored the "
                "same checkpoint)");
    c->add_flag("--no-overlap", no_overlap_,
                "all-reduces wait for the backward pass to end instead of overlapping it");
    auto* no_replay =
        c->add_flag("--no-replay", no_replay_,
                    "simulate every collective, even one identical to one before on an idle system "
                    "(which is otherwise replayed, with the same times: docs/training.md)");
    c->add_flag("--replay-congested", replay_congested_,
                "replay identical collectives even after switches have marked ECN (approximate: "
                "the marking streams and DCQCN rates are not carried over; docs/training.md "
                "measures the agreement)")
        ->excludes(no_replay);
    c->add_flag("--ideal-network", ideal_network_,
                "communication takes no time (the compute-bound bound)");
    c->add_option("--chips", chips_text_,
                  "detailed (queues, sync managers, DMA engines) or coarse (engines timed by "
                  "rate) for the collectives")
        ->check(CLI::IsMember({"detailed", "coarse"}))
        ->capture_default_str();
    c->add_option("--profile", profile_in_,
                  "read the step's compute profile from this file instead of measuring it");
    c->add_option("--profile-out", profile_out_,
                  "measure the compute profile, write it here and stop");
    c->add_option("--profile-replicas", profile_replicas_,
                  "replicas measured at once for the profile, on one box's chips: they share its "
                  "host and PCIe tree (BERT-Large: +1.2%), at that many times the cost")
        ->capture_default_str();
    c->add_flag("--functional", functional_,
                "train the mnist model for real: the workers on their chips, the gradients "
                "averaged by the collectives; and one chip beside them on the whole batch, to "
                "compare");
    c->add_option("--scale", scale_,
                  "a scaling study: the same job on the first N chips for each N, one process "
                  "each, over one profile")
        ->delimiter(',')
        ->type_name("N,N,...");
    c->add_option("--csv", csv_file_, "--scale: also write the points as CSV");
    c->add_option("--plot", plot_file_,
                  "--scale: draw samples/s against chips, with linear scaling, as SVG");
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    const training::Model model = make_model();
    const auto system = options.load_system();
    if (ipu(system.config) && subcommand->get_option("--strategy")->count() == 0) {
      strategy_ = "popdist";
    }
    check_recompute(options, system.config);
    if (!profile_out_.empty()) return measure(options, system, model);
    check_options();
    check_strategy(options, system.config);
    if (functional_) return run_functional(options, system, model);
    if (!scale_.empty()) return run_scale(options, model, system);
    // What can be refused is refused before the profile is measured (minutes for a large model).
    auto topology = system::build_topology(system.config, &system.tree);
    const training::Placement placement = place(options, system.config, topology.chips);
    check_fits(options, system, model);
    const training::StepProfile profile = load_profile(options, system.config, model);
    // An IPU's collectives run on its links by the engine rate model: it has no queues to detail.
    const bool coarse = chips_text_ == "coarse" || ipu(system.config);
    require_system_memory(topology.chips, 1, coarse);
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    auto model_options = options.model_options(false);
    model_options.chips = coarse ? system::ChipModel::kCoarse : system::ChipModel::kDetailed;
    system::SystemModel sim("system", system.config, std::move(topology), model_options);
    collectives::Communicator comm(sim, placement.chips, system.tuning);
    const std::uint64_t grad_bytes = grad_dtype_ == "fp32" ? 4 : 2;
    training::DataParallelOptions dp;
    dp.strategy = strategy();
    dp.host_staged = staging_ == "host";
    dp.bucket_bytes = bucket_bytes_;
    dp.fusion_bytes = fusion_bytes_;
    dp.cycle_ps = cycle_ps_;
    dp.gradient_bytes = grad_bytes;
    dp.parameters = model.parameters();
    dp.overlap = !no_overlap_;
    dp.broadcast = !no_broadcast_;
    dp.ideal_network = ideal_network_;
    dp.steps = steps_;
    // Replayed collectives leave no spans in the trace and only their counters in the stats.
    dp.replay = no_replay_ || !options.trace_file.empty() || !options.stats_file.empty()
                    ? training::ReplayMode::kOff
                : replay_congested_ ? training::ReplayMode::kThroughCongestion
                                    : training::ReplayMode::kExact;
    std::unique_ptr<training::HostStaging> hosts;
    if (ipu(system.config))
      dp.rings = 2 * std::max(1, std::min(system.config.box.ladder.links_per_rung,
                                          system.config.box.ladder.links_per_column_neighbour));
    if (training::uses_hosts(dp.strategy, dp.host_staged)) {
      hosts = host_staging(system, placement.chips, model_options);
    }
    const int replicas = static_cast<int>(placement.chips.size()) / pipeline_;
    const training::IpuPipeline pipeline = plan_replica(system.config, model, profile, replicas);
    if (pipeline_ > 1) {
      for (const training::PipelineStage& stage : pipeline.stages) {
        dp.stage_parameters.push_back(stage.parameters);
      }
    }
    dp.shard_optimizer = shard_optimizer_;
    training::DataParallelRun run(
        "train", comm,
        ipu(system.config)
            ? training::replica_timeline(model, profile.shapes, pipeline, accumulate_, grad_bytes)
            : training::step_timeline(model, profile.shapes, grad_bytes, accumulate_),
        dp, hosts ? hosts->path() : training::HostPath{});
    sc_core::sc_start();
    const double cpu = cpu_seconds() - cpu_before;
    if (!options.stats_file.empty()) {
      core::stats_registry().write(options.stats_file, core::now_ps());
    }
    if (!run.failure().empty() || static_cast<int>(run.steps().size()) != steps_) {
      fmt::print(stderr, "podsim: train failed: {}\n",
                 run.failure().empty() ? "the steps did not finish" : run.failure());
      return 1;
    }
    report(options, model, profile, sim, placement, run, cpu, fabric_totals(sim), hosts.get(),
           pipeline);
    return 0;
  }

 private:
  static bool ipu(const system::SystemConfig& config) {
    return config.compute == system::ComputeModel::kIpuRoofline;
  }

  // Recomputation is the IPU roofline's; a measured profile runs recipes that do not recompute.
  void check_recompute(const GlobalOptions& options, const system::SystemConfig& config) const {
    if (recompute_ && !ipu(config)) {
      throw UsageError(fmt::format(
          "train: --recompute times the IPU roofline's recomputation; {} measures its profile "
          "by running the model's recipes, which do not recompute",
          options.system));
    }
  }

  // IPU systems take the IPU strategies; the others, the Gaudi ones.
  void check_strategy(const GlobalOptions& options, const system::SystemConfig& config) const {
    const bool ipu_strategy = strategy_ == "popdist" || strategy_ == "ipu-server";
    if (ipu(config) && (strategy_ == "hccl" || strategy_ == "horovod")) {
      throw UsageError(
          fmt::format("train: --strategy {} runs on RoCE ports; {} is an IPU system: use popdist, "
                      "ipu-server or ipu-multiworker",
                      strategy_, options.system));
    }
    if (pipeline_ > 1 && (!ipu(config) || strategy_ != "popdist")) {
      throw UsageError(fmt::format(
          "train: --pipeline {} pipelines a replica over IPUs: it runs popdist on IPU systems{}",
          pipeline_, ipu(config) ? "" : fmt::format("; {} is not one", options.system)));
    }
    if (shard_optimizer_ && strategy_ != "popdist") {
      throw UsageError(fmt::format(
          "train: --shard-optimizer shards the optimizer state over popdist's replicas on IPU "
          "systems; --strategy {} keeps it {}",
          strategy_, strategy_ == "ipu-multiworker" ? "on the hosts" : "whole on every worker"));
    }
    if (!ipu(config) && ipu_strategy) {
      throw UsageError(
          fmt::format("train: --strategy {} runs on IPU systems (ipu-pod16, ipu-pod64, ipu-pod128, "
                      "ipu-pod256, ipu-server); {} is not one",
                      strategy_, options.system));
    }
  }

  training::Strategy strategy() const {
    if (strategy_ == "horovod") return training::Strategy::kHorovod;
    if (strategy_ == "ipu-multiworker") return training::Strategy::kIpuMultiworker;
    if (strategy_ == "popdist") return training::Strategy::kPopdist;
    if (strategy_ == "ipu-server") return training::Strategy::kIpuServer;
    return training::Strategy::kHccl;
  }

  static std::unique_ptr<training::HostStaging> host_staging(
      const collectives::LoadedSystemFile& system, const std::vector<int>& chips,
      const system::ModelOptions& model_options) {
    try {
      return std::make_unique<training::HostStaging>(system.config, chips, model_options,
                                                     system.tuning);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: {}", e.what()));
    }
  }

  training::Model make_model() const {
    try {
      return training::make_model(model_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: {}", e.what()));
    }
  }

  void check_options() {
    if (steps_ < 1) throw UsageError("train: --steps must be at least 1");
    if (staging_ == "host" && strategy_ != "horovod") {
      throw UsageError("train: --staging host goes with --strategy horovod");
    }
    if (accumulate_ < 1) throw UsageError("train: --accumulate must be at least 1");
    if (pipeline_ < 1) throw UsageError("train: --pipeline must be at least 1");
    if (!schedule_text_.empty() && pipeline_ == 1) {
      throw UsageError("train: --pipeline-schedule goes with --pipeline (2 or more stages)");
    }
    try {
      if (!schedule_text_.empty()) schedule_ = training::parse_schedule(schedule_text_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: --pipeline-schedule: {}", e.what()));
    }
    bucket_bytes_ = bucket_text_ == "0" ? 0 : parse_size_option("--bucket", bucket_text_);
    if (scale_.empty() && !(csv_file_.empty() && plot_file_.empty())) {
      throw UsageError("train: --csv and --plot go with --scale");
    }
    for (int n : scale_) {
      if (n < 1) throw UsageError(fmt::format("train: --scale {}: chips must be positive", n));
    }
    const int placements = (ranks_ > 0) + !tf_config_.empty() + !hosts_.empty() +
                           (num_nodes_ > 0 || devices_ > 0) + !scale_.empty();
    if (placements > 1) {
      throw UsageError(
          "train: --ranks, --tf-config, --hosts, --num-nodes/--devices and --scale each say "
          "where the workers run: give one");
    }
    if ((num_nodes_ > 0) != (devices_ > 0)) {
      throw UsageError("train: --num-nodes and --devices go together");
    }
    fusion_bytes_ = parse_size_option("--fusion", fusion_text_);
    std::string error;
    const auto cycle = core::parse_duration(cycle_text_, &error);
    if (!cycle || cycle->ps <= 0) {
      throw UsageError(fmt::format("train: --cycle-time {}: {}", cycle_text_,
                                   error.empty() ? "must be positive" : error));
    }
    cycle_ps_ = static_cast<core::TimePs>(cycle->ps);
  }

  // The chips the workers run on, from whichever description the user gave.
  training::Placement place(const GlobalOptions& options, const system::SystemConfig& config,
                            int chips) const {
    const training::BoxShape shape{config.boxes, config.box.chips, config.host.servers};
    try {
      if (!tf_config_.empty()) {
        const bool file = std::filesystem::is_regular_file(tf_config_);
        return training::place_tf_config(file ? read_file(tf_config_) : tf_config_, shape);
      }
      if (!hosts_.empty()) return training::place_host_list(hosts_, shape);
      if (num_nodes_ > 0) return training::place_nodes(num_nodes_, devices_, shape);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: {} ({}: {} box{} of {} chips)", e.what(), options.system,
                                   shape.boxes, shape.boxes == 1 ? "" : "es", shape.per_box));
    }
    const int ranks = ranks_ > 0 ? ranks_ : chips;
    if (ranks < 1 || ranks > chips) {
      throw UsageError(
          fmt::format("train: --ranks {}: {} has {} chips", ranks, options.system, chips));
    }
    if (config.box.wiring == system::BoxWiring::kLadder) {
      try {
        if (pipeline_ > 1) {
          return training::place_pipeline(ranks, pipeline_, config.box.ladder, shape);
        }
        return training::place_rings(ranks, config.box.ladder, shape);
      } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("train: --ranks {}: {}", ranks, e.what()));
      }
    }
    training::Placement p;
    for (int r = 0; r < ranks; ++r) p.chips.push_back(r);
    p.description =
        fmt::format("{} worker{} on chips 0-{}", ranks, ranks == 1 ? "" : "s", ranks - 1);
    return p;
  }

  // --functional: the workers' replicas and a one-chip run of their whole batch beside them
  // (on the first chip no worker uses, if any), both trained for real in one simulation.
  int run_functional(const GlobalOptions& options, const collectives::LoadedSystemFile& system,
                     const training::Model& model) {
    if (ipu(system.config)) {
      throw UsageError(
          fmt::format("train --functional: {}'s compute is a roofline, which moves no data; train "
                      "functionally on a Gaudi system",
                      options.system));
    }
    if (model.name != "mnist") {
      throw UsageError(fmt::format(
          "train --functional: {} is too large to train in functional mode here; it trains "
          "the mnist model",
          model.name));
    }
    if (!scale_.empty() || ideal_network_ || no_overlap_ || !profile_in_.empty() ||
        accumulate_ > 1) {
      throw UsageError(
          "train --functional: --scale, --ideal-network, --no-overlap, --accumulate "
          "and --profile are for timing runs");
    }
    served_device(system, "train", options.system);
    auto topology = system::build_topology(system.config, &system.tree);
    const int chips = topology.chips;
    const training::Placement placement = place(options, system.config, chips);
    require_system_memory(chips, 1, false);
    for (const std::string& f : {options.json_file}) {
      if (!f.empty()) write_output_file(f, "");  // writable before the run
    }
    training::FunctionalOptions o;
    o.strategy = strategy();
    o.host_staged = staging_ == "host";
    o.replicas = static_cast<int>(placement.chips.size());
    o.batch = model.batch;
    o.steps = steps_;
    o.bucket_bytes = bucket_bytes_ == 0 ? ~0ull : bucket_bytes_;
    o.fusion_bytes = fusion_bytes_;
    o.broadcast = !no_broadcast_;
    o.seed = options.seed;
    return train_functionally(options, system, std::move(topology), model, placement, o, strategy_);
  }

  // The IPU roofline's assumptions, with the job's recomputation.
  training::IpuWorkModel ipu_work() const {
    training::IpuWorkModel work;
    work.recompute = recompute_;
    return work;
  }

  // An IPU system's profile: the roofline, at once.
  training::StepProfile ipu_profile(const system::SystemConfig& config,
                                    const training::Model& model) const {
    try {
      // A pipelined replica's stages check their own memory (ipu_pipeline.h).
      return training::ipu_profile(model, config.ipu, config.chip.name, ipu_work(), pipeline_ == 1);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: {}", e.what()));
    }
  }

  // A Gaudi system's chip must be one the driver serves, and the replica must fit its memory:
  // data parallelism keeps the whole model, its gradients and optimizer state on every chip.
  void check_fits(const GlobalOptions& options, const collectives::LoadedSystemFile& system,
                  const training::Model& model) const {
    if (ipu(system.config) || !profile_in_.empty()) return;
    const driver::DeviceProperties props = served_device(system, "train", options.system);
    const training::ReplicaMemory need = training::replica_memory(model);
    if (need.total() <= static_cast<double>(props.dram_size)) return;
    throw UsageError(fmt::format(
        "train: {} ({:.2f} G parameters, {} a worker) does not fit a {}: {}, more than "
        "its {:.1f} GB of device memory. Data parallelism keeps the whole model, its gradients "
        "and its optimizer state on every chip: try fewer --layers, a smaller --hidden or "
        "--batch (ZeRO, tensor and pipeline parallelism are not built yet)",
        model.name, static_cast<double>(model.parameters()) / 1e9,
        model.batch == 1 ? std::string("1 sample") : fmt::format("{} samples", model.batch),
        system.config.chip.name, need.describe(), static_cast<double>(props.dram_size) / 1e9));
  }

  // The child's part: the profile on a one-box copy of the system, written to --profile-out.
  int measure(const GlobalOptions& options, const collectives::LoadedSystemFile& system,
              const training::Model& model) {
    if (ipu(system.config)) {
      const std::string text = ipu_profile(system.config, model).to_json().dump(2) + "\n";
      write_output_file(profile_out_, text);
      if (!options.json_file.empty()) write_output_file(options.json_file, text);
      return 0;
    }
    const driver::DeviceProperties props = served_device(system, "train", options.system);
    write_output_file(profile_out_, "");  // writable before the run
    system::SystemConfig config = one_box(system.config);
    // The profile's own timeline (every engine's jobs while the shapes are measured).
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    // Timing-only: TPC tiles identical to one already run replay its recorded time, which is
    // exact (docs/tpc/core.md) and spares executing every tile of a large activation again.
    config.chip.tpc.core.tile_reuse = true;
    system::SystemModel sim("system", config, system::build_topology(config),
                            options.model_options(false));
    const int replicas = profile_replicas_;
    if (replicas < 1 || replicas > config.box.chips) {
      throw UsageError(fmt::format("train: --profile-replicas {}: a box of {} has {} chips",
                                   replicas, options.system, config.box.chips));
    }
    ProgressBar progress("profile", !options.quiet);
    std::vector<int> chips(static_cast<std::size_t>(replicas));
    std::iota(chips.begin(), chips.end(), 0);
    std::vector<training::StepProfile> measured(chips.size());
    training::ReplicaBarrier barrier(replicas);
    const std::string failure =
        run_with_runtimes(sim, props, chips, [&](synapse::Runtime& runtime, int chip) {
          measured[static_cast<std::size_t>(chip)] = training::measure_profile(
              runtime, model, config.chip.name,
              [&](int done, int all) {
                if (chip == 0) progress.update(static_cast<double>(done) / all);
              },
              &barrier);
        });
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!failure.empty()) {
      std::filesystem::remove(profile_out_);
      fmt::print(stderr, "podsim: train: measuring the profile failed: {}\n", failure);
      return 1;
    }
    const std::string text = training::slowest_replica(measured).to_json().dump(2) + "\n";
    write_output_file(profile_out_, text);
    if (!options.json_file.empty()) write_output_file(options.json_file, text);
    return 0;
  }

  training::StepProfile load_profile(const GlobalOptions& options,
                                     const system::SystemConfig& config,
                                     const training::Model& model) {
    std::string where = profile_in_;
    std::string text;
    if (profile_in_.empty() && ipu(config)) return ipu_profile(config, model);
    if (!profile_in_.empty()) {
      if (!std::filesystem::is_regular_file(profile_in_)) {
        throw UsageError(fmt::format("train: --profile {}: no such file", profile_in_));
      }
      text = read_file(profile_in_);
    } else {
      where = "the measured profile";
      text = measure_in_child(options);
    }
    try {
      const auto j = nlohmann::json::parse(text);
      training::StepProfile p = training::StepProfile::from_json(j, where);
      p.check_matches(model, where);
      return p;
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("train: {}: not JSON: {}", where, e.what()));
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: {}", e.what()));
    }
  }

  // Runs `podsim train --profile-out` in a forked child and returns what it wrote.
  std::string measure_in_child(const GlobalOptions& options) const {
    const ScratchDir dir("train");
    std::vector<std::string> args = global_args(options);
    args.insert(args.end(), {"train", "--profile-out", (dir / "profile.json").string()});
    args.insert(args.end(), {"--profile-replicas", std::to_string(profile_replicas_)});
    add_model_args(args);
    const ChildExit child = run_child(args, dir);
    const std::string text = read_file(dir / "profile.json");
    if (child.status == 2) {
      // The child refused the job: the job's fault, said as the child said it.
      const std::string prefix = "podsim: error: ";
      throw UsageError(child.error.rfind(prefix, 0) == 0 ? child.error.substr(prefix.size())
                                                         : child.error);
    }
    if (child.status != 0 || text.empty()) {
      throw std::runtime_error(
          fmt::format("measuring the compute profile failed: {}", child.error));
    }
    return text;
  }

  void add_model_args(std::vector<std::string>& args) const {
    args.insert(args.end(), {"--model", model_.name});
    const std::pair<const char*, std::uint32_t> shape[] = {
        {"--batch", model_.batch},  {"--layers", model_.layers},     {"--hidden", model_.hidden},
        {"--heads", model_.heads},  {"--sequence", model_.sequence}, {"--vocab", model_.vocab},
        {"--packed", model_.packed}};
    for (const auto& [flag, value] : shape) {
      if (value != 0) args.insert(args.end(), {flag, std::to_string(value)});
    }
    if (model_.dropout >= 0)
      args.insert(args.end(), {"--dropout", fmt::format("{}", model_.dropout)});
    if (!model_.optimizer.empty()) args.insert(args.end(), {"--optimizer", model_.optimizer});
    if (!model_.attention.empty()) args.insert(args.end(), {"--attention", model_.attention});
    if (!model_.mlm_head.empty()) args.insert(args.end(), {"--mlm-head", model_.mlm_head});
  }

  // Runs `podsim ARGS` in a forked child with its output in `dir`, and waits for it.
  static ChildExit run_child(const std::vector<std::string>& args, const ScratchDir& dir) {
    return wait_forked_podsim(start_forked_podsim(args, dir / "out.txt", dir / "err.txt"),
                              dir / "err.txt");
  }

  // The global options a child repeats.
  static std::vector<std::string> global_args(const GlobalOptions& options) {
    std::vector<std::string> args = {"--system", options.system, "--seed",
                                     std::to_string(options.seed), "-q"};
    for (const std::string& o : options.overrides) args.insert(args.end(), {"--set", o});
    if (options.network == system::NetworkMode::kFlow) {
      args.insert(args.end(), {"--network", "flow"});
    }
    return args;
  }

  // --scale: the profile once, then each point in a child process of its own.
  int run_scale(const GlobalOptions& options, const training::Model& model,
                const collectives::LoadedSystemFile& system) {
    const int chips = system::build_topology(system.config, &system.tree).chips;
    for (int n : scale_) {
      if (n > chips) {
        throw UsageError(
            fmt::format("train: --scale {}: {} has {} chips", n, options.system, chips));
      }
    }
    for (const std::string& f : {csv_file_, plot_file_, options.json_file}) {
      if (!f.empty()) write_output_file(f, "");  // writable before the run
    }
    check_fits(options, system, model);
    const ScratchDir dir("scale");
    const training::StepProfile profile = load_profile(options, system.config, model);
    write_output_file((dir / "profile.json").string(), profile.to_json().dump(2) + "\n");
    ProgressBar progress("train", !options.quiet);
    std::vector<nlohmann::json> points;
    std::vector<std::string> failed;
    for (std::size_t i = 0; i < scale_.size(); ++i) {
      std::vector<std::string> args = global_args(options);
      args.push_back("train");
      add_model_args(args);
      add_job_args(args);
      args.insert(args.end(),
                  {"--ranks", std::to_string(scale_[i]), "--profile",
                   (dir / "profile.json").string(), "--json", (dir / "point.json").string()});
      const ChildExit child = run_child(args, dir);
      if (child.status == 0) {
        points.push_back(nlohmann::json::parse(read_file(dir / "point.json")));
      } else {
        failed.push_back(fmt::format("{} chips: {}", scale_[i], child.error));
      }
      progress.update(static_cast<double>(i + 1) / static_cast<double>(scale_.size()));
    }
    report_scale(
        {options.system, strategy_, ideal_network_, csv_file_, plot_file_, options.json_file},
        model, profile, points);
    for (const std::string& f : failed) fmt::print(stderr, "podsim: train failed at {}\n", f);
    return failed.empty() ? 0 : 1;
  }

  // What the job's points share besides the model.
  void add_job_args(std::vector<std::string>& args) const {
    args.insert(args.end(), {"--strategy",   strategy_,
                             "--staging",    staging_,
                             "--steps",      std::to_string(steps_),
                             "--bucket",     bucket_text_,
                             "--grad-dtype", grad_dtype_,
                             "--chips",      chips_text_,
                             "--fusion",     fusion_text_,
                             "--cycle-time", cycle_text_,
                             "--accumulate", std::to_string(accumulate_),
                             "--pipeline",   std::to_string(pipeline_)});
    if (!schedule_text_.empty()) args.insert(args.end(), {"--pipeline-schedule", schedule_text_});
    if (no_overlap_) args.push_back("--no-overlap");
    if (no_broadcast_) args.push_back("--no-broadcast");
    if (ideal_network_) args.push_back("--ideal-network");
    if (no_replay_) args.push_back("--no-replay");
    if (replay_congested_) args.push_back("--replay-congested");
    if (shard_optimizer_) args.push_back("--shard-optimizer");
    if (recompute_) args.push_back("--recompute");
  }

  void report(const GlobalOptions& options, const training::Model& model,
              const training::StepProfile& profile, system::SystemModel& sim,
              const training::Placement& placement, const training::DataParallelRun& run,
              double cpu, const FabricTotals& fabric, const training::HostStaging* hosts,
              const training::IpuPipeline& pipeline) const {
    const int ranks = static_cast<int>(placement.chips.size());
    const training::Timeline& t = run.timeline();
    const int replicas = ranks / pipeline_;
    const double samples = static_cast<double>(model.batch) * replicas * t.micro_batches;
    // Linear scaling: every worker at its compute's pace.
    const double linear = samples / (static_cast<double>(run.compute_ps()) * 1e-12);
    nlohmann::json steps_json = nlohmann::json::array();
    fmt::print("model      {}\n", model.description);
    fmt::print("system     {}, {} workers ({} chips{}, {} network)\n", options.system, ranks,
               profile.chip, sim.chip_model() == system::ChipModel::kCoarse ? ", coarse" : "",
               options.network == system::NetworkMode::kFlow ? "flow" : "packet");
    fmt::print("placement  {}\n", placement.description);
    const std::string measured =
        ipu(sim.config())
            ? fmt::format("{}'s bulk-synchronous roofline{}", profile.chip,
                          recompute_ ? ", backward recomputing each layer's activations" : "")
            : fmt::format("the slowest of {} {} chip{} measured at once", profile.replicas,
                          profile.chip, profile.replicas == 1 ? "" : "s");
    fmt::print("compute    {}, optimizer {:.3f} ms per step ({}{})\n", passes_text(t),
               ms(t.optimizer_ps), measured, profile_in_.empty() ? "" : ", from " + profile_in_);
    const std::string how = strategy_text(run, ranks);
    fmt::print("strategy   {}: {} ({} gradients){}{}\n", strategy_, how, grad_dtype_,
               no_overlap_ || strategy_ == "popdist" ? ", after the backward pass"
                                                     : ", overlapping the backward pass",
               ideal_network_ ? ", ideal network" : "");
    if (hosts) {
      fmt::print("hosts      {}\n", hosts->description());
    }
    if (!pipeline.stages.empty()) {
      print_ipu_plan(model, pipeline, t, strategy_ != "ipu-multiworker");
    }
    if (t.micro_batches > 1) {
      fmt::print(
          "accumulate {} micro-batches per step ({} samples per {}), gradients averaged after "
          "the last\n",
          t.micro_batches, model.batch * static_cast<std::uint32_t>(t.micro_batches),
          pipeline_ > 1 ? "replica" : "worker");
    }
    fmt::print("{:>5} {:>11} {:>11} {:>11} {:>11} {:>12} {:>10}\n", "step", "step_ms", "compute_ms",
               "comm_ms", "exposed_ms", "samples/s", "efficiency");
    for (std::size_t i = 0; i < run.steps().size(); ++i) {
      const training::StepResult& s = run.steps()[i];
      const core::TimePs exposed = s.step_ps() - run.compute_ps();
      const double rate = samples / (static_cast<double>(s.step_ps()) * 1e-12);
      fmt::print("{:>5} {:>11.3f} {:>11.3f} {:>11.3f} {:>11.3f} {:>12.1f} {:>9.1f}%{}\n", i,
                 ms(s.step_ps()), ms(run.compute_ps()), ms(s.comm_ps), ms(exposed), rate,
                 100.0 * rate / linear,
                 i == 0 ? fmt::format("  (with the {:.3f} ms broadcast)", ms(s.broadcast_ps)) : "");
      steps_json.push_back({{"step", i},
                            {"step_ps", s.step_ps()},
                            {"compute_ps", run.compute_ps()},
                            {"comm_ps", s.comm_ps},
                            {"all_reduces", s.all_reduces},
                            {"all_gathers", s.all_gathers},
                            {"fusion_cycles", s.cycles},
                            {"exposed_ps", exposed},
                            {"broadcast_ps", s.broadcast_ps},
                            {"samples_per_s", rate},
                            {"efficiency", rate / linear}});
    }
    // The busiest direction of a switch-to-switch link, over the whole run.
    const double run_seconds = static_cast<double>(core::now_ps()) * 1e-12;
    const double busiest =
        fabric.uplink_max_bytes > 0 && run_seconds > 0
            ? fabric.uplink_max_bytes * 8 /
                  (static_cast<double>(sim.config().uplink_rate().bits_per_second) * run_seconds)
            : 0.0;
    if (busiest > 0) {
      fmt::print(
          "fabric     busiest switch-to-switch link: {:.1f} MB per direction, {:.1f}% of its line "
          "rate over the run; {:.2f}x the mean link's load\n",
          fabric.uplink_max_bytes * 1e-6, 100 * busiest,
          fabric.uplink_max_bytes / fabric.uplink_mean_bytes);
    }
    const training::CollectiveReplay& replay = run.replay();
    fmt::print("simulator  {:.2f} s CPU for the steps (profile not included){}\n", cpu,
               replay.replayed() == 0
                   ? std::string()
                   : fmt::format("; {} of {} collectives replayed{} (--no-replay simulates them)",
                                 replay.replayed(), replay.replayed() + replay.simulated(),
                                 replay_congested_ ? ", through congestion: approximate" : ""));
    if (options.json_file.empty()) return;
    nlohmann::json j{{"model", model.name},
                     {"description", model.description},
                     {"parameters", model.parameters()},
                     {"batch_per_worker", model.batch},
                     {"micro_batches", t.micro_batches},
                     {"system", options.system},
                     {"workers", ranks},
                     {"replicas", replicas},
                     {"pipeline_stages", pipeline_},
                     {"chips", placement.chips},
                     {"placement", placement.description},
                     {"strategy", strategy_},
                     {"staging", staging_},
                     {"hosts", hosts ? hosts->hosts() : 0},
                     {"buckets", run.buckets().size()},
                     {"overlap", !no_overlap_},
                     {"ideal_network", ideal_network_},
                     {"profile", profile.to_json()},
                     {"pipeline", ipu_plan_json(pipeline)},
                     {"optimizer_shards", pipeline.state_shards},
                     {"recompute", recompute_},
                     {"steps", steps_json},
                     {"fabric", fabric.to_json()},
                     {"busiest_link_utilisation", busiest},
                     {"simulation_cpu_s", cpu},
                     {"collectives_simulated", replay.simulated()},
                     {"collectives_replayed", replay.replayed()},
                     {"replay_through_congestion", replay_congested_}};
    write_output_file(options.json_file, j.dump(2) + "\n");
  }

  // An IPU replica's plan (ipu_pipeline.h): its stages (one unless --pipeline) and where their
  // optimizer state lives, sharded over `replicas` with --shard-optimizer. None off IPUs.
  training::IpuPipeline plan_replica(const system::SystemConfig& config,
                                     const training::Model& model,
                                     const training::StepProfile& profile, int replicas) const {
    if (!ipu(config)) return {};
    const int shards = shard_optimizer_ ? replicas : 1;
    if (pipeline_ == 1) {
      return training::plan_ipu_pipeline(model, profile.shapes, config.ipu, 1, accumulate_,
                                         config.ipu.ipu_link_rate_each_way(), shards, ipu_work());
    }
    // place_pipeline's stages are neighbouring blocks: IPU-Links inside a pod, GW-Links (the
    // scale-out ports) between pods once the IPUs span several.
    const int ipus = ranks_ > 0 ? ranks_ : config.boxes * config.box.chips;
    const bool across_pods = ipus > config.box.chips;
    if (across_pods && config.scale_out.port_speed.bits_per_second == 0) {
      throw UsageError(fmt::format(
          "train: --pipeline {} over {} IPUs: the stages would span {}'s boxes, which no "
          "GW-Links join (their hosts' network does not carry a pipeline)",
          pipeline_, ipus, config.name));
    }
    const core::Bandwidth link =
        across_pods ? config.scale_out.port_speed : config.ipu.ipu_link_rate_each_way();
    try {
      return training::plan_ipu_pipeline(model, profile.shapes, config.ipu, pipeline_, accumulate_,
                                         link, shards, ipu_work(), schedule_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("train: --pipeline {}: {}", pipeline_, e.what()));
    }
  }

  // A step's passes: the pipeline's slots, or the micro-batches that accumulate before the last
  // one's forward and backward.
  static std::string passes_text(const training::Timeline& t) {
    if (t.pipeline_stages > 1) {
      return fmt::format("pipeline {:.3f} ms ({} micro-batches through {} stages)",
                         ms(t.backward_ps), t.micro_batches, t.pipeline_stages);
    }
    const std::string last =
        fmt::format("forward {:.3f} ms, backward {:.3f} ms", ms(t.forward_ps - t.accumulating_ps),
                    ms(t.backward_ps - t.forward_ps));
    if (t.micro_batches == 1) return last;
    return fmt::format("{} micro-batches accumulating {:.3f} ms, then the last one's {}",
                       t.micro_batches - 1, ms(t.accumulating_ps), last);
  }

  // How the strategy reduces, for the report.
  std::string strategy_text(const training::DataParallelRun& run, int ranks) const {
    if (strategy_ == "horovod") {
      return fmt::format(
          "tensor fusion up to {} every {}, ring all-reduces{}, learning rate scaled by {}",
          fusion_text_, cycle_text_, staging_ == "host" ? " staged through the hosts" : "", ranks);
    }
    if (strategy_ == "popdist") {
      return fmt::format(
          "{}{} by GCL's rings over the IPU-Links (GW-Links between pods), compiled into the "
          "step; broadcast over the hosts",
          shard_optimizer_ ? "the gradients reduce-scattered after the backward pass onto the "
                             "replicas' optimizer shards and the new weights all-gathered after "
                             "their update"
                           : "every gradient all-reduced after the backward pass",
          pipeline_ > 1 ? ", each stage's among that stage's IPUs, every stage at once," : "");
    }
    if (strategy_ == "ipu-server") {
      return "every gradient all-reduced in each server over its IPU-Links, then between the "
             "servers' hosts over their network, and back over PCIe";
    }
    if (strategy_ == "ipu-multiworker") {
      return "each gradient streamed to the hosts, reduced between them, applied by the host "
             "CPU and sent back";
    }
    return fmt::format("{} bucket{} of at most {}", run.buckets().size(),
                       run.buckets().size() == 1 ? "" : "s",
                       bucket_bytes_ == 0 ? "everything" : bucket_text_);
  }

  training::ModelRequest model_;
  std::string strategy_ = "hccl";
  std::string staging_ = "device";
  int ranks_ = 0;
  int steps_ = 2;
  std::string bucket_text_ = "25MiB";
  std::string fusion_text_ = "64MiB", cycle_text_ = "5ms";
  std::uint64_t fusion_bytes_ = 64ull << 20;
  core::TimePs cycle_ps_ = 5'000'000'000;
  std::string tf_config_, hosts_;
  int num_nodes_ = 0, devices_ = 0;
  std::uint64_t bucket_bytes_ = 25ull << 20;
  std::string grad_dtype_ = "bf16";
  bool no_overlap_ = false;
  bool no_broadcast_ = false;
  bool ideal_network_ = false;
  std::string chips_text_ = "detailed";
  std::string profile_in_, profile_out_;
  int profile_replicas_ = 1;
  std::vector<int> scale_;
  bool functional_ = false;
  int accumulate_ = 1;
  int pipeline_ = 1;
  std::string schedule_text_;  // --pipeline-schedule as given (passed on to --scale's points)
  training::PipelineSchedule schedule_ = training::PipelineSchedule::kGrouped;
  bool no_replay_ = false, replay_congested_ = false;
  bool shard_optimizer_ = false;
  bool recompute_ = false;
  std::string csv_file_, plot_file_;
};

}  // namespace

std::unique_ptr<Command> add_train_command(CLI::App& app) {
  return std::make_unique<TrainCommand>(app);
}

}  // namespace podsim::sims
