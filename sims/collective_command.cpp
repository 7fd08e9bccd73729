// `podsim collective`: nccl-tests / hccl_demo-style benchmarks of collectives on a modeled
// system: a sweep of sizes, each run --warmup times untimed and --iters times timed, one row per
// size with time, algorithm and bus bandwidth, and (unless --timing-only) every result checked
// bit for bit against the host's reference.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "collectives/communicator.h"
#include "collectives/launcher.h"
#include "collectives/reference.h"
#include "hw/core/event_queue.h"
#include "hw/core/kernel.h"
#include "hw/core/stats.h"
#include "hw/core/trace.h"
#include "sims/command.h"
#include "sims/progress.h"

namespace podsim::sims {
namespace {

struct Row {
  std::uint64_t bytes = 0, count = 0;
  double seconds = 0;  // mean over the timed iterations
  std::uint64_t wrong = 0;
  bool ok = true;
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
};

// Runs the sweep from inside the simulation, one collective at a time.
class CollectiveRunner : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CollectiveRunner);
  CollectiveRunner(sc_core::sc_module_name name, collectives::Communicator& comm,
                   std::vector<collectives::Spec> specs, int warmup, int iters, bool check,
                   std::uint64_t seed, ProgressBar& progress)
      : sc_module(name),
        comm_(comm),
        specs_(std::move(specs)),
        warmup_(warmup),
        iters_(iters),
        check_(check),
        seed_(seed),
        progress_(progress) {
    SC_THREAD(run);
  }
  const std::vector<Row>& rows() const { return rows_; }
  bool finished() const { return rows_.size() == specs_.size(); }

 private:
  void run() {
    try {
      comm_.open();
    } catch (const std::runtime_error& e) {
      fmt::print(stderr, "podsim: {}\n", e.what());
      return;
    }
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      rows_.push_back(run_size(specs_[i]));
      progress_.update(static_cast<double>(i + 1) / static_cast<double>(specs_.size()));
    }
  }

  Row run_size(const collectives::Spec& spec) {
    Row row;
    row.bytes = collectives::size_bytes(spec);
    row.count = spec.count;
    core::TimePs total = 0;
    for (int i = 0; i < warmup_ + iters_; ++i) {
      std::vector<collectives::Bytes> inputs;
      if (check_)
        inputs = collectives::load_inputs(comm_, spec, seed_ + static_cast<std::uint64_t>(i));
      auto handle = comm_.start(spec);
      handle->wait_done();
      row.ok = row.ok && handle->ok;
      if (i >= warmup_) total += handle->end_ps - handle->start_ps;
      if (check_) row.wrong += collectives::check_outputs(comm_, spec, handle->algorithm, inputs);
      row.algorithm = handle->algorithm;
    }
    row.seconds = static_cast<double>(total) * 1e-12 / iters_;
    return row;
  }

  collectives::Communicator& comm_;
  std::vector<collectives::Spec> specs_;
  int warmup_, iters_;
  bool check_;
  std::uint64_t seed_;
  ProgressBar& progress_;
  std::vector<Row> rows_;
};

class CollectiveCommand : public Command {
 public:
  explicit CollectiveCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "collective", "nccl-tests-style collective benchmark: a sweep of sizes on the system");
    subcommand
        ->add_option("--op", op_,
                     "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all or "
                     "send_recv")
        ->capture_default_str()
        ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                               "all_to_all", "alltoall", "send_recv", "sendrecv"}));
    subcommand
        ->add_option("--algo", algo_,
                     "auto, ring, mesh (direct), halving_doubling, tree (double binary tree) or "
                     "hierarchical (all_reduce over whole boxes)")
        ->capture_default_str()
        ->check(CLI::IsMember({"ring", "mesh", "direct", "hierarchical", "halving_doubling", "hd",
                               "tree", "double_binary_tree", "auto"}));
    subcommand->add_option("--root", root_, "root rank of broadcast and reduce")
        ->capture_default_str();
    subcommand->add_option("--rings", rings_, "rings of a ring all_reduce (every second backwards)")
        ->capture_default_str();
    subcommand
        ->add_option("--pipeline", pipeline_,
                     "pieces of a hierarchical all_reduce whose phases overlap (0: one per "
                     "64 MiB, 1 to 4)")
        ->capture_default_str();
    subcommand->add_option("--check,-c", check_, "check every result (1) or not (0)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1));
    subcommand->add_option("--dtype", dtype_, "float, bf16, half or int32")
        ->capture_default_str()
        ->check(CLI::IsMember({"float", "fp32", "bf16", "half", "fp16", "int32", "int"}));
    subcommand->add_option("--redop", redop_, "sum, min or max")
        ->capture_default_str()
        ->check(CLI::IsMember({"sum", "min", "max"}));
    subcommand
        ->add_option("--reduce-on", reduce_on_,
                     "engines that reduce: dma (the DMA engines) or tpc (TPC kernels)")
        ->capture_default_str()
        ->check(CLI::IsMember({"dma", "tpc"}));
    subcommand->add_option("--min-bytes,-b", min_bytes_, "smallest size")->capture_default_str();
    subcommand->add_option("--max-bytes,-e", max_bytes_, "largest size")->capture_default_str();
    subcommand->add_option("--factor,-f", factor_, "size multiplier between rows")
        ->capture_default_str();
    subcommand->add_option("--sizes", sizes_, "explicit sizes instead of the sweep (1MiB,...)")
        ->delimiter(',');
    subcommand->add_option("--ranks", ranks_, "ranks on chips 0..N-1 (default: every chip)");
    subcommand->add_option("--iters", iters_, "timed runs per size")->capture_default_str();
    subcommand->add_option("--warmup", warmup_, "untimed runs per size first")
        ->capture_default_str();
    subcommand->add_option("--chunk", chunk_, "pipelining unit of the algorithm")
        ->capture_default_str();
    subcommand->add_flag("--in-place", in_place_, "output over input, as NCCL's in-place");
    subcommand->add_flag("--timing-only", timing_only_,
                         "move no data and check nothing (large sweeps; same times)");
    subcommand->add_option("--csv", csv_file_, "also write the table as CSV");
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    auto overrides = options.overrides;
    const auto system = collectives::load_system_file(options.system, overrides);
    if (iters_ < 1) throw UsageError("--iters must be at least 1");
    if (warmup_ < 0) throw UsageError("--warmup must not be negative");
    auto topology = system::build_topology(system.config, &system.tree);
    const int ranks = ranks_ > 0 ? ranks_ : topology.chips;
    if (ranks < 1 || ranks > topology.chips) {
      throw UsageError(fmt::format("--ranks {}: the system has {} chips", ranks_, topology.chips));
    }
    auto specs = make_specs(ranks);
    if (!csv_file_.empty()) write_output_file(csv_file_, "");  // writable before the run
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    system::SystemModel model("system", system.config, std::move(topology),
                              {options.seed, !timing_only_});
    std::vector<int> chips(static_cast<std::size_t>(ranks));
    for (int i = 0; i < ranks; ++i) chips[static_cast<std::size_t>(i)] = i;
    collectives::Communicator comm(model, chips, system.tuning);
    for (auto& spec : specs) {
      spec.base = model.chip(0).memory_base();  // buffers from the start of every chip's memory
      try {
        comm.validate(spec);
      } catch (const std::invalid_argument& e) {
        throw UsageError(
            fmt::format("--algo {}, {} bytes: {}", algo_, collectives::size_bytes(spec), e.what()));
      }
    }
    ProgressBar progress("collective", !options.quiet);
    CollectiveRunner runner("collective", comm, specs, warmup_, iters_, checks(), options.seed,
                            progress);
    core::run_to_completion(options.lock_step);
    const double cpu = cpu_seconds() - cpu_before;
    return report(options, system.config.name, ranks, runner, cpu,
                  model.attached<collectives::Launcher>().failures());
  }

 private:
  bool checks() const { return check_ == 1 && !timing_only_; }

  std::vector<collectives::Spec> make_specs(int ranks) const {
    collectives::Spec base;
    base.op = *collectives::parse_op(op_);
    base.algorithm = *collectives::parse_algorithm(algo_);
    base.type = *core::parse_data_type(dtype_);
    base.reduce = *core::parse_reduce_op(redop_);
    base.in_place = in_place_;
    base.root = root_;
    base.rings = rings_;
    base.pipeline = pipeline_;
    base.reduce_engine = reduce_on_ == "tpc" ? collectives::Spec::ReduceEngine::kTpc
                                             : collectives::Spec::ReduceEngine::kDma;
    if (root_ < 0 || root_ >= ranks) {
      throw UsageError(fmt::format("--root {}: ranks are 0..{}", root_, ranks - 1));
    }
    base.chunk_bytes = parse_size_option("--chunk", chunk_);
    const std::uint64_t element = core::size_of(base.type);
    if (base.chunk_bytes % element != 0) {
      throw UsageError(fmt::format("--chunk {}: must be whole {} elements", chunk_, dtype_));
    }
    std::vector<collectives::Spec> specs;
    for (std::uint64_t bytes : sizes()) {
      collectives::Spec s = base;
      s.count = bytes / element;
      // Like nccl-tests: the larger buffer of a reduce-scatter, all-gather or all-to-all splits
      // evenly.
      if (collectives::splits_evenly(s.op)) s.count -= s.count % static_cast<std::uint64_t>(ranks);
      if (s.count == 0) continue;
      specs.push_back(s);
    }
    if (specs.empty()) throw UsageError("no size holds a whole element per rank");
    return specs;
  }

  std::vector<std::uint64_t> sizes() const {
    std::vector<std::uint64_t> out;
    if (!sizes_.empty()) {
      for (const auto& text : sizes_) out.push_back(parse_size_option("--sizes", text));
      return out;
    }
    const std::uint64_t lo = parse_size_option("--min-bytes", min_bytes_);
    const std::uint64_t hi = parse_size_option("--max-bytes", max_bytes_);
    if (lo > hi) throw UsageError("--min-bytes is larger than --max-bytes");
    if (factor_ < 2) throw UsageError("--factor must be at least 2");
    for (std::uint64_t b = lo; b <= hi; b *= static_cast<std::uint64_t>(factor_)) {
      out.push_back(b);
      if (b > hi / static_cast<std::uint64_t>(factor_)) break;
    }
    return out;
  }

  int report(const GlobalOptions& options, const std::string& system_name, int ranks,
             const CollectiveRunner& runner, double cpu,
             const std::vector<std::string>& failures) const {
    const auto& rows = runner.rows();
    const auto op = *collectives::parse_op(op_);
    const double factor = collectives::bus_factor(op, ranks);
    const std::string redop = collectives::reduces(op) ? redop_ : "none";
    fmt::print("# {} on {} ({} ranks), {}{}{}\n", op_, system_name, ranks,
               in_place_ ? "in place" : "out of place",
               collectives::reduces(op) && reduce_on_ == "tpc" ? ", reductions on TPCs" : "",
               timing_only_ ? ", timing only (nothing checked)"
               : checks()   ? ""
                            : ", not checked");
    fmt::print("{:>12} {:>12} {:>6} {:>6} {:>16} {:>12} {:>12} {:>12} {:>7}\n", "size (B)", "count",
               "type", "redop", "algo", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong");
    std::ostringstream csv;
    csv << "size_bytes,count,type,redop,algo,time_us,algbw_gbps,busbw_gbps,wrong\n";
    nlohmann::json json_rows = nlohmann::json::array();
    bool ok = runner.finished();
    for (const Row& r : rows) {
      const double algbw = static_cast<double>(r.bytes) / r.seconds / 1e9;
      const std::string wrong = checks() ? std::to_string(r.wrong) : "N/A";
      const char* algo = collectives::to_string(r.algorithm);
      fmt::print("{:>12} {:>12} {:>6} {:>6} {:>16} {:>12.2f} {:>12.2f} {:>12.2f} {:>7}{}\n",
                 r.bytes, r.count, dtype_, redop, algo, r.seconds * 1e6, algbw, algbw * factor,
                 wrong, r.ok ? "" : "  FAILED");
      csv << fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{}\n", r.bytes, r.count, dtype_,
                         redop, algo, r.seconds * 1e6, algbw, algbw * factor, wrong);
      json_rows.push_back({{"size_bytes", r.bytes},
                           {"count", r.count},
                           {"type", dtype_},
                           {"redop", redop},
                           {"algo", algo},
                           {"time_us", r.seconds * 1e6},
                           {"algbw_gbps", algbw},
                           {"busbw_gbps", algbw * factor},
                           {"wrong", checks() ? nlohmann::json(r.wrong) : nlohmann::json()},
                           {"ok", r.ok}});
      ok = ok && r.ok && r.wrong == 0;
    }
    if (!runner.finished()) fmt::print("# the run stopped before every size finished\n");
    for (const std::string& f : failures) {
      fmt::print("# failed: {}\n", f);
    }
    const core::EventQueue& queue = core::event_queue();
    fmt::print("# simulated in {:.2f} s CPU: {} callbacks in {} activations, at most {} pending\n",
               cpu, queue.fired(), queue.activations(), queue.peak_pending());
    if (!options.stats_file.empty())
      core::stats_registry().write(options.stats_file, core::now_ps());
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!csv_file_.empty()) write_output_file(csv_file_, csv.str());
    if (!options.json_file.empty()) {
      nlohmann::json j = {{"op", op_},
                          {"system", system_name},
                          {"ranks", ranks},
                          {"algo", algo_},
                          {"in_place", in_place_},
                          {"reduce_on", reduce_on_},
                          {"checked", checks()},
                          {"rows", json_rows},
                          {"cpu_seconds", cpu},
                          {"event_queue",
                           {{"callbacks", queue.fired()},
                            {"activations", queue.activations()},
                            {"peak_pending", queue.peak_pending()}}}};
      write_output_file(options.json_file, j.dump(2) + "\n");
    }
    return ok ? 0 : 1;
  }

  std::string op_ = "all_reduce", algo_ = "auto", dtype_ = "float", redop_ = "sum",
              reduce_on_ = "dma";
  std::string min_bytes_ = "1MiB", max_bytes_ = "64MiB", chunk_ = "1MiB";
  int factor_ = 2;
  std::vector<std::string> sizes_;
  int ranks_ = 0, iters_ = 1, warmup_ = 0, root_ = 0, rings_ = 1, pipeline_ = 0, check_ = 1;
  bool in_place_ = false, timing_only_ = false;
  std::string csv_file_;
};

}  // namespace

std::unique_ptr<Command> add_collective_command(CLI::App& app) {
  return std::make_unique<CollectiveCommand>(app);
}

}  // namespace podsim::sims
