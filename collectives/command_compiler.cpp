#include "collectives/command_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>

#include "collectives/job_order.h"
#include "collectives/schedule.h"
#include "hw/chip/chip.h"
#include "hw/chip/nic_doorbell.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/dma/dma_descriptor.h"
#include "hw/dma/dma_regs.h"
#include "hw/tpc/data_type.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/kernels/library.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::collectives {
namespace {

constexpr std::uint32_t kNone = Command::kNone;
constexpr std::uint32_t kMaxCount = 0x7FFF;  // a sync object's 15 bits
constexpr std::uint64_t kBinaryAlign = 256;  // where a TPC fetches a kernel from

// The kernel library's element-wise kernel for a reduction operator.
const char* reduction_kernel(core::ReduceOp op) {
  switch (op) {
    case core::ReduceOp::kSum:
      return "add";
    case core::ReduceOp::kMin:
      return "min";
    case core::ReduceOp::kMax:
      return "max";
  }
  throw std::logic_error("a reduction without a kernel");
}

bool is_reduce(const Command& c) { return c.kind == Command::Kind::kReduce; }
bool is_job(const Command& c) { return is_reduce(c) || c.kind == Command::Kind::kCopy; }

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("collective programs: " + what);
}

void validate(const std::vector<Program>& programs, const CommandCompiler::PeerOf& peer_of) {
  const int n = static_cast<int>(programs.size());
  for (int r = 0; r < n; ++r) {
    const Program& p = programs[static_cast<std::size_t>(r)];
    for (std::size_t s = 0; s < p.streams.size(); ++s) {
      for (std::size_t i = 0; i < p.streams[s].size(); ++i) {
        const Command& c = p.streams[s][i];
        const auto where = fmt::format("rank {} stream {} command {}", r, s, i);
        if ((c.wait != kNone && c.wait >= p.signals) || (c.done != kNone && c.done >= p.signals)) {
          refuse(fmt::format("{}: a signal outside 0..{}", where, p.signals));
        }
        if (c.kind != Command::Kind::kWrite) continue;
        const int peer = peer_of(r, c.qpn);
        if (peer < 0 || peer >= n) refuse(fmt::format("{}: QP {} leads to no rank", where, c.qpn));
        if (c.remote_signal >= programs[static_cast<std::size_t>(peer)].signals) {
          refuse(fmt::format("{}: remote signal {} of rank {}", where, c.remote_signal, peer));
        }
      }
    }
  }
}

}  // namespace

CommandCompiler::CommandCompiler(const std::vector<Program>& programs, const PeerOf& peer_of,
                                 std::vector<ChipGeometry> geometry)
    : geometry_(std::move(geometry)) {
  if (geometry_.size() != programs.size()) refuse("one chip geometry per rank");
  for (const ChipGeometry& g : geometry_) {
    if (g.queues < 1 || g.engines < 1 || g.tpcs < 0 || g.max_buffer < 64)
      refuse("a chip without queues");
  }
  validate(programs, peer_of);
  std::vector<std::vector<std::uint32_t>> arrivals(programs.size());
  for (std::size_t r = 0; r < programs.size(); ++r) arrivals[r].assign(programs[r].signals, 0);
  for (std::size_t r = 0; r < programs.size(); ++r) {
    for (const auto& stream : programs[r].streams) {
      for (const Command& c : stream) {
        if (c.kind != Command::Kind::kWrite) continue;
        ++arrivals[static_cast<std::size_t>(peer_of(static_cast<int>(r), c.qpn))][c.remote_signal];
      }
    }
  }
  const auto order = estimate_order(programs, peer_of);
  ranks_.resize(programs.size());
  for (std::size_t r = 0; r < programs.size(); ++r) {
    compile_rank(static_cast<int>(r), programs, peer_of, order[r], arrivals[r]);
  }
}

// Runs the programs on a rough model (a write lands after 2 us plus its bytes at 25 GB/s and is
// acknowledged 1 us later; a job takes 1 us plus its bytes at 100 GB/s; an issue takes 20 ns)
// and returns each rank's commands in the order they issued. The model only orders; the chips
// give the times.
std::vector<std::vector<CommandCompiler::Position>> CommandCompiler::estimate_order(
    const std::vector<Program>& programs, const PeerOf& peer_of) const {
  using Ps = std::uint64_t;
  struct Event {
    Ps at;
    std::uint64_t seq;
    int rank;
    bool raise;  // raise signal `what` by one, else try to issue stream `what`
    std::uint32_t what;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  std::uint64_t seq = 0;
  auto push = [&](Ps at, int rank, bool raise, std::uint32_t what) {
    events.push({at, seq++, rank, raise, what});
  };
  const std::size_t n = programs.size();
  std::vector<std::vector<std::uint32_t>> counts(n), next(n);
  std::vector<std::vector<std::vector<std::uint32_t>>> waiting(n);  // by signal: streams
  std::vector<std::vector<Position>> order(n);
  for (std::size_t r = 0; r < n; ++r) {
    counts[r].assign(programs[r].signals, 0);
    waiting[r].resize(programs[r].signals);
    next[r].assign(programs[r].streams.size(), 0);
    for (std::uint32_t s = 0; s < programs[r].streams.size(); ++s) {
      push(0, static_cast<int>(r), false, s);
    }
  }
  auto issue = [&](Ps at, int r, std::uint32_t s, const Command& c) {
    const auto rank = static_cast<std::size_t>(r);
    order[rank].push_back({s, next[rank][s]++});
    Ps done = at;
    if (c.kind == Command::Kind::kWrite) {
      const Ps landed = at + 2000000 + c.bytes * 40;
      push(landed, peer_of(r, c.qpn), true, c.remote_signal);
      done = landed + 1000000;
    } else if (is_job(c)) {
      done = at + 1000000 + c.bytes * 10;
    }
    if (c.done != kNone) push(done, r, true, c.done);
    push(at + 20000, r, false, s);
  };
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    const auto rank = static_cast<std::size_t>(e.rank);
    if (e.raise) {
      ++counts[rank][e.what];
      for (std::uint32_t s : std::exchange(waiting[rank][e.what], {})) push(e.at, e.rank, false, s);
      continue;
    }
    const auto& stream = programs[rank].streams[e.what];
    const std::uint32_t i = next[rank][e.what];
    if (i >= stream.size()) continue;
    const Command& c = stream[i];
    if (c.wait != kNone && counts[rank][c.wait] < c.wait_count) {
      auto& list = waiting[rank][c.wait];
      if (std::find(list.begin(), list.end(), e.what) == list.end()) list.push_back(e.what);
      continue;
    }
    issue(e.at, e.rank, e.what, c);
  }
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t s = 0; s < programs[r].streams.size(); ++s) {
      const std::uint32_t i = next[r][s];
      if (i >= programs[r].streams[s].size()) continue;
      const Command& c = programs[r].streams[s][i];
      refuse(
          fmt::format("they cannot finish: rank {} stream {} command {} waits for signal {} to "
                      "reach {}, and it stops at {}",
                      r, s, i, c.wait, c.wait_count, counts[r][c.wait]));
    }
  }
  return order;
}

void CommandCompiler::compile_rank(int rank, const std::vector<Program>& programs,
                                   const PeerOf& peer_of, const std::vector<Position>& order,
                                   const std::vector<std::uint32_t>& arrivals) {
  const Program& program = programs[static_cast<std::size_t>(rank)];
  const ChipGeometry& g = geometry_[static_cast<std::size_t>(rank)];
  RankCode& code = ranks_[static_cast<std::size_t>(rank)];
  code.generation = g.generation;
  const std::uint32_t signals = program.signals;
  const auto queues = static_cast<std::uint32_t>(g.queues);  // the DMA QMANs
  const auto tpcs = static_cast<std::uint32_t>(g.tpcs);
  const auto acks = [&](std::uint32_t h) { return signals + h; };
  const auto jobs = [&](std::uint32_t h) { return signals + queues + h; };
  const std::uint32_t done = signals + 2 * queues;
  code.sobs = done + 1;
  code.queues.resize(queues + tpcs);

  const auto on_tpcs = [&](const Command& c) {
    return tpcs > 0 && c.kind == Command::Kind::kReduce;
  };
  auto preferred = [&](const Command& c) {
    if (g.min_slice == 0) return 1;
    const std::uint64_t engines = on_tpcs(c) ? tpcs : static_cast<std::uint64_t>(g.engines);
    return static_cast<int>(std::clamp<std::uint64_t>(c.bytes / g.min_slice, 1, engines));
  };
  // A signal only jobs of one stream raise counts their slices; any other counts raises.
  std::vector<int> weight(signals, 0), job_stream(signals, -1);
  std::vector<bool> jobs_only(signals, true);
  for (std::uint32_t s = 0; s < program.streams.size(); ++s) {
    for (const Command& c : program.streams[s]) {
      if (c.done == kNone) continue;
      const bool own = is_job(c) && (job_stream[c.done] < 0 || job_stream[c.done] == int(s));
      jobs_only[c.done] = jobs_only[c.done] && own;
      if (is_job(c)) job_stream[c.done] = static_cast<int>(s);
      const int p = is_job(c) ? preferred(c) : 1;
      weight[c.done] = weight[c.done] == 0 ? p : std::min(weight[c.done], p);
    }
  }
  // Counted: raised by jobs of one stream alone, so a count of slices says which have finished.
  std::vector<bool> counted(signals);
  for (std::uint32_t s = 0; s < signals; ++s) {
    counted[s] = jobs_only[s] && arrivals[s] == 0 && job_stream[s] >= 0;
    if (!counted[s]) weight[s] = 1;
  }

  std::vector<std::uint64_t> total(code.sobs, 0);   // raises each object gets, in all
  std::vector<std::uint32_t> waited(code.sobs, 0);  // the highest wait on it, any queue
  std::vector<std::uint32_t> last_queue(code.sobs, 0);
  std::vector<std::vector<std::uint32_t>> queue_waited(queues + tpcs,
                                                       std::vector<std::uint32_t>(code.sobs));
  // The waits of each DMA queue in order, and how far each TPC queue has followed each.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> history(queues);
  std::vector<std::vector<std::size_t>> followed(tpcs, std::vector<std::size_t>(queues, 0));
  for (std::uint32_t s = 0; s < signals; ++s) total[s] = arrivals[s];
  std::vector<std::uint32_t> raised_by_jobs(signals, 0);  // jobs seen so far, by done signal
  std::vector<std::optional<JobRanges>> previous(program.streams.size());
  std::vector<std::uint32_t> previous_done(program.streams.size(), kNone);
  std::vector<std::uint32_t> previous_count(program.streams.size(), 0);

  auto wait = [&](std::uint32_t h, std::uint32_t sob, std::uint64_t value) {
    if (value > kMaxCount) {
      refuse(fmt::format("rank {}: a wait for {} raises of one signal (sync objects count to {})",
                         rank, value, kMaxCount));
    }
    if (value == 0 || queue_waited[h][sob] >= value) return;
    queue_waited[h][sob] = static_cast<std::uint32_t>(value);
    waited[sob] = std::max(waited[sob], static_cast<std::uint32_t>(value));
    code.queues[h].push_back({OpKind::kWait, sob, static_cast<std::uint32_t>(value), 0, 0});
    if (h < queues) history[h].emplace_back(sob, static_cast<std::uint32_t>(value));
  };
  // TPC queue t catches up with DMA queue h's waits before it runs a job of h's.
  auto follow = [&](std::uint32_t t, std::uint32_t h) {
    std::size_t& seen = followed[t - queues][h];
    for (; seen < history[h].size(); ++seen)
      wait(t, history[h][seen].first, history[h][seen].second);
  };
  auto raised = [&](std::uint32_t h, std::uint32_t sob, std::uint64_t by) {
    total[sob] += by;
    last_queue[sob] = h;
  };

  for (const Position& at : order) {
    const Command& c = program.streams[at.stream][at.index];
    const std::uint32_t h = at.stream % queues;
    if (c.wait != kNone) wait(h, c.wait, std::uint64_t{c.wait_count} * weight[c.wait]);
    if (c.kind == Command::Kind::kWait) {
      if (c.done != kNone) {
        code.queues[h].push_back({OpKind::kAdd, c.done, 0, 0, 0});
        raised(h, c.done, 1);
      }
      continue;
    }
    if (c.kind == Command::Kind::kWrite) {
      const std::uint32_t completion = c.done != kNone ? c.done : acks(h);
      code.wqes.push_back(
          {c.qpn, c.src, c.dst, c.bytes, peer_of(rank, c.qpn), c.remote_signal, completion});
      code.queues[h].push_back(
          {OpKind::kWrite, 0, 0, static_cast<std::uint32_t>(code.wqes.size() - 1), 0});
      raised(h, completion, 1);
      continue;
    }
    // A job.
    const Job job = c.job();
    const bool own_count = c.done != kNone && counted[c.done];
    const int slices = c.done == kNone ? preferred(c) : own_count ? weight[c.done] : 1;
    const JobRanges ranges{c.dst, c.src, c.b, c.bytes, is_reduce(c), slices, on_tpcs(c)};
    auto& prev = previous[at.stream];
    if (prev && !independent(*prev, ranges)) {
      const std::uint32_t d = previous_done[at.stream];
      if (d == kNone || !counted[d]) {
        refuse(
            fmt::format("rank {} stream {} command {}: the job touches what the job before it "
                        "writes, and that job raises no signal of its own to wait for",
                        rank, at.stream, at.index));
      }
      wait(h, d, std::uint64_t{previous_count[at.stream]} * weight[d]);
    }
    if (own_count && raised_by_jobs[c.done] > 0) {
      wait(h, c.done, std::uint64_t{raised_by_jobs[c.done]} * weight[c.done]);
    }
    const std::uint32_t completion = c.done != kNone ? c.done : jobs(h);
    for (int i = 0; i < slices; ++i) {
      const auto [first, count] =
          part_of(job.count, static_cast<std::uint64_t>(slices), static_cast<std::uint64_t>(i));
      const std::uint64_t offset = first * core::size_of(job.type);
      const std::uint64_t bytes = count * core::size_of(job.type);
      if (bytes == 0) {  // nothing to move: done at once
        code.queues[h].push_back({OpKind::kAdd, completion, 0, 0, 0});
        continue;
      }
      if (on_tpcs(c)) {
        const std::uint32_t t =
            queues + (slices == 1 ? at.stream % tpcs : static_cast<std::uint32_t>(i));
        follow(t, h);
        code.kernels.push_back(plan_kernel(code, job, first, count, completion));
        std::vector<std::uint8_t> packets;
        encode_kernel(code.kernels.back(), 0, 0, packets);
        code.queues[t].push_back({OpKind::kKernel, 0, static_cast<std::uint32_t>(packets.size()),
                                  static_cast<std::uint32_t>(code.kernels.size() - 1), 0});
        continue;
      }
      dma::DmaJob d = c.kind == Command::Kind::kCopy
                          ? dma::DmaJob::copy(job.a + offset, job.dst + offset, bytes)
                          : dma::DmaJob::reduce(job.a + offset, job.b + offset, job.dst + offset,
                                                bytes, job.type, job.op);
      code.slices.push_back({d, completion});
      const int engine = slices == 1 ? static_cast<int>(at.stream % g.engines) : i;
      code.queues[h].push_back(
          {OpKind::kSlice, 0, 0, static_cast<std::uint32_t>(code.slices.size() - 1), engine});
    }
    raised(h, completion, static_cast<std::uint64_t>(slices));
    if (c.done != kNone) ++raised_by_jobs[c.done];
    prev = ranges;
    previous_done[at.stream] = c.done;
    previous_count[at.stream] = c.done != kNone ? raised_by_jobs[c.done] : 0;
  }
  // Nothing a queue started may still be under way when the rank's done object is raised.
  for (std::uint32_t sob = 0; sob < done; ++sob) {
    if (total[sob] > waited[sob]) wait(last_queue[sob], sob, total[sob]);
  }
  const auto all = static_cast<std::uint32_t>(code.queues.size());
  for (auto& ops : code.queues) ops.push_back({OpKind::kAdd, done, 0, 0, 0});
  for (std::uint32_t h = 0; h < all; ++h) {
    auto& ops = code.queues[h];
    ops.push_back({OpKind::kWait, done, all, 0, 0});
    for (std::uint32_t sob = done * h / all; sob < done * (h + 1) / all; ++sob) {
      ops.push_back({OpKind::kClear, sob, 0, 0, 0});
    }
    ops.push_back({OpKind::kAdd, done, 0, 0, 0});
  }
}

std::uint64_t CommandCompiler::buffer_bytes(const std::vector<Op>& ops) const {
  static const std::uint64_t msg = chip::spec::find_packet("MSG_LONG")->size;
  static const std::uint64_t fence = chip::spec::find_packet("FENCE")->size;
  std::uint64_t bytes = 0;
  for (const Op& op : ops) {
    bytes += op.kind == OpKind::kKernel ? op.value : msg + (op.kind == OpKind::kWait ? fence : 0);
  }
  return bytes;
}

std::uint64_t CommandCompiler::binaries_bytes(const RankCode& code) {
  std::uint64_t bytes = 0;
  for (const std::string& key : code.binaries) {
    bytes += (tpc::kernel_binary(key, code.generation).size() + kBinaryAlign - 1) / kBinaryAlign *
             kBinaryAlign;
  }
  return bytes;
}

CommandCompiler::KernelSpec CommandCompiler::plan_kernel(RankCode& code, const Job& job,
                                                         std::uint64_t first, std::uint64_t count,
                                                         std::uint32_t completion) {
  if (count > std::numeric_limits<std::uint32_t>::max()) {
    refuse(fmt::format("a reduction slice of {} elements (a TPC kernel takes at most 2^32 - 1)",
                       count));
  }
  tpc::KernelRequest request;
  request.kernel = reduction_kernel(job.op);
  request.dtype = tpc::dtype_of(job.type);
  request.shape = {static_cast<std::uint32_t>(count)};
  const tpc::KernelPlan plan = tpc::plan_kernel(request);
  const tpc::LaunchSpec& launch = plan.launches.front();
  const std::uint64_t offset = first * core::size_of(job.type);
  KernelSpec k;
  k.registers.state = tpc::launch_state(launch, {job.a + offset, job.b + offset, job.dst + offset},
                                        tpc::partition(launch.index_space, 1).front());
  k.registers.access_scale = launch.access_scale;
  k.registers.sync_message = chip::spec::encode_sob_write({1, true, false});
  const auto known = std::find(code.binaries.begin(), code.binaries.end(), launch.binary);
  k.binary = static_cast<int>(known - code.binaries.begin());
  if (known == code.binaries.end()) code.binaries.push_back(launch.binary);
  k.completion = completion;
  return k;
}

void CommandCompiler::encode_kernel(const KernelSpec& k, std::uint64_t binary,
                                    std::uint64_t sync_object, std::vector<std::uint8_t>& out) {
  tpc::KernelRegisters registers = k.registers;
  registers.binary = binary;
  registers.sync_object = sync_object;
  chip::spec::PacketCodec codec;
  codec.encode_registers(tpc::register_image(registers), out);
  chip::spec::Packet execute("WREG_32");
  execute.set("reg_offset", PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET).set("value", 1);
  codec.encode(execute, out);
}

std::uint64_t CommandCompiler::arena_bytes(int rank) const {
  const RankCode& code = ranks_[static_cast<std::size_t>(rank)];
  std::uint64_t bytes = binaries_bytes(code) + code.slices.size() * dma::kDescriptorBytes +
                        code.wqes.size() * chip::Wqe::kBytes;
  for (const auto& ops : code.queues) bytes += buffer_bytes(ops);
  return bytes;
}

CommandCompiler::Counts CommandCompiler::counts(int rank) const {
  Counts n;
  for (const auto& ops : ranks_[static_cast<std::size_t>(rank)].queues) {
    for (const Op& op : ops) {
      n.waits += op.kind == OpKind::kWait;
      n.writes += op.kind == OpKind::kWrite;
      n.slices += op.kind == OpKind::kSlice;
      n.adds += op.kind == OpKind::kAdd;
      n.kernels += op.kind == OpKind::kKernel;
      n.clears += op.kind == OpKind::kClear;
    }
  }
  return n;
}

namespace {

std::uint32_t index_from(std::uint64_t address, std::uint64_t base, std::uint64_t unit) {
  if (address < base || (address - base) % unit != 0 || (address - base) / unit > 0xFFFFFFFFu) {
    throw std::logic_error(
        fmt::format("{:#x} is not a {}-byte entry above {:#x}", address, unit, base));
  }
  return static_cast<std::uint32_t>((address - base) / unit);
}

}  // namespace

ChipImage CommandCompiler::encode(int rank, const std::vector<ChipPlacement>& placements) const {
  const RankCode& code = ranks_[static_cast<std::size_t>(rank)];
  const ChipPlacement& at = placements[static_cast<std::size_t>(rank)];
  const ChipGeometry& g = geometry_[static_cast<std::size_t>(rank)];
  ChipImage image;
  image.bytes.assign(arena_bytes(rank), 0);
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> binaries;
  for (const std::string& key : code.binaries) {
    const std::vector<std::uint8_t> binary = tpc::kernel_binary(key, code.generation);
    binaries.push_back(at.arena + offset);
    std::copy(binary.begin(), binary.end(), image.bytes.begin() + static_cast<long>(offset));
    offset += (binary.size() + kBinaryAlign - 1) / kBinaryAlign * kBinaryAlign;
  }
  const std::uint64_t descriptors = at.arena + offset;
  const std::uint64_t wqes = descriptors + code.slices.size() * dma::kDescriptorBytes;
  const std::uint32_t add_one = chip::spec::encode_sob_write({1, true, false});
  const std::uint32_t zero = chip::spec::encode_sob_write({0, false, false});
  for (const SliceSpec& s : code.slices) {
    dma::DmaJob job = s.job;
    job.completion = {true, chip::Chip::sob_address(at.first_sob + s.completion), add_one};
    dma::encode_descriptor(dma::register_writes(job), image.bytes.data() + offset);
    offset += dma::kDescriptorBytes;
  }
  for (const WqeSpec& w : code.wqes) {
    chip::Wqe wqe;
    wqe.qpn = w.qpn;
    wqe.local = w.local;
    wqe.remote = w.remote;
    wqe.length = w.length;
    wqe.immediate = chip::Wqe::kSobValid |
                    (placements[static_cast<std::size_t>(w.peer)].first_sob + w.peer_signal);
    wqe.completion = chip::Wqe::kSobValid | (at.first_sob + w.completion);
    wqe.encode(image.bytes.data() + offset);
    offset += chip::Wqe::kBytes;
  }
  chip::spec::PacketCodec codec;
  chip::spec::Packet msg("MSG_LONG"), fence("FENCE");
  fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
  const std::size_t value = msg.index_of("value"), addr = msg.index_of("addr");
  std::vector<std::uint8_t> packets;
  image.buffers.resize(code.queues.size());
  for (std::size_t h = 0; h < code.queues.size(); ++h) {
    std::uint64_t start = offset;
    auto close = [&] {
      if (offset > start) {
        image.buffers[h].push_back({at.arena + start, static_cast<std::uint32_t>(offset - start)});
      }
      start = offset;
    };
    for (const Op& op : code.queues[h]) {
      packets.clear();
      switch (op.kind) {
        case OpKind::kWait: {
          const std::uint32_t global = at.first_sob + op.sob;
          msg.set(addr, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(chip::Chip::sync_manager_of(global),
                                                             at.monitor + h));
          msg.set(value, chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                             chip::Chip::sob_index(global), op.value,
                             chip::spec::MonitorOp::kGreaterOrEqual)));
          codec.encode(msg, packets);
          codec.encode(fence, packets);
          break;
        }
        case OpKind::kWrite:
          msg.set(addr, PODSIM_GAUDI1_NIC_DOORBELL_BASE + chip::NicDoorbell::kPost);
          msg.set(value,
                  index_from(wqes + op.index * chip::Wqe::kBytes, at.wqe_base, chip::Wqe::kBytes));
          codec.encode(msg, packets);
          break;
        case OpKind::kSlice:
          msg.set(addr, chip::Chip::dma_core_base(op.engine) + dma::regs::kExtDescPost);
          msg.set(value, index_from(descriptors + op.index * dma::kDescriptorBytes, at.desc_base,
                                    dma::kDescriptorBytes));
          codec.encode(msg, packets);
          break;
        case OpKind::kAdd:
        case OpKind::kClear:
          msg.set(addr, chip::Chip::sob_address(at.first_sob + op.sob));
          msg.set(value, op.kind == OpKind::kAdd ? add_one : zero);
          codec.encode(msg, packets);
          break;
        case OpKind::kKernel: {
          const KernelSpec& k = code.kernels[op.index];
          encode_kernel(k, binaries[static_cast<std::size_t>(k.binary)],
                        chip::Chip::sob_address(at.first_sob + k.completion), packets);
          if (packets.size() != op.value) throw std::logic_error("a kernel's packets changed size");
          break;
        }
      }
      if (offset + packets.size() - start > g.max_buffer) close();
      std::copy(packets.begin(), packets.end(), image.bytes.begin() + static_cast<long>(offset));
      offset += packets.size();
    }
    close();
  }
  return image;
}

}  // namespace podsim::collectives
