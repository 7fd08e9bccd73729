// `podsim net`: perftest-style traffic between chips or hosts (ib_write_bw / ib_write_lat
// patterns, incast, permutation, all-to-all) with per-flow and aggregate goodput, completion
// times, latency percentiles, and the fabric's drops, pauses, ECN marks, CNPs and retransmits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/stats.h"
#include "core/trace.h"
#include "sims/command.h"
#include "sims/fabric_totals.h"
#include "sims/memory_budget.h"
#include "sims/net_workload.h"
#include "sims/parallel/mpi_session.h"
#include "sims/parallel/parallel_run.h"
#include "sims/parallel_split.h"
#include "sims/progress.h"

namespace podsim::sims {
namespace {

double goodput_gbps(const FlowResult& f) {
  const double seconds = static_cast<double>(f.end_ps - f.start_ps) * 1e-12;
  return seconds > 0 ? static_cast<double>(f.bytes) * 8 / seconds / 1e9 : 0;
}

core::TimePs percentile(std::vector<core::TimePs> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank =
      static_cast<std::size_t>(p / 100 * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(rank, values.size() - 1)];
}

double us(core::TimePs ps) { return static_cast<double>(ps) * 1e-6; }

class NetCommand : public Command {
 public:
  explicit NetCommand(CLI::App& app) {
    subcommand = app.add_subcommand(
        "net", "perftest-style traffic: pair (ib_write_bw/lat), incast, permutation, all-to-all");
    subcommand->add_option("--pattern", pattern_, "pair, incast, permutation or all-to-all")
        ->capture_default_str()
        ->check(CLI::IsMember({"pair", "incast", "permutation", "all-to-all"}));
    subcommand
        ->add_option("--bytes", bytes_text_,
                     "bytes each flow writes (or each message, with --iters)")
        ->capture_default_str();
    subcommand->add_option("--mtu", mtu_, "RoCE path MTU (default: the chip's)");
    subcommand->add_option("--qps", plan_.qps, "queue pairs per flow")->capture_default_str();
    subcommand->add_option("--from", plan_.from, "pair: sending chip")->capture_default_str();
    subcommand->add_option("--to", plan_.to, "pair: receiving chip")->capture_default_str();
    subcommand->add_option("--senders", plan_.senders, "incast: chips 1..N send to chip 0")
        ->capture_default_str();
    subcommand->add_option("--rail", plan_.rail, "scale-out port used between boxes")
        ->capture_default_str();
    subcommand
        ->add_option("--iters", plan_.iters,
                     "pair: sequential messages timed one by one (ib_write_lat)")
        ->capture_default_str();
    subcommand->add_flag("--timing-only", timing_only_, "move no payload bytes (large studies)");
  }

  bool simulates() const override { return true; }

  int run(const GlobalOptions& options) override {
    auto overrides = options.overrides;
    if (mtu_ > 0) overrides.push_back(fmt::format("chip.nic.roce.mtu={}", mtu_));
    const auto system = collectives::load_system_file(options.system, overrides);
    plan_.pattern = parse_pattern();
    plan_.bytes = parse_size_option("--bytes", bytes_text_);
    plan_.seed = options.seed;
    if (plan_.qps < 1) throw UsageError("--qps must be at least 1");
    if (plan_.iters < 0) throw UsageError("--iters must not be negative");
    auto topology = system::build_topology(system.config, &system.tree);
    std::vector<FlowResult> flows;
    try {
      flows = plan_flows(plan_, topology, system.config);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    std::optional<parallel::Partition> partition;
    if (options.mpi) partition = split_for_mpi(options, topology);
    if (!options.trace_file.empty()) core::trace_writer().open(options.trace_file);
    const double cpu_before = cpu_seconds();
    // Each process reads its own machine's free memory: the verdict must be common.
    agree_on(options, [&] {
      require_system_memory(topology.chips,
                            partition ? parallel::MpiSession::processes_on_this_machine() : 1);
    });
    system::SystemModel model("system", system.config, std::move(topology),
                              options.model_options(!timing_only_));
    std::optional<parallel::ParallelRun> parallel;
    std::function<bool(int)> local;
    if (partition) {
      parallel.emplace(*options.mpi, model, std::move(*partition));
      local = [&parallel](int chip) { return parallel->owns_chip(chip); };
      fmt::print("partition  {}\n", parallel->partition().describe());
    }
    ProgressBar progress("net", !options.quiet && !parallel);
    NetWorkload workload(
        "net", model, plan_, std::move(flows), [&progress](double done) { progress.update(done); },
        local);
    const double cpu_elaborated = cpu_seconds();
    run_simulation(options, parallel ? &*parallel : nullptr);
    workload.check_destinations();
    const double cpu_after = cpu_seconds();
    if (parallel) {
      gather_results(*options.mpi, workload);
      if (!end_split_run(options, *parallel)) return 0;
    }
    return report(options, model, workload, cpu_elaborated - cpu_before,
                  cpu_after - cpu_elaborated);
  }

  bool runs_under_mpirun() const override { return true; }

 private:
  NetPattern parse_pattern() const {
    if (pattern_ == "pair") return NetPattern::kPair;
    if (pattern_ == "incast") return NetPattern::kIncast;
    if (pattern_ == "permutation") return NetPattern::kPermutation;
    return NetPattern::kAllToAll;
  }

  // Each flow's times and completion from the process of its source, its check from that of its
  // destination, and a pair's latencies from the sender's: all of them at every process.
  static void gather_results(const parallel::MpiSession& mpi, NetWorkload& w) {
    auto& flows = w.flows();
    const std::size_t n = flows.size();
    std::vector<std::uint64_t> latest(2 * n), sums(2 * n);
    for (std::size_t f = 0; f < n; ++f) {
      const bool sends = w.local(flows[f].src_chip);
      latest[f] = sends ? flows[f].start_ps : 0;
      latest[n + f] = sends ? flows[f].end_ps : 0;
      sums[f] = sends && !flows[f].ok;
      sums[n + f] = w.local(flows[f].dst_chip) ? flows[f].wrong_bytes : 0;
    }
    mpi.max(latest);
    mpi.sum(sums);
    std::vector<std::uint64_t> unfinished{w.finished() ? 0u : 1u};
    mpi.sum(unfinished);
    if (unfinished[0] > 0) w.mark_unfinished();
    for (std::size_t f = 0; f < n; ++f) {
      flows[f].start_ps = latest[f];
      flows[f].end_ps = latest[n + f];
      flows[f].ok = sums[f] == 0;
      flows[f].wrong_bytes = sums[n + f];
    }
    auto& latencies = w.latencies();
    std::vector<std::uint64_t> counts{latencies.size()};
    mpi.max(counts);
    latencies.resize(counts[0]);
    std::vector<std::uint64_t> values(latencies.begin(), latencies.end());
    mpi.max(values);
    latencies.assign(values.begin(), values.end());
  }

  int report(const GlobalOptions& options, system::SystemModel& model, const NetWorkload& w,
             double elaboration_cpu, double run_cpu) const {
    const auto& flows = w.flows();
    const auto fabric = fabric_totals(model);
    core::TimePs first = ~core::TimePs{0}, last = 0;
    std::uint64_t bytes = 0, wrong = 0;
    std::vector<core::TimePs> completion;
    bool ok = w.finished();
    for (const auto& f : flows) {
      first = std::min(first, f.start_ps);
      last = std::max(last, f.end_ps);
      bytes += f.bytes;
      wrong += f.wrong_bytes;
      completion.push_back(f.end_ps - f.start_ps);
      ok = ok && f.ok && f.wrong_bytes == 0;
    }
    const double aggregate =
        static_cast<double>(bytes) * 8 / (static_cast<double>(last - first) * 1e-12) / 1e9;
    const auto& latencies = w.latencies().empty() ? completion : w.latencies();
    print_table(flows);
    fmt::print("aggregate  {} flows, {} in {:.3f} us: {:.2f} Gb/s\n", flows.size(),
               core::to_string(core::ByteSize{bytes}), us(last - first), aggregate);
    fmt::print("{}  p50 {:.3f} us, p99 {:.3f} us, max {:.3f} us\n",
               w.latencies().empty() ? "completion" : "latency   ", us(percentile(latencies, 50)),
               us(percentile(latencies, 99)), us(percentile(latencies, 100)));
    fmt::print(
        "fabric     drops {}, pause frames {}, ECN marks {}, CNPs {}, retransmitted {}, "
        "timeouts {}, lost on links {}\n",
        fabric.drops, fabric.pauses_sent, fabric.ecn_marks, fabric.cnps, fabric.retransmitted,
        fabric.timeouts, fabric.lost_on_links);
    if (fabric.uplink_mean_bytes > 0) {
      fmt::print("uplinks    switch-to-switch load per direction: max {:.2f}x the mean\n",
                 fabric.uplink_max_bytes / fabric.uplink_mean_bytes);
    }
    fmt::print("data       {}\n", !model.functional() ? std::string("not checked (timing only)")
                                  : wrong == 0        ? std::string("ok, every byte matches")
                                                      : fmt::format("{} bytes WRONG", wrong));
    if (auto* flows = model.flow_network()) {
      fmt::print("simulator  {} flows (flow-level network) in {:.2f} s CPU, elaboration {:.2f} s\n",
                 flows->flows_started(), run_cpu, elaboration_cpu);
    } else {
      fmt::print("simulator  {} packet-hops in {:.2f} s CPU ({:.2f} M/s), elaboration {:.2f} s\n",
                 fabric.packet_hops, run_cpu,
                 run_cpu > 0 ? fabric.packet_hops / run_cpu / 1e6 : 0.0, elaboration_cpu);
    }
    // Up to the last completion: the retransmission timers that expire idle long after (a QP's
    // timeout is tens of milliseconds) would dilute every average.
    if (!options.stats_file.empty()) core::stats_registry().write(options.stats_file, last);
    if (!options.trace_file.empty()) core::trace_writer().close();
    if (!options.json_file.empty()) {
      write_output_file(
          options.json_file,
          to_json(flows, w, fabric, aggregate, first, last, run_cpu, elaboration_cpu).dump(2) +
              "\n");
    }
    return ok ? 0 : 1;
  }

  static void print_table(const std::vector<FlowResult>& flows) {
    constexpr std::size_t kShown = 16;
    fmt::print("{:>6} {:>6} {:>6} {:>12} {:>12} {:>14}\n", "flow", "src", "dst", "bytes",
               "time (us)", "goodput (Gb/s)");
    for (std::size_t i = 0; i < std::min(kShown, flows.size()); ++i) {
      const auto& f = flows[i];
      fmt::print("{:>6} {:>6} {:>6} {:>12} {:>12.3f} {:>14.2f}{}\n", i, f.src_chip, f.dst_chip,
                 f.bytes, us(f.end_ps - f.start_ps), goodput_gbps(f), f.ok ? "" : "  FAILED");
    }
    if (flows.size() > kShown)
      fmt::print("{:>6} (and {} more; --json has all)\n", "...", flows.size() - kShown);
  }

  static nlohmann::json to_json(const std::vector<FlowResult>& flows, const NetWorkload& w,
                                const FabricTotals& t, double aggregate, core::TimePs first,
                                core::TimePs last, double run_cpu, double elaboration_cpu) {
    nlohmann::json j;
    for (const auto& f : flows) {
      j["flows"].push_back({{"src", f.src_chip},
                            {"dst", f.dst_chip},
                            {"src_port", f.src_port},
                            {"dst_port", f.dst_port},
                            {"bytes", f.bytes},
                            {"start_ps", f.start_ps},
                            {"end_ps", f.end_ps},
                            {"goodput_gbps", goodput_gbps(f)},
                            {"ok", f.ok},
                            {"wrong_bytes", f.wrong_bytes}});
    }
    j["latencies_ps"] = w.latencies();
    j["aggregate_goodput_gbps"] = aggregate;
    j["duration_ps"] = last - first;
    j["fabric"] = t.to_json();
    j["simulator"] = {{"run_cpu_seconds", run_cpu},
                      {"elaboration_cpu_seconds", elaboration_cpu},
                      {"event_queue_callbacks", core::event_queue().fired()},
                      {"peak_pending_callbacks", core::event_queue().peak_pending()},
                      {"peak_packets", fabric::packet_pool().peak_live()}};
    return j;
  }

  std::string pattern_ = "pair";
  std::string bytes_text_ = "1MiB";
  int mtu_ = 0;
  bool timing_only_ = false;
  NetPlan plan_;
};

}  // namespace

std::unique_ptr<Command> add_net_command(CLI::App& app) {
  return std::make_unique<NetCommand>(app);
}

}  // namespace podsim::sims
