#include "sims/net_workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/kernel.h"
#include "core/random.h"

namespace podsim::sims {
namespace {

constexpr std::uint64_t kMaxMessage = 1ull << 30;  // split larger flows into 1 GiB WRITEs

// The ports a flow from chip a to chip b uses: the direct in-box link when both sit in one
// all-to-all box, else each chip's scale-out port on the rail.
std::pair<int, int> ports_between(int a, int b, int rail, const system::Topology& t,
                                  const system::SystemConfig& s) {
  if (!system::directly_linked(s, a, b) && s.network.kind != system::NetworkKind::kNone &&
      (rail < 0 || rail >= s.scale_out.ports_per_chip)) {
    throw std::invalid_argument(fmt::format("--rail {}: the chips have {} scale-out ports", rail,
                                            s.scale_out.ports_per_chip));
  }
  return system::ports_between(t, s, a, b, system::directly_linked(s, a, b) ? 0 : rail);
}

// A seeded permutation with no fixed point, so every chip sends to another.
std::vector<int> derangement(int n, std::uint64_t seed) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  core::Random random(seed);
  for (int i = n - 1; i > 0; --i) {
    std::swap(order[static_cast<std::size_t>(i)],
              order[static_cast<std::size_t>(random.next() % static_cast<std::uint64_t>(i))]);
  }
  return order;  // Sattolo's shuffle: one cycle through every element
}

}  // namespace

std::vector<FlowResult> plan_flows(const NetPlan& plan, const system::Topology& t,
                                   const system::SystemConfig& s) {
  const int n = t.chips;
  std::vector<std::pair<int, int>> pairs;
  const auto check_chip = [n](const char* flag, int chip) {
    if (chip < 0 || chip >= n) {
      throw std::invalid_argument(
          fmt::format("{} {}: the system has chips 0..{}", flag, chip, n - 1));
    }
  };
  switch (plan.pattern) {
    case NetPattern::kPair:
      check_chip("--from", plan.from);
      check_chip("--to", plan.to);
      if (plan.from == plan.to) throw std::invalid_argument("--from and --to name the same chip");
      pairs.push_back({plan.from, plan.to});
      break;
    case NetPattern::kIncast:
      if (plan.senders < 1 || plan.senders >= n) {
        throw std::invalid_argument(
            fmt::format("--senders {}: need 1..{} (chip 0 receives)", plan.senders, n - 1));
      }
      // Senders come from other boxes when there are enough, so the incast crosses the network.
      for (int i = 1; i <= plan.senders; ++i) {
        pairs.push_back({s.boxes > plan.senders ? i * s.box.chips : i, 0});
      }
      break;
    case NetPattern::kPermutation: {
      if (n < 2) throw std::invalid_argument("a permutation needs at least 2 chips");
      const auto to = derangement(n, plan.seed);
      for (int i = 0; i < n; ++i) pairs.push_back({i, to[static_cast<std::size_t>(i)]});
      break;
    }
    case NetPattern::kAllToAll:
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          if (i != j) pairs.push_back({i, j});
        }
      }
      break;
  }
  if (plan.iters > 0 && plan.bytes > kMaxMessage) {
    throw std::invalid_argument(fmt::format("--bytes {}: with --iters each message is at most 1GiB",
                                            core::to_string(core::ByteSize{plan.bytes})));
  }
  std::vector<std::uint32_t> sent(static_cast<std::size_t>(n)),
      received(static_cast<std::size_t>(n));
  std::vector<FlowResult> flows;
  for (const auto& [a, b] : pairs) {
    FlowResult f;
    f.src_chip = a;
    f.dst_chip = b;
    std::tie(f.src_port, f.dst_port) = ports_between(a, b, plan.rail, t, s);
    f.bytes = plan.bytes;
    f.src_slot = sent[static_cast<std::size_t>(a)]++;
    f.dst_slot = received[static_cast<std::size_t>(b)]++;
    flows.push_back(f);
  }
  // Each chip sends from the lower half of its memory and receives into the upper half.
  const std::uint64_t half = chip::memory_config(s.chip, false).size.bytes / 2;
  const std::uint32_t most = std::max(*std::max_element(sent.begin(), sent.end()),
                                      *std::max_element(received.begin(), received.end()));
  if (plan.bytes > half / most) {
    throw std::invalid_argument(fmt::format(
        "--bytes {}: a chip sends or receives {} flow{} of that size, more than the {} bytes of "
        "each half of its memory (one for sending, one for receiving)",
        core::to_string(core::ByteSize{plan.bytes}), most, most == 1 ? "" : "s", half));
  }
  return flows;
}

NetWorkload::NetWorkload(sc_core::sc_module_name name, system::SystemModel& model,
                         const NetPlan& plan, std::vector<FlowResult> flows,
                         std::function<void(double)> progress, std::function<bool(int)> local)
    : sc_module(name),
      model_(model),
      plan_(plan),
      flows_(std::move(flows)),
      progress_(std::move(progress)),
      local_(std::move(local)) {
  SC_THREAD(run);
}

std::uint64_t NetWorkload::src_address(std::size_t flow) const {
  return model_.chip(flows_[flow].src_chip).memory_base() +
         std::uint64_t{flows_[flow].src_slot} * plan_.bytes;
}

std::uint64_t NetWorkload::dst_address(std::size_t flow) const {
  const chip::Chip& dst = model_.chip(flows_[flow].dst_chip);
  return dst.memory_base() + dst.memory_size() / 2 +
         std::uint64_t{flows_[flow].dst_slot} * plan_.bytes;
}

template <class Visit>
void NetWorkload::for_each_chunk(std::size_t flow, Visit visit) const {
  constexpr std::uint64_t kChunk = 1 << 20;
  std::vector<std::uint8_t> chunk(std::min(kChunk, plan_.bytes));
  core::Random random(plan_.seed * 1000003 + flow);
  for (std::uint64_t offset = 0; offset < plan_.bytes; offset += kChunk) {
    const std::uint64_t len = std::min(kChunk, plan_.bytes - offset);
    for (std::uint64_t i = 0; i < len; ++i) chunk[i] = static_cast<std::uint8_t>(random.next());
    visit(offset, chunk.data(), len);
  }
}

void NetWorkload::run() {
  if (model_.functional()) fill_sources();
  if (plan_.pattern == NetPattern::kPair && plan_.iters > 0) {
    run_latency();
  } else {
    run_bulk();
  }
  finished_ = true;
}

void NetWorkload::fill_sources() {
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (!local(flows_[f].src_chip)) continue;
    chip::Chip& src = model_.chip(flows_[f].src_chip);
    for_each_chunk(f, [&](std::uint64_t offset, const std::uint8_t* data, std::uint64_t len) {
      src.debug_write(src_address(f) + offset, data, len);
    });
  }
}

void NetWorkload::check_destinations() {
  if (!model_.functional()) return;
  std::vector<std::uint8_t> got;
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    if (!local(flows_[f].dst_chip)) continue;
    chip::Chip& dst = model_.chip(flows_[f].dst_chip);
    for_each_chunk(f, [&](std::uint64_t offset, const std::uint8_t* expected, std::uint64_t len) {
      got.resize(len);
      dst.debug_read(dst_address(f) + offset, got.data(), len);
      for (std::uint64_t i = 0; i < len; ++i) flows_[f].wrong_bytes += got[i] != expected[i];
    });
  }
}

roce::CompletionQueue& NetWorkload::new_cq() {
  cqs_.push_back(std::make_unique<roce::CompletionQueue>());
  return *cqs_.back();
}

// A connected QP pair for the flow; returns the sender's QPN. Only the sender's completions
// matter: plain WRITEs complete nothing at the receiver.
std::uint32_t NetWorkload::open_qp(const FlowResult& flow, roce::CompletionQueue& send_cq) {
  auto& src = model_.nic(flow.src_chip);
  auto& dst = model_.nic(flow.dst_chip);
  const auto sqpn = src.create_qp(flow.src_port, send_cq, idle_cq_);
  const auto dqpn = dst.create_qp(flow.dst_port, idle_cq_, idle_cq_);
  src.connect_qp(sqpn, model_.address(flow.dst_chip, flow.dst_port), dqpn);
  dst.connect_qp(dqpn, model_.address(flow.src_chip, flow.src_port), sqpn);
  return sqpn;
}

void NetWorkload::on_completion(std::size_t f, const roce::Completion& c) {
  flows_[f].end_ps = core::now_ps();
  flows_[f].ok = flows_[f].ok && c.status == roce::CompletionStatus::kSuccess;
  if (--pending_ == 0) core::notify_now(all_done_);
  if (progress_) progress_(1.0 - static_cast<double>(pending_) / static_cast<double>(posted_));
}

void NetWorkload::run_bulk() {
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    auto& flow = flows_[f];
    auto& src = model_.nic(flow.src_chip);
    auto& cq = new_cq();
    std::uint64_t per_qp = (flow.bytes + static_cast<std::uint64_t>(plan_.qps) - 1) / plan_.qps;
    std::uint64_t offset = 0;
    flow.start_ps = core::now_ps();
    flow.ok = true;
    const bool posts = local(flow.src_chip);
    for (int q = 0; q < plan_.qps && offset < flow.bytes; ++q) {
      const auto sqpn = open_qp(flow, cq);
      if (!posts) {
        offset += std::min(per_qp, flow.bytes - offset);
        continue;
      }
      for (std::uint64_t left = std::min(per_qp, flow.bytes - offset); left > 0;) {
        const std::uint64_t len = std::min(left, kMaxMessage);
        roce::SendRequest wr;
        wr.wr_id = f;
        wr.opcode = roce::SendOpcode::kWrite;
        wr.local_address = src_address(f) + offset;
        wr.remote_address = dst_address(f) + offset;
        wr.length = len;
        src.post_send(sqpn, wr);
        ++pending_;
        ++posted_;
        offset += len;
        left -= len;
      }
    }
    cq.set_callback([this, f](const roce::Completion& c) { on_completion(f, c); });
  }
  if (pending_ > 0) wait(all_done_);
}

void NetWorkload::run_latency() {
  auto& flow = flows_.front();
  auto& src = model_.nic(flow.src_chip);
  auto& cq = new_cq();
  const auto sqpn = open_qp(flow, cq);
  if (!local(flow.src_chip)) return;
  flow.start_ps = core::now_ps();
  flow.ok = true;
  for (int i = 0; i < plan_.iters; ++i) {
    roce::SendRequest wr;
    wr.wr_id = static_cast<std::uint64_t>(i);
    wr.local_address = src_address(0);
    wr.remote_address = dst_address(0);
    wr.length = plan_.bytes;
    const core::TimePs posted = core::now_ps();
    src.post_send(sqpn, wr);
    while (cq.size() == 0) wait(cq.event());
    const auto c = *cq.poll();
    flow.ok = flow.ok && c.status == roce::CompletionStatus::kSuccess;
    latencies_.push_back(core::now_ps() - posted);
    if (progress_) progress_(static_cast<double>(i + 1) / plan_.iters);
  }
  flow.end_ps = core::now_ps();
}

}  // namespace podsim::sims
