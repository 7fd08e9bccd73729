#include "hw/chip/sync_manager.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "hw/chip/sync_monitor.h"

namespace podsim::chip {

namespace {

std::optional<std::uint32_t> sob_register(std::uint64_t offset) {
  return register_element(offset, PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ_OFFSET,
                          PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ_COUNT,
                          PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ_STRIDE);
}

// The monitor registers are arrays of one word per monitor with a common stride.
enum class MonitorRegister { kAddressLow, kAddressHigh, kData, kArm, kStatus };
struct MonitorArray {
  MonitorRegister kind;
  std::uint64_t offset;
};
constexpr MonitorArray kMonitorArrays[] = {
    {MonitorRegister::kAddressLow, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL_OFFSET},
    {MonitorRegister::kAddressHigh, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH_OFFSET},
    {MonitorRegister::kData, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA_OFFSET},
    {MonitorRegister::kArm, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM_OFFSET},
    {MonitorRegister::kStatus, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS_OFFSET},
};

std::optional<std::pair<MonitorRegister, std::uint32_t>> monitor_register(std::uint64_t offset) {
  for (const MonitorArray& a : kMonitorArrays) {
    if (auto i = register_element(offset, a.offset, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM_COUNT,
                                  PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM_STRIDE)) {
      return std::make_pair(a.kind, *i);
    }
  }
  return std::nullopt;
}

}  // namespace

void SyncManagerConfig::check(core::ConfigChecks& c) const {
  if (sobs % PODSIM_GAUDI1_SOBS_PER_GROUP != 0) {
    c.fail("sobs", fmt::format("must be a multiple of {} (whole monitor groups)",
                               PODSIM_GAUDI1_SOBS_PER_GROUP));
  }
}

SyncManager::SyncManager(sc_core::sc_module_name name, const SyncManagerConfig& config)
    : sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket"),
      config_(config),
      stats_(make_stats()) {
  core::validate_config(config_);
  core::event_queue();  // made during elaboration: a module cannot be added later
  sobs_.assign(config_.sobs, 0);
  monitors_.resize(config_.monitors);
  armed_by_group_.resize(config_.sobs / PODSIM_GAUDI1_SOBS_PER_GROUP);
  target_socket.register_b_transport(this, &SyncManager::b_transport);
  target_socket.register_transport_dbg(this, &SyncManager::transport_dbg);
}

SyncManager::Stats SyncManager::make_stats() {
  core::StatsGroup g(name());
  return {g.counter("sob_writes", "1", "sync object updates"),
          g.counter("monitor_arms", "1", "monitors armed"),
          g.counter("monitor_fires", "1", "monitor payload writes"),
          g.counter("errors", "1", "error events raised (rejected payload writes)")};
}

// Writes wait for their time in pending_; reads see the state now.
void SyncManager::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const core::TimePs at = core::now_ps() + delay.value();
  const auto bad = serve_registers(
      trans, kRegisterSpan, [this](std::uint64_t offset) { return read_register(offset); },
      [&](std::uint64_t offset, const std::uint32_t* values, std::uint32_t count) {
        if (pending_.push(at, offset, values, count)) core::event_queue().schedule(at, *this, 0);
      });
  if (bad) {
    stats_.errors.add();
    if (error_sink_) error_sink_(core::bad_register_event(name(), trans.get_address(), *bad, at));
  }
}

// Host reads outside simulated time; writes would have to fire monitors, so they are refused.
unsigned int SyncManager::transport_dbg(tlm::tlm_generic_payload& trans) {
  if (!trans.is_read()) return 0;
  serve_registers(
      trans, kRegisterSpan, [this](std::uint64_t offset) { return read_register(offset); },
      [](std::uint64_t, const std::uint32_t*, std::uint32_t) {});
  return trans.get_response_status() == tlm::TLM_OK_RESPONSE ? trans.get_data_length() : 0;
}

void SyncManager::fire(std::uint32_t /*tag*/) {
  const core::TimePs now = core::now_ps();
  if (!pending_.armed_for(now)) return;
  pending_.apply_due(
      now, [this](std::uint64_t offset, std::uint32_t value) { write_register(offset, value); });
  if (auto next = pending_.rearm()) core::event_queue().schedule(*next, *this, 0);
}

std::uint32_t SyncManager::read_register(std::uint64_t offset) const {
  if (auto sob = sob_register(offset)) return *sob < sobs_.size() ? sobs_[*sob] : 0;
  const auto reg = monitor_register(offset);
  if (!reg || reg->second >= monitors_.size()) return 0;
  const Monitor& m = monitors_[reg->second];
  switch (reg->first) {
    case MonitorRegister::kAddressLow:
      return m.address_low;
    case MonitorRegister::kAddressHigh:
      return m.address_high;
    case MonitorRegister::kData:
      return m.data;
    case MonitorRegister::kArm:
      return m.arm_raw;
    case MonitorRegister::kStatus:
      return podsim_gaudi1_make_mon_status(m.armed, m.armed ? monitor_pending(m.arm, sobs_) : 0, 0);
  }
  return 0;
}

// Writes to registers the block does not have (or objects beyond the configured count) are
// dropped, as writes to unimplemented registers are.
void SyncManager::write_register(std::uint64_t offset, std::uint32_t value) {
  if (auto sob = sob_register(offset)) {
    if (*sob < sobs_.size()) write_sob(*sob, value);
    return;
  }
  const auto reg = monitor_register(offset);
  if (!reg || reg->second >= monitors_.size()) return;
  Monitor& m = monitors_[reg->second];
  switch (reg->first) {
    case MonitorRegister::kAddressLow:
      m.address_low = value;
      break;
    case MonitorRegister::kAddressHigh:
      m.address_high = value;
      break;
    case MonitorRegister::kData:
      m.data = value;
      break;
    case MonitorRegister::kArm:
      arm(reg->second, value);
      break;
    case MonitorRegister::kStatus:
      // Clearing the valid bit disarms the monitor: how a driver cleans monitors up.
      if ((value & PODSIM_GAUDI1_MON_STATUS_VALID_MASK) == 0 && m.armed) {
        auto& list = armed_by_group_[m.arm.group];
        list.erase(std::find(list.begin(), list.end(), reg->second));
        m.armed = false;
      }
      break;
  }
}

void SyncManager::write_sob(std::uint32_t index, std::uint32_t raw) {
  stats_.sob_writes.add();
  sobs_[index] = apply_sob_write(sobs_[index], spec::decode_sob_write(raw));
  check_group(index / PODSIM_GAUDI1_SOBS_PER_GROUP);
}

// Arming again replaces the monitor's previous arming.
void SyncManager::arm(std::uint32_t index, std::uint32_t raw) {
  Monitor& m = monitors_[index];
  const spec::MonitorArm arm = spec::decode_monitor_arm(raw);
  if (m.armed) {
    auto& old = armed_by_group_[m.arm.group];
    old.erase(std::find(old.begin(), old.end(), index));
  }
  stats_.monitor_arms.add();
  m.arm_raw = raw;
  m.arm = arm;
  m.armed = arm.group < armed_by_group_.size();
  if (!m.armed) return;  // a group beyond the configured objects never fires
  auto& list = armed_by_group_[arm.group];
  list.insert(std::lower_bound(list.begin(), list.end(), index), index);
  check_group(arm.group);
}

void SyncManager::check_group(std::uint32_t group) {
  auto& list = armed_by_group_[group];
  std::vector<std::uint32_t> met;
  for (std::uint32_t index : list) {
    if (monitor_met(monitors_[index].arm, sobs_)) met.push_back(index);
  }
  for (std::uint32_t index : met) {
    monitors_[index].armed = false;
    list.erase(std::find(list.begin(), list.end(), index));
    fire_monitor(index);
  }
}

void SyncManager::fire_monitor(std::uint32_t index) {
  const Monitor& m = monitors_[index];
  const std::uint64_t address = std::uint64_t{m.address_high} << 32 | m.address_low;
  std::uint32_t data = m.data;
  core::TimePs done = 0;
  stats_.monitor_fires.add();
  const core::TimePs at = core::now_ps() + static_cast<core::TimePs>(config_.fire_latency.ps);
  if (core::bulk_transfer(initiator_socket, trans_, tlm::TLM_WRITE_COMMAND, address,
                          reinterpret_cast<std::uint8_t*>(&data), 4, at, done)) {
    return;
  }
  stats_.errors.add();
  if (!error_sink_) return;
  core::ErrorEvent e;
  e.kind = core::ErrorEvent::Kind::kAddressError;
  e.block = name();
  e.address = address;
  e.time_ps = core::now_ps();
  e.detail = fmt::format("monitor {} payload write to {:#x} rejected", index, address);
  error_sink_(e);
}

}  // namespace podsim::chip
