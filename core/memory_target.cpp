#include "core/memory_target.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/kernel.h"

namespace podsim::core {

namespace {

bool is_power_of_two(std::uint64_t n) { return n != 0 && (n & (n - 1)) == 0; }

[[noreturn]] void reject(const char* field, const std::string& problem) {
  throw std::invalid_argument(fmt::format("MemoryTargetConfig.{} {}", field, problem));
}

const MemoryTargetConfig& validated(const MemoryTargetConfig& config) {
  config.validate();
  return config;
}

}  // namespace

void MemoryTargetConfig::validate() const {
  if (size.bytes == 0) reject("size", "must be greater than zero");
  if (!(bandwidth.bits_per_second > 0)) {
    reject("bandwidth", fmt::format("must be positive (got {})", to_string(bandwidth)));
  }
  if (latency.ps < 0) {
    reject("latency", fmt::format("must not be negative (got {})", to_string(latency)));
  }
  if (!is_power_of_two(page_size.bytes)) {
    reject("page_size", fmt::format("must be a power of two (got {})", to_string(page_size)));
  }
}

MemoryTarget::MemoryTarget(sc_core::sc_module_name name, const MemoryTargetConfig& config)
    : sc_core::sc_module(name),
      target_socket("target_socket"),
      config_(validated(config)),
      memory_(config.size.bytes, config.page_size.bytes),
      server_(config.bandwidth, config.latency),
      stats_(make_stats(StatsGroup(this->name()))) {
  target_socket.register_b_transport(this, &MemoryTarget::b_transport);
  target_socket.register_transport_dbg(this, &MemoryTarget::transport_dbg);
}

MemoryTarget::Stats MemoryTarget::make_stats(StatsGroup group) {
  return Stats{
      group.counter("reads", "transactions", "read transactions served"),
      group.counter("writes", "transactions", "write transactions served"),
      group.counter("bytes_read", "bytes", "bytes read"),
      group.counter("bytes_written", "bytes", "bytes written"),
      group.time_weighted("busy", "ratio", "fraction of time spent transferring data"),
  };
}

void MemoryTarget::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!accept(trans)) return;
  const tlm::tlm_command command = trans.get_command();
  if (command != tlm::TLM_IGNORE_COMMAND) {
    if (config_.functional && trans.get_data_ptr() != nullptr) move_data(trans);
    const TimePs now = now_ps();
    const auto grant = server_.schedule(now + delay.value(), trans.get_data_length());
    account(command, trans.get_data_length(), grant);
    delay = to_sc_time(Duration{static_cast<std::int64_t>(grant.done - now)});
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned int MemoryTarget::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  const tlm::tlm_command command = trans.get_command();
  if (!config_.functional || command == tlm::TLM_IGNORE_COMMAND) return 0;
  if (trans.get_byte_enable_ptr() != nullptr || trans.get_data_ptr() == nullptr) return 0;
  if (!in_range(trans.get_address(), trans.get_data_length())) return 0;
  move_data(trans);
  return trans.get_data_length();
}

bool MemoryTarget::accept(tlm::tlm_generic_payload& trans) const {
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  const unsigned int length = trans.get_data_length();
  if (!in_range(trans.get_address(), length)) {
    status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  } else if (trans.get_byte_enable_ptr() != nullptr) {
    status = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  } else if (trans.get_streaming_width() < length) {
    // Streaming (a FIFO-like target) is not what a memory is.
    status = tlm::TLM_BURST_ERROR_RESPONSE;
  } else if (config_.functional && !config_.timing_only_payload && length > 0 &&
             trans.get_data_ptr() == nullptr && trans.get_command() != tlm::TLM_IGNORE_COMMAND) {
    status = tlm::TLM_GENERIC_ERROR_RESPONSE;
  }
  if (status == tlm::TLM_OK_RESPONSE) return true;
  trans.set_response_status(status);
  return false;
}

bool MemoryTarget::in_range(std::uint64_t addr, std::uint64_t len) const {
  const std::uint64_t size = config_.size.bytes;
  return len <= size && addr <= size - len;
}

void MemoryTarget::move_data(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (trans.is_read()) {
    memory_.read(addr, trans.get_data_ptr(), length);
  } else if (trans.is_write()) {
    memory_.write(addr, trans.get_data_ptr(), length);
  }
}

void MemoryTarget::account(tlm::tlm_command command, std::uint64_t bytes,
                           const BandwidthServer::Grant& grant) {
  if (command == tlm::TLM_READ_COMMAND) {
    stats_.reads.add();
    stats_.bytes_read.add(bytes);
  } else {
    stats_.writes.add();
    stats_.bytes_written.add(bytes);
  }
  // Grants never overlap and come in order of start time, so the level changes are in time order
  // even though they lie ahead of the kernel's clock under temporal decoupling.
  if (grant.end > grant.start) {
    stats_.busy.busy(grant.start);
    stats_.busy.idle(grant.end);
  }
}

}  // namespace podsim::core
