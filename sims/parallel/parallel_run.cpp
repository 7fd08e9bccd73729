#include "sims/parallel/parallel_run.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <tlm>
#include <type_traits>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/stats.h"
#include "sims/parallel/frame_codec.h"

namespace podsim::parallel {
namespace {
static_assert(std::is_trivially_copyable<system::Notice>::value, "notices travel as bytes");
constexpr core::TimePs kNever = std::numeric_limits<core::TimePs>::max();
}  // namespace

// The side of a cut link whose frames leave this process.
class ParallelRun::Outbound : public fabric::RemoteSide {
 public:
  Outbound(ParallelRun& run, int link, int side, int to)
      : run_(run), link_(static_cast<std::uint32_t>(link)), side_(side), to_(to) {}
  void ship(fabric::Packet* packet) override {
    encode_frame(run_.outgoing_[static_cast<std::size_t>(to_)], link_, side_, *packet);
    fabric::packet_pool().release(packet);
    ++run_.frames_sent_;
  }

 private:
  ParallelRun& run_;
  std::uint32_t link_;
  int side_, to_;
};

ParallelRun::ParallelRun(const MpiSession& mpi, system::SystemModel& model, Partition partition)
    : mpi_(mpi), model_(model), partition_(std::move(partition)) {
  if (model_.flow_network()) {
    throw std::invalid_argument(
        "the flow-level network runs in one process (its solver sees every link); use "
        "--network packet under mpirun");
  }
  if (partition_.parts != mpi_.size()) {
    throw std::invalid_argument("the partition has another number of parts than processes");
  }
  if (partition_.lookahead_ps < 2) {
    throw std::invalid_argument("the cut cables' delay is too short to run in windows");
  }
  outgoing_.resize(static_cast<std::size_t>(mpi_.size()));
  model_.set_simulated([this](int chip) { return owns_chip(chip); });
  model_.notices().forward_to([this](const system::Notice& n) { notices_.push_back(n); });
  const auto& topo = model_.topology();
  for (int link : partition_.cut_links) {
    const auto& l = topo.links[static_cast<std::size_t>(link)];
    const int ends[2] = {partition_.part_of_node[static_cast<std::size_t>(l.a.node)],
                         partition_.part_of_node[static_cast<std::size_t>(l.b.node)]};
    for (int side = 0; side < 2; ++side) {
      if (ends[side] != part()) continue;
      outbound_.push_back(std::make_unique<Outbound>(*this, link, side, ends[1 - side]));
      model_.link(link).send_remote(side, *outbound_.back());
    }
  }
}

ParallelRun::~ParallelRun() {
  model_.notices().forward_to(nullptr);
  model_.set_simulated(nullptr);
}

core::TimePs ParallelRun::local_next() const {
  if (!sc_core::sc_pending_activity()) return kNever;
  return sc_core::sc_time_stamp().value() + sc_core::sc_time_to_pending_activity().value();
}

// Each window runs the activity before `end` - 1, where `end` is the earliest pending activity of
// any process plus the lookahead: frames sent in it arrive at `end` or later, after the kernel's
// clock, which stops at `end` - 1 at most (sc_start leaves what is due at its end pending).
void ParallelRun::run() {
  auto& quantum = tlm::tlm_global_quantum::instance();
  const sc_core::sc_time quantum_before = quantum.get();
  quantum.set(sc_core::sc_max_time());
  auto& queue = core::event_queue();
  core::TimePs next = 0;
  bool started = false;  // the first window elaborates and starts every process's threads
  while (next != kNever) {
    const core::TimePs end = next + partition_.lookahead_ps;
    // A process with nothing due in the window sits it out (the kernel warns of an idle
    // sc_start).
    if (!started || local_next() < end - 1) {
      queue.limit_to(end - 2);
      const core::TimePs now = sc_core::sc_time_stamp().value();
      sc_core::sc_start(core::to_sc_time(core::Duration{static_cast<std::int64_t>(end - 1 - now)}),
                        sc_core::SC_EXIT_ON_STARVATION);
      started = true;
    }
    ++windows_;
    const auto before = std::chrono::steady_clock::now();
    exchange();
    next = mpi_.min(local_next());
    exchange_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  }
  queue.limit_to(kNever);
  quantum.set(quantum_before);
}

// Each process's buffer: the frames for it, then the notices posted here and their count (at the
// end, so the frames need not move).
void ParallelRun::exchange() {
  const std::uint64_t count = notices_.size();
  const auto* notices = reinterpret_cast<const char*>(notices_.data());
  const auto* count_bytes = reinterpret_cast<const char*>(&count);
  for (std::size_t to = 0; to < outgoing_.size(); ++to) {
    if (static_cast<int>(to) == part()) continue;
    auto& out = outgoing_[to];
    out.insert(out.end(), notices, notices + count * sizeof(system::Notice));
    out.insert(out.end(), count_bytes, count_bytes + sizeof count);
  }
  notices_.clear();
  const auto incoming = mpi_.exchange(outgoing_);
  for (auto& buffer : outgoing_) buffer.clear();
  for (const auto& bytes : incoming) {
    if (bytes.empty()) continue;  // from this process
    std::uint64_t arrived = 0;
    if (bytes.size() < sizeof arrived)
      throw std::runtime_error("a window's hand-over is cut short");
    std::memcpy(&arrived, bytes.data() + bytes.size() - sizeof arrived, sizeof arrived);
    const std::size_t notices_bytes = arrived * sizeof(system::Notice);
    if (bytes.size() - sizeof arrived < notices_bytes) {
      throw std::runtime_error("a window's notices are cut short");
    }
    const std::size_t frames_bytes = bytes.size() - sizeof arrived - notices_bytes;
    for (std::uint64_t i = 0; i < arrived; ++i) {
      system::Notice n;
      std::memcpy(&n, bytes.data() + frames_bytes + i * sizeof n, sizeof n);
      model_.notices().deliver(n);
    }
    decode_frames(
        bytes.data(), frames_bytes, [this](std::uint32_t link, int side, fabric::Packet* p) {
          if (link >= model_.links()) {
            fabric::packet_pool().release(p);
            throw std::runtime_error("a frame from another process names no link of this system");
          }
          model_.link(static_cast<int>(link)).arrive(side, p);
        });
  }
}

void ParallelRun::gather_stats() const {
  auto& registry = core::stats_registry();
  const auto all = mpi_.gather(registry.export_raw());
  for (std::size_t r = 1; r < all.size(); ++r) registry.merge_raw(all[r]);
}

}  // namespace podsim::parallel
