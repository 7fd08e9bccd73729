#include "training/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/kernel.h"
#include "core/trace.h"

namespace podsim::training {
namespace {

// How the trace names the gradients' and weights' collectives.
const char* words(collectives::Op op) {
  switch (op) {
    case collectives::Op::kReduceScatter:
      return "reduce-scatter";
    case collectives::Op::kAllGather:
      return "all-gather";
    default:
      return "all-reduce";
  }
}

}  // namespace

DataParallelRun::DataParallelRun(sc_core::sc_module_name name, collectives::Communicator& comm,
                                 Timeline timeline, DataParallelOptions options, HostPath host)
    : sc_module(name),
      comm_(comm),
      timeline_(std::move(timeline)),
      options_(options),
      host_(std::move(host)),
      buckets_(make_buckets(timeline_.gradients, options_.bucket_bytes)),
      replay_(options_.replay) {
  if (options_.strategy == Strategy::kIpuServer) {
    std::vector<int> boxes, keys;
    for (int r = 0; r < comm_.size(); ++r) {
      boxes.push_back(host_.host_of_rank.empty() ? 0
                                                 : host_.host_of_rank[static_cast<std::size_t>(r)]);
      keys.push_back(r);
    }
    servers_ = comm_.split(boxes, keys);
  }
  if (options_.shard_optimizer && options_.strategy != Strategy::kPopdist) {
    throw std::invalid_argument("a sharded optimizer state runs popdist");
  }
  if (!options_.stage_parameters.empty()) split_stages();
  if (uses_hosts(options_.strategy, options_.host_staged)) {
    if (!host_.staging || host_.host_of_rank.size() != static_cast<std::size_t>(comm_.size()) ||
        !(host_.reduce_bytes_per_s > 0 && host_.update_bytes_per_s > 0)) {
      throw std::invalid_argument(
          "host-staged training needs every rank's host and the PCIe trees");
    }
    std::map<int, int> per_host;
    for (int h : host_.host_of_rank) ++per_host[h];
    if (per_host.size() > 1 && !host_.hosts) {
      throw std::invalid_argument("workers on several hosts need the hosts' network");
    }
    int most = 0;
    for (const auto& [h, n] : per_host) most = std::max(most, n);
    host_reduce_ps_per_byte_ = (most - 1) * 1e12 / host_.reduce_bytes_per_s;
  }
  SC_THREAD(run);
}

void DataParallelRun::split_stages() {
  const auto stages = static_cast<int>(options_.stage_parameters.size());
  if (options_.strategy != Strategy::kPopdist || comm_.size() % stages != 0) {
    throw std::invalid_argument(
        "pipelined replicas run popdist, over a multiple of the stages' count of ranks");
  }
  const int replicas = comm_.size() / stages;
  std::vector<int> stage_of, keys;
  for (int r = 0; r < comm_.size(); ++r) {
    stage_of.push_back(r / replicas);
    keys.push_back(r);
  }
  stages_ = comm_.split(stage_of, keys);
}

void DataParallelRun::run() {
  try {
    if (!options_.ideal_network) {
      comm_.open();
      for (auto& [box, server] : servers_) server.open();
      for (auto& [stage, ranks] : stages_) ranks.open();
      if (host_.hosts) host_.hosts->open();
    }
    for (int i = 0; i < options_.steps; ++i) steps_.push_back(step(i == 0));
  } catch (const std::exception& e) {
    failure_ = e.what();
  }
}

void DataParallelRun::wait_until(core::TimePs t) {
  const core::TimePs now = core::now_ps();
  if (t > now) sc_core::wait(sc_core::sc_time::from_value(t - now));
}

StepResult DataParallelRun::step(bool first) {
  StepResult r;
  r.start_ps = core::now_ps();
  if (first && options_.broadcast && !options_.ideal_network) r.broadcast_ps = broadcast();
  const core::TimePs compute_start = core::now_ps();
  trace_compute(compute_start);
  if (options_.strategy == Strategy::kIpuMultiworker) {
    stream_to_hosts(compute_start, r);  // the update included
    r.end_ps = core::now_ps();
    return r;
  }
  switch (options_.strategy) {
    case Strategy::kHorovod:
      reduce_fused(compute_start, r);
      break;
    case Strategy::kPopdist:
      reduce_compiled(compute_start, r);
      break;
    case Strategy::kIpuServer:
      reduce_per_server(compute_start, r);
      break;
    default:
      reduce_buckets(compute_start, r);
  }
  wait_until(compute_start + timeline_.backward_ps);
  const core::TimePs optimizer_start = core::now_ps();
  sc_core::wait(sc_core::sc_time::from_value(timeline_.optimizer_ps));
  trace_span(options_.shard_optimizer ? "optimizer (own shard)" : "optimizer", optimizer_start,
             core::now_ps());
  if (options_.shard_optimizer) gather_weights(r);
  r.end_ps = core::now_ps();
  return r;
}

// When a gradient is handed to the strategy: as it is ready, or at the backward pass's end.
core::TimePs DataParallelRun::handed_ps(core::TimePs ready_ps) const {
  return options_.overlap ? ready_ps : timeline_.backward_ps;
}

void DataParallelRun::all_reduce(std::uint64_t bytes, StepResult& r) {
  if (options_.host_staged) {
    staged_all_reduce(bytes, r);
  } else if (!options_.ideal_network) {
    r.comm_ps += collective(comm_, collectives::Op::kAllReduce, bytes);
  }
  ++r.all_reduces;
}

// Horovod host-staged: the fused buffer to every host, summed there and between the hosts, and
// back [T3].
void DataParallelRun::staged_all_reduce(std::uint64_t bytes, StepResult& r) {
  if (options_.ideal_network) return;
  const core::TimePs start = core::now_ps();
  wait_until(stage(bytes, pcie::Direction::kDeviceToHost, start));
  trace_host("stage to host", start, core::now_ps());
  host_all_reduce(bytes);
  const core::TimePs back = core::now_ps();
  wait_until(stage(bytes, pcie::Direction::kHostToDevice, back));
  trace_host("stage to device", back, core::now_ps());
  r.comm_ps += core::now_ps() - start;
}

// The staged copies summed by each host's CPU, then between the hosts over their network.
void DataParallelRun::host_all_reduce(std::uint64_t bytes) {
  const core::TimePs start = core::now_ps();
  wait_until(start +
             static_cast<core::TimePs>(host_reduce_ps_per_byte_ * static_cast<double>(bytes)));
  trace_host("host reduce", start, core::now_ps());
  if (!host_.hosts) return;
  const core::TimePs between = core::now_ps();
  collective(*host_.hosts, collectives::Op::kAllReduce, bytes);
  trace_host("hosts all-reduce", between, core::now_ps());
}

// ipu-multiworker: each gradient to the hosts as soon as backward yields it, reduced, the
// optimizer's update of its parameters on the host CPU, and the new weights back to every chip;
// the host works through the gradients in order, overlapping the rest of backward [T4].
void DataParallelRun::stream_to_hosts(core::TimePs compute_start, StepResult& r) {
  core::TimePs weights_back = 0;
  for (const Gradient& g : timeline_.gradients) {
    const std::uint64_t parameters = g.bytes / options_.gradient_bytes;
    const core::TimePs ready = compute_start + handed_ps(g.ready_ps);
    if (!options_.ideal_network) {
      const core::TimePs start = std::max(ready, core::now_ps());
      wait_until(stage(g.bytes, pcie::Direction::kDeviceToHost, ready));
      trace_host(fmt::format("stage layer {} gradient", g.layer), start, core::now_ps());
      host_all_reduce(g.bytes);
      r.comm_ps += core::now_ps() - start;
    } else {
      wait_until(ready);
    }
    const core::TimePs update = core::now_ps();
    wait_until(update +
               static_cast<core::TimePs>(static_cast<double>(parameters) * options_.update_bytes *
                                         1e12 / host_.update_bytes_per_s));
    trace_host(fmt::format("host update layer {}", g.layer), update, core::now_ps());
    ++r.all_reduces;
    if (!options_.ideal_network) {
      weights_back = std::max(weights_back, stage(parameters * options_.parameter_bytes,
                                                  pcie::Direction::kHostToDevice, core::now_ps()));
    }
  }
  wait_until(std::max(weights_back, compute_start + timeline_.backward_ps));
}

// popdist: the gradients are all-reduced, or reduce-scattered onto the replicas' shards of a
// sharded optimizer state.
collectives::Op DataParallelRun::gradient_op() const {
  return options_.shard_optimizer ? collectives::Op::kReduceScatter : collectives::Op::kAllReduce;
}

// popdist: the step's program reduces every gradient over the IPU-Links' rings once the
// backward pass has ended (bulk-synchronous: exchange never overlaps compute) [T4, S16].
void DataParallelRun::reduce_compiled(core::TimePs compute_start, StepResult& r) {
  wait_until(compute_start + timeline_.backward_ps);
  r.all_reduces += stages_.empty() ? 1 : static_cast<int>(stages_.size());
  among_replicas(gradient_op(), options_.gradient_bytes, r);
}

// A sharded optimizer's new weights, every replica's shard to every replica.
void DataParallelRun::gather_weights(StepResult& r) {
  r.all_gathers += stages_.empty() ? 1 : static_cast<int>(stages_.size());
  among_replicas(collectives::Op::kAllGather, options_.parameter_bytes, r);
}

// popdist: `op` over the model's parameters at `bytes_per_parameter` among the replicas on the
// IPU-Links' rings, or, pipelined, over each stage's parameters among its IPUs, every stage at
// once.
void DataParallelRun::among_replicas(collectives::Op op, std::uint64_t bytes_per_parameter,
                                     StepResult& r) {
  if (options_.ideal_network || comm_.size() / timeline_.pipeline_stages == 1) return;
  const core::TimePs start = core::now_ps();
  if (stages_.empty()) {
    r.comm_ps += collective(comm_, op, options_.parameters * bytes_per_parameter);
  } else {
    run_each(
        stages_, op,
        [this, bytes_per_parameter](int stage) {
          return options_.stage_parameters[static_cast<std::size_t>(stage)] * bytes_per_parameter;
        },
        "a pipeline stage's");
    r.comm_ps += core::now_ps() - start;
  }
  trace_host(fmt::format("IPU-Link {}{}", words(op), stages_.empty() ? "" : " per stage"), start,
             core::now_ps());
}

// Every group of ranks (of more than one) runs `op` over `bytes_of(group)` at once; returns when
// all have ended. Throws std::runtime_error naming `whose` when one fails.
void DataParallelRun::run_each(std::map<int, collectives::Communicator>& groups, collectives::Op op,
                               const std::function<std::uint64_t(int)>& bytes_of,
                               const char* whose) {
  std::vector<std::shared_ptr<collectives::Handle>> running;
  for (auto& [group, ranks] : groups) {
    if (ranks.size() > 1) running.push_back(ranks.start(spec(ranks, op, bytes_of(group))));
  }
  for (const auto& h : running) {
    h->wait_done();
    if (!h->ok) {
      throw std::runtime_error(fmt::format("{} {} failed", whose, words(op)));
    }
  }
}

// ipu-server: every server's IPUs all-reduce over their IPU-Links at once, then each server's sum
// goes to its host, between the hosts and back to every IPU [T4].
void DataParallelRun::reduce_per_server(core::TimePs compute_start, StepResult& r) {
  wait_until(compute_start + timeline_.backward_ps);
  ++r.all_reduces;
  if (options_.ideal_network) return;
  const std::uint64_t bytes = options_.parameters * options_.gradient_bytes;
  const core::TimePs start = core::now_ps();
  run_each(
      servers_, collectives::Op::kAllReduce, [bytes](int) { return bytes; }, "a server's");
  trace_host("server all-reduce", start, core::now_ps());
  if (host_.hosts) {
    const core::TimePs staged = core::now_ps();
    core::TimePs up = staged;
    for (auto& [box, server] : servers_) {
      up = std::max(
          up, host_.staging->book(server.chip(0), bytes, pcie::Direction::kDeviceToHost, staged));
    }
    wait_until(up);
    trace_host("stage to host", staged, core::now_ps());
    const core::TimePs between = core::now_ps();
    collective(*host_.hosts, collectives::Op::kAllReduce, bytes);
    trace_host("hosts all-reduce", between, core::now_ps());
    const core::TimePs back = core::now_ps();
    wait_until(stage(bytes, pcie::Direction::kHostToDevice, back));
    trace_host("stage to device", back, core::now_ps());
  }
  r.comm_ps += core::now_ps() - start;
}

core::TimePs DataParallelRun::stage(std::uint64_t bytes, pcie::Direction direction,
                                    core::TimePs issued, bool only_first) {
  core::TimePs end = issued;
  for (int rank = 0; rank < (only_first ? 1 : comm_.size()); ++rank) {
    end = std::max(end, host_.staging->book(comm_.chip(rank), bytes, direction, issued));
  }
  return end;
}

// hccl: each bucket's all-reduce as soon as it is ready, one after another.
void DataParallelRun::reduce_buckets(core::TimePs compute_start, StepResult& r) {
  for (const Bucket& b : buckets_) {
    wait_until(compute_start + handed_ps(b.ready_ps));
    all_reduce(b.bytes, r);
  }
}

// horovod: a background loop that wakes once per cycle, takes the gradients handed to it since
// the last cycle and all-reduces them fused into buffers of at most the fusion threshold; a
// cycle starts a cycle time after the one before, or when the one before is done if it took
// longer (Horovod's RunLoopOnce) [T3].
void DataParallelRun::reduce_fused(core::TimePs compute_start, StepResult& r) {
  const std::vector<Gradient>& g = timeline_.gradients;
  std::size_t next = 0;
  core::TimePs cycle_start = compute_start;
  while (next < g.size()) {
    wait_until(cycle_start + options_.cycle_ps);
    cycle_start = core::now_ps();
    std::size_t end = next;
    while (end < g.size() && compute_start + handed_ps(g[end].ready_ps) <= cycle_start) ++end;
    if (end == next) continue;
    trace_instant(fmt::format("fusion cycle {}: {} tensors", r.cycles, end - next), cycle_start);
    ++r.cycles;
    for (std::size_t i = next; i < end;) {
      std::uint64_t bytes = 0;
      for (; i < end && (bytes == 0 || bytes + g[i].bytes <= options_.fusion_bytes); ++i) {
        bytes += g[i].bytes;
      }
      all_reduce(bytes, r);
    }
    next = end;
  }
}

core::TimePs DataParallelRun::broadcast() {
  const core::TimePs start = core::now_ps();
  const std::uint64_t total = options_.parameters * options_.parameter_bytes;
  const bool hosts = uses_hosts(options_.strategy, options_.host_staged);
  for (std::uint64_t sent = 0; sent < total; sent += kBroadcastBucket) {
    const std::uint64_t bytes = std::min(kBroadcastBucket, total - sent);
    if (hosts) {
      staged_broadcast(bytes);
    } else {
      collective(comm_, collectives::Op::kBroadcast, bytes);
    }
  }
  if (hosts) trace_host("step-0 broadcast", start, core::now_ps());
  return core::now_ps() - start;
}

// Rank 0's parameters to its host, from host to host, and down to every chip.
void DataParallelRun::staged_broadcast(std::uint64_t bytes) {
  wait_until(stage(bytes, pcie::Direction::kDeviceToHost, core::now_ps(), true));
  if (host_.hosts) collective(*host_.hosts, collectives::Op::kBroadcast, bytes);
  wait_until(stage(bytes, pcie::Direction::kHostToDevice, core::now_ps()));
}

collectives::Spec DataParallelRun::spec(const collectives::Communicator& comm, collectives::Op op,
                                        std::uint64_t bytes) const {
  collectives::Spec spec;
  spec.op = op;
  spec.type = options_.gradient_bytes == 4 ? core::DataType::kFp32 : core::DataType::kBf16;
  if (op == collectives::Op::kBroadcast) {
    spec.type = options_.parameter_bytes == 4 ? core::DataType::kFp32 : core::DataType::kBf16;
  }
  const std::uint64_t element = core::size_of(spec.type);
  // Operations that split over the ranks take whole elements per rank: padded up, as HCCL pads.
  const auto ranks = static_cast<std::uint64_t>(comm.size());
  std::uint64_t count = std::max<std::uint64_t>(1, (bytes + element - 1) / element);
  if (op != collectives::Op::kAllReduce) count = (count + ranks - 1) / ranks * ranks;
  spec.count = count;
  spec.base = options_.base;
  // Horovod, the hosts' MPI or gRPC and GCL reduce with rings, HCCL picks by its tuning table;
  // the broadcast is a ring (a chain from rank 0) either way.
  const bool gcl =
      options_.strategy == Strategy::kPopdist || options_.strategy == Strategy::kIpuServer;
  if (op == collectives::Op::kBroadcast || &comm == host_.hosts || gcl ||
      (op == collectives::Op::kAllReduce && options_.strategy == Strategy::kHorovod)) {
    spec.algorithm = collectives::Algorithm::kRing;
  }
  const bool ringed = op == collectives::Op::kAllReduce || op == collectives::Op::kReduceScatter ||
                      op == collectives::Op::kAllGather;
  if (gcl && &comm != host_.hosts && ringed && comm.size() > 1) {
    spec.rings = options_.rings;
  }
  return spec;
}

core::TimePs DataParallelRun::collective(collectives::Communicator& comm, collectives::Op op,
                                         std::uint64_t bytes) {
  return replay_.run(comm, spec(comm, op, bytes));
}

core::TrackId DataParallelRun::track(int rank, const char* row) const {
  return core::trace_writer().track(
      fmt::format("{}.{}", comm_.model().chip(comm_.chip(rank)).name(), row));
}

// Every rank's row of its host's work for it.
void DataParallelRun::trace_host(const std::string& name, core::TimePs start,
                                 core::TimePs end) const {
  if (!core::trace_writer().enabled()) return;
  for (int r = 0; r < comm_.size(); ++r) {
    core::trace_writer().span(track(r, "host"), name.c_str(), start, end);
  }
}

void DataParallelRun::trace_span(const char* name, core::TimePs start, core::TimePs end) const {
  if (!core::trace_writer().enabled()) return;
  for (int r = 0; r < comm_.size(); ++r) core::trace_writer().span(track(r), name, start, end);
}

void DataParallelRun::trace_instant(const std::string& name, core::TimePs at) const {
  if (!core::trace_writer().enabled()) return;
  for (int r = 0; r < comm_.size(); ++r) core::trace_writer().instant(track(r), name, at);
}

// Every replica's compute on its chip's "training" row: the passes and the buckets' ready times.
// A pipelined replica: stage s takes micro-batch m in slot m + s, so the first stages idle while
// the pipeline drains and the last ones while it fills. Sequentially, the stages take their
// turns in slot m, shown as equal shares of it.
void DataParallelRun::trace_pipeline(core::TimePs start) const {
  const int replicas = comm_.size() / timeline_.pipeline_stages;
  for (int r = 0; r < comm_.size(); ++r) {
    const core::TrackId row = track(r);
    const int stage = r / replicas;
    const bool in_turn = timeline_.stage_lag == 0;
    const core::TimePs share =
        in_turn ? timeline_.slot_ps / static_cast<core::TimePs>(timeline_.pipeline_stages)
                : timeline_.slot_ps;
    for (int m = 0; m < timeline_.micro_batches; ++m) {
      const auto slot = static_cast<core::TimePs>(m + (in_turn ? 0 : stage));
      const core::TimePs at = start + slot * timeline_.slot_ps +
                              (in_turn ? static_cast<core::TimePs>(stage) * share : 0);
      core::trace_writer().span(row, fmt::format("stage {}: micro-batch {}", stage, m).c_str(), at,
                                at + share);
    }
  }
}

void DataParallelRun::trace_compute(core::TimePs start) const {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  if (timeline_.pipeline_stages > 1) return trace_pipeline(start);
  const core::TimePs pass =
      timeline_.micro_batches > 1 ? timeline_.accumulating_ps / (timeline_.micro_batches - 1) : 0;
  for (int m = 0; m + 1 < timeline_.micro_batches; ++m) {
    trace_span(fmt::format("micro-batch {} (accumulating)", m).c_str(), start + m * pass,
               start + (m + 1) * pass);
  }
  trace_span("forward", start + timeline_.accumulating_ps, start + timeline_.forward_ps);
  trace_span("backward", start + timeline_.forward_ps, start + timeline_.backward_ps);
  if (options_.strategy != Strategy::kHccl) return;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    trace_instant(fmt::format("bucket {} ready ({} bytes)", b, buckets_[b].bytes),
                  start + handed_ps(buckets_[b].ready_ps));
  }
}

}  // namespace podsim::training
