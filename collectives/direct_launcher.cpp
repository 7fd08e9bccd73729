#include "collectives/direct_launcher.h"

#include <fmt/format.h>

#include <boost/container/small_vector.hpp>
#include <deque>
#include <stdexcept>
#include <utility>

#include "collectives/job_order.h"
#include "collectives/rank_notices.h"
#include "core/kernel.h"
#include "core/numeric.h"
#include "hw/chip/chip.h"
#include "hw/roce/nic.h"

namespace podsim::collectives {

namespace {

constexpr std::uint32_t kNone = Command::kNone;
constexpr std::uint32_t kSignalMask = (1u << DirectLauncher::kSignalBits) - 1;

std::uint64_t job_bytes(const Job& job) { return job.count * core::size_of(job.type); }

// A read and a write, each through the NoC to the chip's memory.
core::TimePs job_latency_ps(const chip::Chip& c) {
  const core::TimePs noc = c.config().noc.latency.ps;
  const core::TimePs memory = chip::memory_config(c.config(), false).latency.ps;
  return 2 * (noc + memory);
}

}  // namespace

// What a launcher keeps per chip: the completion queues of the QPs it made, and the engines.
struct DirectLauncher::ChipSide {
  roce::CompletionQueue send_cq, recv_cq;
  EngineTimer engines;
  explicit ChipSide(const chip::Chip& c)
      : engines(c.collective_engines(), c.config().dma.engine.bandwidth.bits_per_second / 8,
                job_latency_ps(c),
                c.config().dma.engine.burst.bytes *
                    static_cast<std::uint64_t>(c.config().dma.engine.outstanding)) {}
};

// A write awaiting its acknowledgement, a job its end, or a stream the end of the job before it.
struct DirectLauncher::Pending {
  enum class Kind : std::uint8_t { kStart, kWrite, kJob, kResume } kind = Kind::kWrite;
  std::uint32_t run = 0;  // Run::id
  int rank = 0;
  std::uint32_t signal = kNone;  // raised at the end (kWrite, kJob); kResume: the stream
  Job job;                       // kJob in a functional system
};

struct DirectLauncher::Run {
  struct Stream {
    std::uint32_t next = 0;
    bool has_job = false;
    JobRanges last{};
    core::TimePs last_end = 0;
  };
  struct Rank {
    int chip = 0;
    Program program;
    // A signal's count beside the streams waiting on it (in the order they came): one miss.
    struct Signal {
      std::uint32_t count = 0;
      boost::container::small_vector<std::uint32_t, 3> waiting;
    };
    std::vector<Signal> signals;
    std::vector<Stream> streams;
    std::uint32_t streams_left = 0;
    std::uint64_t open = 0;           // writes unacknowledged, jobs not ended
    std::uint64_t arrivals_left = 0;  // writes of peers not yet landed here
    bool finished = false, ok = true;
  };
  std::uint32_t id = 0;
  std::vector<Rank> ranks;
  std::unordered_map<int, int> rank_of_chip;
  RankDone done;
  int left = 0;               // ranks whose notices have not come
  std::uint64_t channel = 0;  // of the ranks' host notices
  core::TimePs notice_ps = 0;
  std::deque<std::pair<int, std::uint32_t>> ready;  // (rank, stream) to try
};

DirectLauncher::DirectLauncher(system::SystemModel& model)
    : model_(model), queue_(core::event_queue()) {
  chips_.resize(static_cast<std::size_t>(model.chips()));
  runs_.resize(kSlots);
}

DirectLauncher::~DirectLauncher() = default;

DirectLauncher::ChipSide& DirectLauncher::side(int chip) {
  auto& side = chips_.at(static_cast<std::size_t>(chip));
  if (!side) {
    side = std::make_unique<ChipSide>(model_.chip(chip));
    side->send_cq.set_callback([this](const roce::Completion& c) { on_send(c); });
    side->recv_cq.set_callback([this, chip](const roce::Completion& c) { on_receive(chip, c); });
  }
  return *side;
}

std::uint32_t DirectLauncher::create_qp(int chip, int port) {
  ChipSide& s = side(chip);
  roce::Nic& nic = model_.nic(chip);
  const std::uint32_t qpn = nic.create_qp(port, s.send_cq, s.recv_cq);
  // One receive per arriving immediate, each replaced as soon as its completion comes; the NIC
  // takes them one message at a time, so a few suffice (a shortfall would fail the write).
  constexpr int kPostedReceives = 64;
  for (int i = 0; i < kPostedReceives; ++i) nic.post_recv(qpn, roce::RecvRequest{});
  return qpn;
}

void DirectLauncher::validate(const std::vector<int>& chips, const std::vector<Program>& programs,
                              const PeerOf& peer_of, int system_chips) {
  if (chips.size() != programs.size() || chips.empty()) {
    throw std::invalid_argument("direct launch: one chip per program, at least one");
  }
  for (std::size_t r = 0; r < programs.size(); ++r) {
    const Program& p = programs[r];
    if (chips[r] < 0 || chips[r] >= system_chips) {
      throw std::invalid_argument(fmt::format("direct launch: rank {}: no chip {}", r, chips[r]));
    }
    if (p.signals > kSignalMask) {
      throw std::invalid_argument(fmt::format("direct launch: rank {} uses {} signals (at most {})",
                                              r, p.signals, kSignalMask));
    }
    for (std::size_t s = 0; s < p.streams.size(); ++s) {
      for (const Command& c : p.streams[s]) {
        const auto where = [&] { return fmt::format("direct launch: rank {} stream {}", r, s); };
        if ((c.wait != kNone && c.wait >= p.signals) || (c.done != kNone && c.done >= p.signals)) {
          throw std::invalid_argument(where() + ": a signal out of range");
        }
        if (c.kind != Command::Kind::kWrite) continue;
        const int peer = peer_of(static_cast<int>(r), c.qpn);
        if (peer < 0 || peer >= static_cast<int>(programs.size()) ||
            c.remote_signal >= programs[static_cast<std::size_t>(peer)].signals) {
          throw std::invalid_argument(where() + fmt::format(": QP {} or remote signal {} leads "
                                                            "nowhere",
                                                            c.qpn, c.remote_signal));
        }
        if (c.bytes == 0) throw std::invalid_argument(where() + ": a write of no bytes");
      }
    }
  }
}

void DirectLauncher::launch(std::vector<int> chips, std::vector<Program> programs,
                            const PeerOf& peer_of, RankDone rank_done, core::TimePs start_delay_ps,
                            core::TimePs notice_ps) {
  validate(chips, programs, peer_of, model_.chips());
  std::uint32_t slot = next_slot_;
  while (runs_[slot % kSlots]) {
    if (++slot == next_slot_ + kSlots) {
      throw std::invalid_argument(
          fmt::format("direct launch: more than {} collectives at once", kSlots));
    }
  }
  auto run = std::make_unique<Run>();
  run->id = slot;
  next_slot_ = slot + 1;
  run->done = std::move(rank_done);
  run->left = static_cast<int>(programs.size());
  run->notice_ps = notice_ps;
  Run* raw = run.get();  // alive until its last rank's notice has been handled
  run->channel = open_rank_channel(
      model_.notices(),
      [this, raw](int rank, bool ok, core::TimePs end) { rank_noticed(*raw, rank, ok, end); });
  run->ranks.resize(programs.size());
  for (std::size_t r = 0; r < programs.size(); ++r) {
    Run::Rank& rank = run->ranks[r];
    rank.chip = chips[r];
    run->rank_of_chip[chips[r]] = static_cast<int>(r);
    rank.signals.resize(programs[r].signals);
    rank.streams.resize(programs[r].streams.size());
    rank.streams_left = static_cast<std::uint32_t>(programs[r].streams.size());
    for (const auto& stream : programs[r].streams) {
      for (const Command& c : stream) {
        if (c.kind != Command::Kind::kWrite) continue;
        ++run->ranks[static_cast<std::size_t>(peer_of(static_cast<int>(r), c.qpn))].arrivals_left;
      }
    }
  }
  for (std::size_t r = 0; r < programs.size(); ++r) {
    run->ranks[r].program = std::move(programs[r]);
  }
  runs_[slot % kSlots] = std::move(run);
  ++running_;
  Pending start;
  start.kind = Pending::Kind::kStart;
  start.run = slot;
  queue_.schedule(core::now_ps() + start_delay_ps, *this, take_pending(start));
}

// Every stream of every rank simulated here tries to issue; ranks with nothing to do finish.
void DirectLauncher::start(Run& run) {
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    if (!model_.simulates(run.ranks[r].chip)) continue;
    for (std::uint32_t s = 0; s < run.ranks[r].streams.size(); ++s) {
      run.ready.emplace_back(static_cast<int>(r), s);
    }
    settle(run, static_cast<int>(r));
  }
}

// Issues what stream `stream` of `rank` can issue now; the stream waits on the first command
// whose signal has not come, or on the job before when its next job touches the same bytes.
void DirectLauncher::try_stream(Run& run, int rank, std::uint32_t stream) {
  Run::Rank& k = run.ranks[static_cast<std::size_t>(rank)];
  Run::Stream& st = k.streams[stream];
  const auto& commands = k.program.streams[stream];
  while (st.next < commands.size()) {
    const Command& c = commands[st.next];
    if (c.wait != kNone && k.signals[c.wait].count < c.wait_count) {
      auto& list = k.signals[c.wait].waiting;
      if (std::find(list.begin(), list.end(), stream) == list.end()) list.push_back(stream);
      return;
    }
    if (!issue(run, rank, stream, c)) {
      return;
    }
    ++st.next;
  }
  if (k.streams_left > 0 && st.next == commands.size()) {
    --k.streams_left;
    st.next = static_cast<std::uint32_t>(commands.size()) + 1;  // counted once
  }
}

std::uint32_t DirectLauncher::take_pending(const Pending& p) {
  if (free_pending_.empty()) {
    pending_.push_back(p);
    return static_cast<std::uint32_t>(pending_.size() - 1);
  }
  const std::uint32_t token = free_pending_.back();
  free_pending_.pop_back();
  pending_[token] = p;
  return token;
}

bool DirectLauncher::issue(Run& run, int rank, std::uint32_t stream, const Command& c) {
  Run::Rank& k = run.ranks[static_cast<std::size_t>(rank)];
  switch (c.kind) {
    case Command::Kind::kWait:
      if (c.done != kNone) raise(run, rank, c.done);
      return true;
    case Command::Kind::kWrite: {
      Pending p;
      p.kind = Pending::Kind::kWrite;
      p.run = run.id;
      p.rank = rank;
      p.signal = c.done;
      roce::SendRequest w;
      w.wr_id = take_pending(p);
      w.opcode = roce::SendOpcode::kWriteWithImmediate;
      w.local_address = c.src;
      w.remote_address = c.dst;
      w.length = c.bytes;
      w.immediate = (run.id % kSlots) << kSignalBits | c.remote_signal;
      ++k.open;
      model_.nic(k.chip).post_send(c.qpn, w);
      return true;
    }
    case Command::Kind::kReduce:
    case Command::Kind::kCopy:
      break;
  }
  // A job: after the stream's job before it when they touch the same bytes; one of no bytes is
  // done at once (as the compiler makes it: an uneven cut's empty share).
  if (c.bytes == 0) {
    if (c.done != kNone) raise(run, rank, c.done);
    return true;
  }
  Run::Stream& st = k.streams[stream];
  EngineTimer& engines = side(k.chip).engines;
  const JobRanges ranges{
      c.dst, c.src, c.b, c.bytes, c.kind == Command::Kind::kReduce, engines.slices(c.bytes), false};
  const core::TimePs now = core::now_ps();
  if (st.has_job && st.last_end > now && !independent(st.last, ranges)) {
    Pending p;
    p.kind = Pending::Kind::kResume;
    p.run = run.id;
    p.rank = rank;
    p.signal = stream;
    const std::uint32_t token = take_pending(p);
    // The entry as `hot`: a hint only, gone stale if pending_ grows before the callback.
    queue_.schedule(st.last_end, *this, token, &pending_[token]);
    return false;
  }
  issue_job(run, rank, stream, c);
  st.has_job = true;
  st.last = ranges;
  return true;
}

void DirectLauncher::issue_job(Run& run, int rank, std::uint32_t stream, const Command& c) {
  Run::Rank& k = run.ranks[static_cast<std::size_t>(rank)];
  Pending p;
  p.kind = Pending::Kind::kJob;
  p.run = run.id;
  p.rank = rank;
  p.signal = c.done;
  p.job = c.job();
  const core::TimePs end =
      side(k.chip).engines.book(core::now_ps(), c.bytes, static_cast<int>(stream));
  k.streams[stream].last_end = end;
  ++k.open;
  const std::uint32_t token = take_pending(p);
  queue_.schedule(end, *this, token, &pending_[token]);
}

void DirectLauncher::raise(Run& run, int rank, std::uint32_t signal) {
  Run::Rank& k = run.ranks[static_cast<std::size_t>(rank)];
  Run::Rank::Signal& s = k.signals[signal];
  ++s.count;
  for (const std::uint32_t stream : s.waiting) run.ready.emplace_back(rank, stream);
  s.waiting.clear();
}

// Tries the streams made ready, then reports the ranks among those touched that have finished
// everything; frees the run once all have.
void DirectLauncher::settle(Run& run, int rank) {
  boost::container::small_vector<int, 8> touched{rank};
  while (!run.ready.empty()) {
    const auto [r, s] = run.ready.front();
    run.ready.pop_front();
    try_stream(run, r, s);
    if (touched.back() != r) touched.push_back(r);
  }
  for (const int r : touched) {
    Run::Rank& k = run.ranks[static_cast<std::size_t>(r)];
    if (k.finished || k.streams_left > 0 || k.open > 0 || k.arrivals_left > 0) continue;
    k.finished = true;
    post_rank_end(model_.notices(), run.channel, k.chip, r, k.ok, run.notice_ps);
  }
}

// Every host knows rank `rank` has ended; the last frees the run.
void DirectLauncher::rank_noticed(Run& run, int rank, bool ok, core::TimePs end) {
  const bool last = --run.left == 0;
  std::unique_ptr<Run> finished;  // kept until `done` has run
  if (last) {
    --running_;
    finished = std::move(runs_[run.id % kSlots]);
    model_.notices().close(run.channel);
  }
  if (run.done) run.done(rank, ok, end);
}

void DirectLauncher::fire(std::uint32_t token) {
  const Pending p = pending_[token];
  free_pending_.push_back(token);
  auto& slot = runs_[p.run % kSlots];
  if (!slot || slot->id != p.run) return;
  Run& run = *slot;
  Run::Rank& k = run.ranks[static_cast<std::size_t>(p.rank)];
  if (p.kind == Pending::Kind::kStart) return start(run);
  if (p.kind == Pending::Kind::kResume) {
    run.ready.emplace_back(p.rank, p.signal);
  } else {
    if (model_.functional()) run_job_bytes(k.chip, p.job);
    --k.open;
    if (p.signal != kNone) raise(run, p.rank, p.signal);
  }
  settle(run, p.rank);
}

// A job's end or a stream's resumption, a few callbacks ahead (core::Timed::prefetch): the rank,
// then the signal it raises or the stream it resumes, then the streams waiting on that signal,
// then their next commands. Runs are few and stay cached; ranks, signals and commands do not.
void DirectLauncher::prefetch(std::uint32_t token, const void* /*hot*/, int stage) const {
  if (token >= pending_.size()) return;
  const Pending& p = pending_[token];
  const auto& slot = runs_[p.run % kSlots];
  if (p.kind == Pending::Kind::kStart || !slot || slot->id != p.run) return;
  const Run::Rank& k = slot->ranks[static_cast<std::size_t>(p.rank)];
  if (stage == 1) return __builtin_prefetch(&k);
  const auto prefetch_stream = [&](std::uint32_t s, bool command) {
    if (s >= k.streams.size()) return;
    if (!command) {
      __builtin_prefetch(&k.streams[s]);
      return __builtin_prefetch(&k.program.streams[s]);
    }
    const auto& commands = k.program.streams[s];
    if (k.streams[s].next < commands.size()) __builtin_prefetch(&commands[k.streams[s].next]);
  };
  if (p.kind == Pending::Kind::kResume) {
    if (stage == 2) prefetch_stream(p.signal, false);
    if (stage == 3) prefetch_stream(p.signal, true);
    return;
  }
  if (p.signal == kNone || p.signal >= k.signals.size()) return;
  const Run::Rank::Signal& signal = k.signals[p.signal];
  if (stage == 2) return __builtin_prefetch(&signal);
  for (const std::uint32_t s : signal.waiting) prefetch_stream(s, stage == 4);
}

void DirectLauncher::on_send(const roce::Completion& c) {
  const Pending p = pending_[static_cast<std::uint32_t>(c.wr_id)];
  free_pending_.push_back(static_cast<std::uint32_t>(c.wr_id));
  auto& slot = runs_[p.run % kSlots];
  if (!slot || slot->id != p.run) return;
  Run& run = *slot;
  Run::Rank& k = run.ranks[static_cast<std::size_t>(p.rank)];
  --k.open;
  if (c.status != roce::CompletionStatus::kSuccess) {
    k.ok = false;
  } else if (p.signal != kNone) {
    raise(run, p.rank, p.signal);
  }
  settle(run, p.rank);
}

void DirectLauncher::on_receive(int chip, const roce::Completion& c) {
  if (c.status != roce::CompletionStatus::kSuccess || !c.has_immediate) return;
  model_.nic(chip).post_recv(c.qpn, roce::RecvRequest{});
  auto& slot = runs_[c.immediate >> kSignalBits];
  if (!slot) return;
  Run& run = *slot;
  const auto it = run.rank_of_chip.find(chip);
  if (it == run.rank_of_chip.end()) return;
  --run.ranks[static_cast<std::size_t>(it->second)].arrivals_left;
  raise(run, it->second, c.immediate & kSignalMask);
  settle(run, it->second);
}

// dst = a op b (or a, for a copy) in the chip's memory.
void DirectLauncher::run_job_bytes(int chip, const Job& job) {
  chip::Chip& c = model_.chip(chip);
  const std::uint64_t bytes = job_bytes(job);
  scratch_a_.resize(bytes);
  c.debug_read(job.a, scratch_a_.data(), bytes);
  if (job.kind == Job::Kind::kReduce) {
    scratch_b_.resize(bytes);
    c.debug_read(job.b, scratch_b_.data(), bytes);
    core::reduce_into(job.type, job.op, scratch_a_.data(), scratch_b_.data(), job.count);
  }
  c.debug_write(job.dst, scratch_a_.data(), bytes);
}

}  // namespace podsim::collectives
