// `podsim collective`: nccl-tests / hccl_demo-style benchmarks of collectives on a modeled
// system: a sweep of sizes (per data type and reduction), each run --warmup times untimed and
// --iters times timed, out of place and in place, one row per size with time, bus bandwidth and
// (unless --timing-only) every result checked bit for bit against the host's reference. The
// options, columns and summary lines follow nccl-tests, so its users' habits and scripts carry
// over.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "collectives/communicator.h"
#include "collectives/launcher.h"
#include "collectives/reference.h"
#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "sims/command.h"
#include "sims/fabric_totals.h"
#include "sims/memory_budget.h"
#include "sims/parallel/mpi_session.h"
#include "sims/parallel/parallel_run.h"
#include "sims/parallel_split.h"
#include "sims/progress.h"
#include "training/cluster.h"

namespace podsim::sims {
namespace {

// nccl-tests' -a: which rank's time a row reports.
enum class Average { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

struct Row {
  collectives::Spec spec;
  std::uint64_t bytes = 0;
  double seconds = 0;  // over the timed iterations, combined over ranks as -a says
  std::uint64_t wrong = 0;
  bool ok = true;
  collectives::Algorithm algorithm = collectives::Algorithm::kRing;
  collectives::Algorithm across = collectives::Algorithm::kRing;  // a hierarchical one's
};

// Each rank's mean time over the timed iterations, combined as nccl-tests' -a does.
double combine_ranks(const std::vector<double>& per_rank, Average average) {
  switch (average) {
    case Average::kRank0:
      return per_rank.front();
    case Average::kMean:
      return std::accumulate(per_rank.begin(), per_rank.end(), 0.0) /
             static_cast<double>(per_rank.size());
    case Average::kMin:
      return *std::min_element(per_rank.begin(), per_rank.end());
    case Average::kMax:
      break;
  }
  return *std::max_element(per_rank.begin(), per_rank.end());
}

// Runs the sweep from inside the simulation, one collective at a time.
class CollectiveRunner : public sc_core::sc_module {
 public:
  struct Options {
    int warmup = 0, iters = 1;
    bool check = true;
    Average average = Average::kMax;
    std::uint64_t seed = 1;
  };

  SC_HAS_PROCESS(CollectiveRunner);
  CollectiveRunner(sc_core::sc_module_name name, collectives::Communicator& comm,
                   std::vector<collectives::Spec> specs, Options options, ProgressBar& progress)
      : sc_module(name),
        comm_(comm),
        specs_(std::move(specs)),
        options_(options),
        progress_(progress) {
    SC_THREAD(run);
  }
  const std::vector<Row>& rows() const { return rows_; }
  std::vector<Row>& rows() { return rows_; }
  bool finished() const { return rows_.size() == specs_.size(); }
  // When the last collective's end was known everywhere (the same in every process of a
  // parallel run): what statistics are written up to.
  core::TimePs ended_ps() const { return ended_ps_; }

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
    ended_ps_ = core::now_ps();
  }

  Row run_size(const collectives::Spec& spec) {
    Row row;
    row.spec = spec;
    row.bytes = collectives::size_bytes(spec);
    std::vector<double> per_rank(static_cast<std::size_t>(comm_.size()), 0.0);
    for (int i = 0; i < options_.warmup + options_.iters; ++i) {
      std::optional<collectives::InputPattern> inputs;
      const std::uint64_t seed = options_.seed + static_cast<std::uint64_t>(i);
      if (options_.check) inputs = collectives::load_inputs(comm_, spec, seed);
      auto handle = comm_.start(spec);
      handle->wait_done();
      row.ok = row.ok && handle->ok;
      if (i >= options_.warmup) {
        for (std::size_t r = 0; r < per_rank.size(); ++r) {
          per_rank[r] += static_cast<double>(handle->rank_end_ps[r] - handle->start_ps) * 1e-12 /
                         options_.iters;
        }
      }
      if (inputs) row.wrong += collectives::check_outputs(comm_, spec, handle->algorithm, *inputs);
      row.algorithm = handle->algorithm;
      row.across = handle->spec.across;
    }
    row.seconds = combine_ranks(per_rank, options_.average);
    return row;
  }

  collectives::Communicator& comm_;
  std::vector<collectives::Spec> specs_;
  Options options_;
  ProgressBar& progress_;
  std::vector<Row> rows_;
  core::TimePs ended_ps_ = 0;
};

constexpr const char* kPlaceNames[] = {"out-of-place", "in-place"};

class CollectiveCommand : public Command {
 public:
  explicit CollectiveCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "collective", "nccl-tests-style collective benchmark: a sweep of sizes on the system");
    add_collective_options();
    add_nccl_tests_options();
    subcommand->add_option("--csv", csv_file_, "also write the rows as CSV");
  }

  bool simulates() const override { return true; }
  bool runs_under_mpirun() const override { return true; }

  int run(const GlobalOptions& options) override {
    auto overrides = options.overrides;
    const auto system = collectives::load_system_file(options.system, overrides);
    if (iters_ < 1) throw UsageError("--iters (-n) must be at least 1");
    if (warmup_ < 0) throw UsageError("--warmup (-w) must not be negative");
    auto topology = system::build_topology(system.config, &system.tree);
    const int ranks = ranks_wanted() > 0 ? ranks_wanted() : topology.chips;
    const std::string given =
        ranks_ > 0 ? fmt::format("--ranks {}", ranks_)
                   : fmt::format("-t {} x -g {}", std::max(nthreads_, 1), std::max(ngpus_, 1));
    if (ranks < 1 || ranks > topology.chips) {
      throw UsageError(fmt::format("{}: the system has {} chips", given, topology.chips));
    }
    pick_chip_model(system.config);
    const std::vector<int> chips = rank_chips(system.config, ranks, given);
    auto specs = make_specs(ranks);
    if (!csv_file_.empty()) write_output_file(csv_file_, "");  // writable before the run
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    std::optional<parallel::Partition> partition;
    if (options.mpi) {
      partition = split_for_mpi(options, topology);
      // The hosts' notices cross between processes too (docs/parallel.md).
      partition->lookahead_ps = std::min<core::TimePs>(
          partition->lookahead_ps, static_cast<core::TimePs>(system.tuning.notice_latency.ps));
      if (partition->lookahead_ps < 2) {
        throw UsageError(fmt::format(
            "collectives.notice_latency {}: a run split among processes needs at least 2ps",
            core::to_string(system.tuning.notice_latency)));
      }
    }
    const double cpu_before = cpu_seconds();
    // Each process reads its own machine's free memory: the verdict must be common.
    agree_on(options, [&] {
      require_system_memory(topology.chips,
                            partition ? parallel::MpiSession::processes_on_this_machine() : 1,
                            chips_ == system::ChipModel::kCoarse);
    });
    auto model_options = options.model_options(!timing_only_);
    model_options.chips = chips_;
    system::SystemModel model("system", system.config, std::move(topology), model_options);
    std::optional<parallel::ParallelRun> parallel;
    if (partition) {
      parallel.emplace(*options.mpi, model, std::move(*partition));
      if (options.mpi->rank() == 0) {
        fmt::print("partition  {}\n", parallel->partition().describe());
      }
    }
    collectives::Communicator comm(model, chips, system.tuning);
    validate(comm, specs);
    ProgressBar progress("collective", !options.quiet && !parallel);
    CollectiveRunner runner(
        "collective", comm, specs,
        {warmup_, iters_, checks(), static_cast<Average>(average_), options.seed}, progress);
    run_simulation(options, parallel ? &*parallel : nullptr);
    const double cpu = cpu_seconds() - cpu_before;
    std::vector<std::string> failures;
    if (chips_ == system::ChipModel::kDetailed) {
      failures = model.attached<collectives::Launcher>().failures();
    }
    if (parallel) {
      gather_checks(*options.mpi, runner.rows());
      failures = gather_failures(*options.mpi, failures);
      if (!end_split_run(options, *parallel)) return 0;
    }
    return report(options, system.config.name, model, chips, runner, cpu, failures);
  }

 private:
  void add_collective_options() {
    auto* c = subcommand;
    c->add_option("--op", op_,
                  "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all or "
                  "send_recv")
        ->capture_default_str()
        ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce",
                               "all_to_all", "alltoall", "send_recv", "sendrecv"}));
    c->add_option("--algo", algo_,
                  "auto, ring, mesh (direct), halving_doubling, tree (double binary tree) or "
                  "hierarchical (all_reduce over whole boxes)")
        ->capture_default_str()
        ->check(CLI::IsMember({"ring", "mesh", "direct", "hierarchical", "halving_doubling", "hd",
                               "tree", "double_binary_tree", "auto"}));
    c->add_option(
         "--rings", rings_,
         "rings of a ring all_reduce, reduce_scatter or all_gather (every second backwards)")
        ->capture_default_str();
    c->add_option("--pipeline", pipeline_,
                  "pieces of a hierarchical all_reduce whose phases overlap (0: one per 64 MiB, "
                  "1 to 4)")
        ->capture_default_str();
    c->add_option("--across", across_,
                  "a hierarchical all_reduce's phase across the boxes: ring, halving_doubling, or "
                  "auto (the system's tuning table)")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "ring", "halving_doubling", "hd"}));
    c->add_option("--reduce-on", reduce_on_,
                  "engines that reduce: dma (the DMA engines) or tpc (TPC kernels)")
        ->capture_default_str()
        ->check(CLI::IsMember({"dma", "tpc"}));
    c->add_option("--sizes", sizes_, "explicit sizes instead of the sweep (1MiB,...)")
        ->delimiter(',');
    c->add_option("--ranks", ranks_, "ranks on chips 0..N-1 (default: every chip)");
    c->add_option("--chunk", chunk_, "pipelining unit of the algorithm")->capture_default_str();
    c->add_option("--place", place_,
                  "out (output in a buffer of its own), in (output over input, NCCL's in-place) "
                  "or both, as nccl-tests runs them")
        ->capture_default_str()
        ->check(CLI::IsMember({"out", "in", "both"}));
    c->add_flag("--in-place", in_place_, "in place only (--place in)");
    static const std::map<std::string, system::ChipModel> chip_models{
        {"detailed", system::ChipModel::kDetailed}, {"coarse", system::ChipModel::kCoarse}};
    chips_option_ =
        c->add_option(
             "--chips", chips_,
             "detailed (command buffers on the chips' queue managers, launched through the "
             "driver) or coarse (programs posted straight to the NICs, engines timed by "
             "rate: for scale studies; docs/collectives.md)")
            ->transform(CLI::CheckedTransformer(chip_models, CLI::ignore_case))
            ->type_name("detailed|coarse");
    c->add_flag("--timing-only", timing_only_,
                "move no data and check nothing (large sweeps; same times)");
  }

  // nccl-tests' short and long options, beside the long ones above.
  void add_nccl_tests_options() {
    auto* c = subcommand;
    c->add_option("--min-bytes,--minbytes,-b", min_bytes_, "smallest size (bytes, 4K, 1M, 1MiB)")
        ->capture_default_str();
    c->add_option("--max-bytes,--maxbytes,-e", max_bytes_, "largest size")->capture_default_str();
    auto* factor = c->add_option("--factor,--stepfactor,-f", factor_, "size multiplier per row")
                       ->capture_default_str();
    c->add_option("--step-bytes,--stepbytes,-i", step_bytes_, "size increment per row instead")
        ->excludes(factor);
    c->add_option("--iters,-n", iters_, "timed runs per size")->capture_default_str();
    c->add_option("--warmup,--warmup_iters,-w", warmup_, "untimed runs per size first")
        ->capture_default_str();
    c->add_option("--check,-c", check_, "check every result (1) or not (0)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1));
    c->add_option("--dtype,--datatype,-d", dtype_,
                  "float, bf16 (bfloat16), half or int32, or all of them")
        ->capture_default_str();
    c->add_option("--redop,-o", redop_, "sum, min or max, or all of them")->capture_default_str();
    c->add_option("--root,-r", root_, "root rank of broadcast and reduce")->capture_default_str();
    c->add_option("--average,-a", average_,
                  "the time a row reports: 0 rank 0's, 1 the mean over ranks, 2 the least, "
                  "3 the most (the collective's end)")
        ->capture_default_str()
        ->check(CLI::Range(0, 3));
    auto* gpus = c->add_option("--ngpus,-g", ngpus_, "ranks per thread (ranks = -t x -g)");
    auto* threads = c->add_option("--nthreads,-t", nthreads_, "threads (ranks = -t x -g)");
    auto* ranks = c->get_option("--ranks");
    gpus->excludes(ranks);
    threads->excludes(ranks);
  }

  bool checks() const { return check_ == 1 && !timing_only_; }

  int ranks_wanted() const {
    if (ngpus_ > 0 || nthreads_ > 0) return std::max(ngpus_, 1) * std::max(nthreads_, 1);
    return ranks_;
  }

  std::vector<bool> places() const {
    if (in_place_ && place_ != "both" && place_ != "in") {
      throw UsageError(fmt::format("--in-place and --place {} contradict", place_));
    }
    if (in_place_ || place_ == "in") return {true};
    if (place_ == "out") return {false};
    return {false, true};
  }

  std::vector<core::DataType> types() const {
    if (dtype_ == "all") {
      return {core::DataType::kFp32, core::DataType::kBf16, core::DataType::kFp16,
              core::DataType::kInt32};
    }
    if (const auto type = core::parse_data_type(dtype_)) return {*type};
    throw UsageError(
        fmt::format("--dtype {}: use float, bf16 (bfloat16), half or int32, or all", dtype_));
  }

  std::vector<core::ReduceOp> reductions(collectives::Op op) const {
    if (!collectives::reduces(op)) return {core::ReduceOp::kSum};
    if (redop_ == "all") return {core::ReduceOp::kSum, core::ReduceOp::kMin, core::ReduceOp::kMax};
    if (const auto reduce = core::parse_reduce_op(redop_)) return {*reduce};
    throw UsageError(
        fmt::format("--redop {}: use sum, min or max, or all (nccl-tests' prod and "
                    "avg are not modeled)",
                    redop_));
  }

  collectives::Spec base_spec(int ranks) const {
    collectives::Spec base;
    base.op = *collectives::parse_op(op_);
    base.algorithm = *collectives::parse_algorithm(algo_);
    base.root = root_;
    base.rings = rings_;
    base.pipeline = pipeline_;
    base.across = *collectives::parse_algorithm(across_);
    base.reduce_engine = reduce_on_ == "tpc" ? collectives::Spec::ReduceEngine::kTpc
                                             : collectives::Spec::ReduceEngine::kDma;
    if (root_ < 0 || root_ >= ranks) {
      throw UsageError(fmt::format("--root {}: ranks are 0..{}", root_, ranks - 1));
    }
    base.chunk_bytes = parse_size_option("--chunk", chunk_);
    return base;
  }

  // Every (type, reduction, size, place) point, in nccl-tests' order.
  std::vector<collectives::Spec> make_specs(int ranks) const {
    const collectives::Spec base = base_spec(ranks);
    std::vector<collectives::Spec> specs;
    for (core::DataType type : types()) {
      const std::uint64_t element = core::size_of(type);
      if (base.chunk_bytes % element != 0) {
        throw UsageError(
            fmt::format("--chunk {}: must be whole {} elements", chunk_, core::to_string(type)));
      }
      for (core::ReduceOp reduce : reductions(base.op)) {
        for (std::uint64_t bytes : sizes()) {
          for (bool in_place : places()) {
            collectives::Spec s = base;
            s.type = type;
            s.reduce = reduce;
            s.in_place = in_place;
            s.count = bytes / element;
            // Like nccl-tests: the larger buffer of a reduce-scatter, all-gather or all-to-all
            // splits evenly.
            if (collectives::splits_evenly(s.op))
              s.count -= s.count % static_cast<std::uint64_t>(ranks);
            if (s.count > 0) specs.push_back(s);
          }
        }
      }
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
    if (lo > hi) throw UsageError("--min-bytes (-b) is larger than --max-bytes (-e)");
    if (!step_bytes_.empty()) {
      const std::uint64_t step = parse_size_option("--step-bytes", step_bytes_);
      if ((hi - lo) / step >= kMostSizes) {
        throw UsageError(fmt::format("--step-bytes {}: more than {} sizes from -b to -e",
                                     step_bytes_, kMostSizes));
      }
      for (std::uint64_t b = lo; b <= hi; b += step) out.push_back(b);
      return out;
    }
    if (factor_ < 2) throw UsageError("--factor (-f) must be at least 2");
    for (std::uint64_t b = lo; b <= hi; b *= static_cast<std::uint64_t>(factor_)) {
      out.push_back(b);
      if (b > hi / static_cast<std::uint64_t>(factor_)) break;
    }
    return out;
  }

  // An IPU's collectives run on its links by the engines' rate model (GCL has no driver queues
  // to detail), as podsim train runs them.
  void pick_chip_model(const system::SystemConfig& config) {
    if (config.compute != system::ComputeModel::kIpuRoofline) return;
    if (chips_option_->count() > 0 && chips_ == system::ChipModel::kDetailed) {
      throw UsageError(fmt::format(
          "--chips detailed: {}'s IPUs run collectives as coarse chips only (no driver or queue "
          "managers to detail; docs/ipulink.md)",
          config.name));
    }
    chips_ = system::ChipModel::kCoarse;
  }

  // Ranks on chips 0..N-1, or on IPU-Link ladders in the ladder's ring order (the only order
  // whose neighbours are all linked), as GCL places replicas.
  static std::vector<int> rank_chips(const system::SystemConfig& config, int ranks,
                                     const std::string& given) {
    if (config.box.wiring == system::BoxWiring::kLadder) {
      try {
        return training::place_rings(ranks, config.box.ladder, {config.boxes, config.box.chips})
            .chips;
      } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("{}: {}", given, e.what()));
      }
    }
    std::vector<int> chips(static_cast<std::size_t>(ranks));
    std::iota(chips.begin(), chips.end(), 0);
    return chips;
  }

  // Every point must fit the chips, and a functional run's buffers the host's memory: refused
  // before anything runs rather than killed by the system part way.
  void validate(collectives::Communicator& comm, std::vector<collectives::Spec>& specs) {
    std::uint64_t per_rank = 0, check = 0;
    for (auto& spec : specs) {
      spec.base = comm.model().chip(0).memory_base();  // buffers from the start of chip memory
      try {
        comm.validate(spec);
      } catch (const std::invalid_argument& e) {
        throw UsageError(
            fmt::format("--algo {}, {} bytes: {}", algo_, collectives::size_bytes(spec), e.what()));
      }
      per_rank = std::max(per_rank, comm.footprint(spec));
      if (checks()) check = std::max(check, collectives::check_bytes(spec, comm.size()));
    }
    if (timing_only_) return;
    require_memory(
        per_rank * static_cast<std::uint64_t>(comm.size()) + check,
        fmt::format("this functional run ({} ranks, about {} of buffers and scratch each)",
                    comm.size(), approximate_size(per_rank)),
        "add --timing-only (the same times, no data moved), or use smaller sizes (-e) "
        "or fewer ranks");
  }

  // Each process checked the ranks on its own chips: the wrong elements, summed everywhere.
  static void gather_checks(const parallel::MpiSession& mpi, std::vector<Row>& rows) {
    std::vector<std::uint64_t> wrong;
    for (const Row& r : rows) wrong.push_back(r.wrong);
    mpi.sum(wrong);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].wrong = wrong[i];
  }

  // Why ranks failed, from every process (each launcher knows its own ranks'), at rank 0.
  static std::vector<std::string> gather_failures(const parallel::MpiSession& mpi,
                                                  const std::vector<std::string>& mine) {
    std::string joined;
    for (const std::string& f : mine) joined += f + '\n';
    std::vector<std::string> all;
    for (const std::string& part : mpi.gather(joined)) {
      std::istringstream lines(part);
      for (std::string line; std::getline(lines, line);) all.push_back(line);
    }
    return all;
  }

  // One line of the table: a size's out-of-place and in-place results side by side.
  struct Line {
    const Row* result[2] = {nullptr, nullptr};  // out of place, in place
    const Row& any() const { return result[0] ? *result[0] : *result[1]; }
  };

  static std::vector<Line> lines(const std::vector<Row>& rows) {
    std::vector<Line> out;
    for (const Row& r : rows) {
      const bool same = !out.empty() && out.back().any().bytes == r.bytes &&
                        out.back().any().spec.type == r.spec.type &&
                        out.back().any().spec.reduce == r.spec.reduce &&
                        !out.back().result[r.spec.in_place ? 1 : 0];
      if (!same) out.emplace_back();
      out.back().result[r.spec.in_place ? 1 : 0] = &r;
    }
    return out;
  }

  std::string redop_name(const Row& r) const {
    return collectives::reduces(r.spec.op) ? core::to_string(r.spec.reduce) : "none";
  }
  int root_of(const Row& r) const {
    const bool rooted =
        r.spec.op == collectives::Op::kBroadcast || r.spec.op == collectives::Op::kReduce;
    return rooted ? r.spec.root : -1;
  }

  void print_header(const std::string& system_name, system::SystemModel& model,
                    const std::vector<int>& chips) const {
    const int ranks = static_cast<int>(chips.size());
    static const char* average_names[] = {"rank 0", "mean over ranks", "least over ranks",
                                          "most over ranks (the collective's end)"};
    fmt::print("# {} on {} ({} ranks){}{}{}\n", op_, system_name, ranks,
               reduce_on_ == "tpc" ? ", reductions on TPCs" : "",
               model.chip_model() == system::ChipModel::kCoarse ? ", coarse chips" : "",
               timing_only_ ? ", timing only (nothing checked)"
               : checks()   ? ""
                            : ", not checked");
    fmt::print("# warmup iters: {} iters: {} validation: {} average: {}\n#\n# Using devices\n",
               warmup_, iters_, checks() ? 1 : 0, average_names[average_]);
    for (int r = 0; r < ranks; ++r) {
      fmt::print("#  Rank {:>3} {}\n", r, model.chip(chips[static_cast<std::size_t>(r)]).name());
    }
    fmt::print("#\n#{:>69}{:>40}\n", "out-of-place", "in-place");
    fmt::print("#{:>11} {:>13} {:>9} {:>7} {:>7}", "size", "count", "type", "redop", "root");
    for (int p = 0; p < 2; ++p)
      fmt::print(" {:>9} {:>8} {:>8} {:>7}", "time", "algbw", "busbw", "#wrong");
    fmt::print("  algo\n#{:>11} {:>13} {:>9} {:>7} {:>7}", "(B)", "(elements)", "", "", "");
    for (int p = 0; p < 2; ++p)
      fmt::print(" {:>9} {:>8} {:>8} {:>7}", "(us)", "(GB/s)", "(GB/s)", "");
    fmt::print("\n");
  }

  int report(const GlobalOptions& options, const std::string& system_name,
             system::SystemModel& model, const std::vector<int>& chips,
             const CollectiveRunner& runner, double cpu,
             const std::vector<std::string>& failures) const {
    const int ranks = static_cast<int>(chips.size());
    const double factor = collectives::bus_factor(*collectives::parse_op(op_), ranks);
    print_header(system_name, model, chips);
    std::ostringstream csv;
    csv << "size_bytes,count,type,redop,root,place,algo,time_us,algbw_gbps,busbw_gbps,wrong\n";
    nlohmann::json json_rows = nlohmann::json::array();
    bool ok = runner.finished();
    double busbw_sum = 0;
    std::uint64_t wrong = 0;
    for (const Line& line : lines(runner.rows())) {
      const Row& first = line.any();
      fmt::print("{:>12} {:>13} {:>9} {:>7} {:>7}", first.bytes, first.spec.count,
                 core::to_string(first.spec.type), redop_name(first), root_of(first));
      std::string algos;
      for (const Row* r : line.result) {
        if (!r) {
          fmt::print(" {:>9} {:>8} {:>8} {:>7}", "N/A", "N/A", "N/A", "N/A");
          continue;
        }
        const double algbw = static_cast<double>(r->bytes) / r->seconds / 1e9;
        const std::string wrong_text = checks() ? std::to_string(r->wrong) : "N/A";
        const char* algo = collectives::to_string(r->algorithm);
        const char* place = kPlaceNames[r->spec.in_place ? 1 : 0];
        fmt::print(" {:>9.2f} {:>8.2f} {:>8.2f} {:>7}", r->seconds * 1e6, algbw, algbw * factor,
                   wrong_text);
        if (algos.find(algo) == std::string::npos)
          algos += (algos.empty() ? "" : "/") + std::string(algo);
        csv << fmt::format("{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{}\n", r->bytes,
                           r->spec.count, core::to_string(r->spec.type), redop_name(*r),
                           root_of(*r), place, algo, r->seconds * 1e6, algbw, algbw * factor,
                           wrong_text);
        json_rows.push_back({{"size_bytes", r->bytes},
                             {"count", r->spec.count},
                             {"type", core::to_string(r->spec.type)},
                             {"redop", redop_name(*r)},
                             {"root", root_of(*r)},
                             {"place", place},
                             {"algo", algo},
                             {"across", r->algorithm == collectives::Algorithm::kHierarchical
                                            ? nlohmann::json(collectives::to_string(r->across))
                                            : nlohmann::json()},
                             {"time_us", r->seconds * 1e6},
                             {"algbw_gbps", algbw},
                             {"busbw_gbps", algbw * factor},
                             {"wrong", checks() ? nlohmann::json(r->wrong) : nlohmann::json()},
                             {"ok", r->ok}});
        busbw_sum += algbw * factor;
        wrong += r->wrong;
        ok = ok && r->ok && r->wrong == 0;
      }
      const bool failed =
          (line.result[0] && !line.result[0]->ok) || (line.result[1] && !line.result[1]->ok);
      fmt::print("  {}{}\n", algos, failed ? "  FAILED" : "");
    }
    const double avg_busbw =
        json_rows.empty() ? 0.0 : busbw_sum / static_cast<double>(json_rows.size());
    if (!runner.finished()) fmt::print("# the run stopped before every size finished\n");
    for (const std::string& f : failures) fmt::print("# failed: {}\n", f);
    if (checks()) {
      fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
    }
    fmt::print("# Avg bus bandwidth    : {:.4f} \n#\n", avg_busbw);
    const core::EventQueue& queue = core::event_queue();
    fmt::print("# simulated in {:.2f} s CPU: {} callbacks in {} activations, at most {} pending\n",
               cpu, queue.fired(), queue.activations(), queue.peak_pending());
    if (!options.stats_file.empty())
      core::stats_registry().write(options.stats_file,
                                   runner.finished() ? runner.ended_ps() : core::now_ps());
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!csv_file_.empty()) write_output_file(csv_file_, csv.str());
    if (!options.json_file.empty()) {
      nlohmann::json j = {
          {"op", op_},
          {"system", system_name},
          {"ranks", ranks},
          {"algo", algo_},
          {"across", collectives::to_string(*collectives::parse_algorithm(across_))},
          {"place", in_place_ ? "in" : place_},
          {"reduce_on", reduce_on_},
          {"checked", checks()},
          {"average", average_},
          {"iters", iters_},
          {"warmup", warmup_},
          {"rows", json_rows},
          {"avg_busbw_gbps", avg_busbw},
          {"out_of_bounds", checks() ? nlohmann::json(wrong) : nlohmann::json()},
          {"network", model.flow_network() ? "flow" : "packet"},
          {"chips", model.chip_model() == system::ChipModel::kCoarse ? "coarse" : "detailed"},
          {"fabric", fabric_totals(model).to_json()},
          {"cpu_seconds", cpu},
          {"event_queue",
           {{"callbacks", queue.fired()},
            {"activations", queue.activations()},
            {"peak_pending", queue.peak_pending()}}}};
      write_output_file(options.json_file, j.dump(2) + "\n");
    }
    return ok ? 0 : 1;
  }

  static constexpr std::size_t kMostSizes = 10000;

  std::string op_ = "all_reduce", algo_ = "auto", across_ = "auto", dtype_ = "float",
              redop_ = "sum", reduce_on_ = "dma", place_ = "both";
  std::string min_bytes_ = "1MiB", max_bytes_ = "64MiB", chunk_ = "1MiB", step_bytes_;
  int factor_ = 2;
  std::vector<std::string> sizes_;
  int ranks_ = 0, ngpus_ = 0, nthreads_ = 0, iters_ = 1, warmup_ = 0, root_ = 0, rings_ = 1,
      pipeline_ = 0, check_ = 1, average_ = 3;
  bool in_place_ = false, timing_only_ = false;
  system::ChipModel chips_ = system::ChipModel::kDetailed;
  CLI::Option* chips_option_ = nullptr;
  std::string csv_file_;
};

}  // namespace

std::unique_ptr<Command> add_collective_command(CLI::App& app) {
  return std::make_unique<CollectiveCommand>(app);
}

}  // namespace podsim::sims
