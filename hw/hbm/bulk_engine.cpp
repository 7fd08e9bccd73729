#include "hw/hbm/bulk_engine.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "core/config_tree.h"

namespace podsim::hbm {

BulkEngine::BulkEngine(const HbmConfig& config, Evaluation evaluation)
    : config_(core::validate_config(config)),
      decoder_(config.geometry, config.address_map),
      pcs_(static_cast<std::size_t>(config.geometry.pc_count()), PseudoChannelState(config)),
      stats_(static_cast<std::size_t>(config.geometry.channel_count())),
      tck_ps_(config.timing.tck.ps),
      burst_bytes_(config.geometry.burst_bytes()),
      rotation_period_(decoder_.rotation_period()) {
  if (evaluation == Evaluation::kPerBurst || !pcs_[0].rotation_closed_form(rotation_period_)) {
    rotation_period_ = 0;
  }
}

core::TimePs BulkEngine::access(bool write, std::uint64_t address, std::uint64_t length,
                                core::TimePs arrival) {
  const Cycle start =
      (static_cast<Cycle>(arrival) + tck_ps_ - 1) / tck_ps_ + config_.controller.frontend_cycles;
  Cycle done = start;
  const std::uint64_t chunk = decoder_.chunk_bytes();
  const std::uint64_t end = address + length;
  std::uint64_t chunk_start = address - address % chunk;
  Location base = decoder_.decode(chunk_start);
  for (std::uint64_t a = address; a < end; chunk_start += chunk, a = chunk_start) {
    if (a != address) decoder_.advance_chunk(base);
    const std::uint64_t stop = std::min(end, chunk_start + chunk);
    const std::uint64_t first = (a - chunk_start) >> decoder_.burst_shift();
    const std::uint64_t last = (stop - 1 - chunk_start) >> decoder_.burst_shift();
    ChannelStats& s = stats_[static_cast<std::size_t>(base.channel_index)];
    (write ? s.bytes_written : s.bytes_read).add(stop - a);
    const Cycle end_of_chunk = run_chunk(base, first, last - first + 1, write, start);
    if (observer_) {
      observer_(base.channel_index, write, stop - a, static_cast<core::TimePs>(start * tck_ps_),
                static_cast<core::TimePs>(end_of_chunk * tck_ps_));
    }
    done = std::max(done, end_of_chunk);
  }
  return static_cast<core::TimePs>(done * tck_ps_);
}

// A chunk's first round of bursts (one per bank group it rotates over), each by every rule; the
// rest in closed form when the map and timing allow it, else each by every rule too.
Cycle BulkEngine::run_chunk(const Location& base, std::uint64_t first, std::uint64_t count,
                            bool write, Cycle arrival) {
  PseudoChannelState& pc = pcs_[static_cast<std::size_t>(base.unit)];
  ChannelStats& stats = stats_[static_cast<std::size_t>(base.channel_index)];
  refresh_if_due(pc, stats, std::max(arrival, pc.last_column()));
  const auto period = static_cast<std::uint64_t>(rotation_period_);
  const std::uint64_t round = period > 0 ? std::min(count, period) : count;
  std::array<int, AddressDecoder::kMaxRotation> banks{};
  Cycle end = run_bursts(pc, base, first, round, write, arrival, banks.data(), stats);
  if (round < count) {
    end = pc.column_rotation(banks.data(), rotation_period_, count - round, write);
    stats.row_hits.add(count - round);
  }
  (write ? stats.writes : stats.reads).add(count);
  stats.busy_ps.add(count * static_cast<std::uint64_t>(pc.burst_cycles() * tck_ps_));
  return end;
}

// Bursts in address order, each at the earliest cycle its rules allow; a burst whose bank has
// another row (or none) open first precharges and activates it. Row commands may fall before
// earlier bursts' data: HBM's row and column commands travel on separate buses.
Cycle BulkEngine::run_bursts(PseudoChannelState& pc, const Location& base, std::uint64_t first,
                             std::uint64_t count, bool write, Cycle arrival, int* banks,
                             ChannelStats& stats) {
  Cycle end = arrival;
  for (std::uint64_t i = 0; i < count; ++i) {
    const AddressDecoder::ChunkStep& step = decoder_.chunk_step(first + i);
    const int bank = pc.bank_index(base.bank_group + step.bank_group, base.bank + step.bank);
    if (i < AddressDecoder::kMaxRotation) banks[i] = bank;
    const std::int64_t open = pc.open_row(bank);
    if (open != base.row) {
      if (open != PseudoChannelState::kClosed) {
        pc.precharge(bank, pc.earliest_precharge(bank, arrival));
        stats.row_conflicts.add();
      } else {
        stats.row_misses.add();
      }
      pc.activate(bank, base.row, pc.earliest_activate(bank, arrival));
    } else {
      stats.row_hits.add();
    }
    end = pc.column(bank, write, pc.earliest_column(bank, write, arrival));
  }
  return end;
}

// Refreshes that fell due before `now`: the first closes the open rows and waits for them; a
// pseudo-channel idle for several intervals refreshed at each, which only the count and the
// last one's tRFC still show.
void BulkEngine::refresh_if_due(PseudoChannelState& pc, ChannelStats& stats, Cycle now) {
  const Cycle refi = pc.timing().refi;
  if (pc.refresh_due() > now) return;
  const Cycle due = pc.refresh_due();
  close_all(pc, due);
  pc.refresh(pc.earliest_refresh(due));
  const Cycle later = (now - due) / refi;  // further intervals that ended while idle
  if (later > 0) pc.refresh(due + later * refi);
  stats.refreshes.add(static_cast<std::uint64_t>(later + 1));
  pc.set_refresh_due(due + (later + 1) * refi);
}

void BulkEngine::close_all(PseudoChannelState& pc, Cycle from) {
  for (int bank = 0; bank < pc.bank_count(); ++bank) {
    if (pc.open_row(bank) != PseudoChannelState::kClosed) {
      pc.precharge(bank, pc.earliest_precharge(bank, from));
    }
  }
}

namespace {

core::Bandwidth stream_rate(const HbmConfig& config, bool write) {
  constexpr std::uint64_t kStream = 16ull << 20;  // four refresh intervals of HBM2E and more
  constexpr std::uint64_t kTransaction = 1ull << 20;
  BulkEngine engine(config);
  core::TimePs done = 0;
  for (std::uint64_t at = 0; at < kStream; at += kTransaction) {
    done = std::max(done, engine.access(write, at, kTransaction, 0));
  }
  return core::Bandwidth{static_cast<double>(kStream) * 8 / (static_cast<double>(done) * 1e-12)};
}

StreamTiming measure(const HbmConfig& config) {
  BulkEngine idle(config);
  const core::TimePs first = idle.access(false, 0, 64, 0);
  return StreamTiming{stream_rate(config, false), stream_rate(config, true),
                      core::Duration{static_cast<std::int64_t>(first)}};
}

}  // namespace

StreamTiming stream_timing(const HbmConfig& config) {
  static std::map<std::string, StreamTiming> measured;
  std::string key = core::print_config(config, core::ConfigNode::null({}));
  const auto found = measured.find(key);
  if (found != measured.end()) return found->second;
  return measured.emplace(std::move(key), measure(config)).first->second;
}

}  // namespace podsim::hbm
