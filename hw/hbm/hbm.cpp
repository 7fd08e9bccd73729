#include "hw/hbm/hbm.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/kernel.h"
#include "core/stats.h"

namespace podsim::hbm {

Hbm::Hbm(sc_core::sc_module_name name, const HbmConfig& config, bool functional)
    : sc_core::sc_module(name),
      target_socket("target_socket"),
      engine_(config),
      functional_(functional),
      memory_(std::make_unique<core::SparseMemory>(engine_.decoder().capacity())) {
  if (config.model == HbmModel::kRate) rate_ = std::make_unique<Rate>(rate_of(config));
  target_socket.register_b_transport(this, &Hbm::b_transport);
  target_socket.register_transport_dbg(this, &Hbm::transport_dbg);
  register_stats();
  if (core::trace_writer().enabled()) trace_channels();
}

Hbm::~Hbm() {
  core::stats_registry().forget(name());
  if (close_hook_ != 0) {
    for (core::BusySpans& b : busy_) b.flush();
    core::trace_writer().remove_close_hook(close_hook_);
  }
}

void Hbm::trace_channels() {
  core::TraceWriter& trace = core::trace_writer();
  const int channels = rate_ ? 1 : config().geometry.channel_count();
  for (int c = 0; c < channels; ++c) {
    const std::string track =
        rate_ ? fmt::format("{}.all", name()) : fmt::format("{}.ch{:02}", name(), c);
    busy_.emplace_back(trace, trace.track(track));
  }
  close_hook_ = trace.add_close_hook([this] {
    for (core::BusySpans& b : busy_) b.flush();
  });
  engine_.observe_chunks([this](int channel, bool write, std::uint64_t bytes, core::TimePs start,
                                core::TimePs end) {
    busy_[static_cast<std::size_t>(channel)].add(start, end, write ? 0 : bytes, write ? bytes : 0);
  });
}

core::SparseMemory& Hbm::backing() {
  if (!functional_) {
    throw std::logic_error(std::string(name()) + ": timing-only HBM keeps no payload data");
  }
  return *memory_;
}

Hbm::Rate Hbm::rate_of(const HbmConfig& config) {
  const StreamTiming t = stream_timing(config);
  return Rate{core::BandwidthServer(t.read, t.latency),
              {8e12 / t.read.bits_per_second, 8e12 / t.write.bits_per_second},
              {},
              {},
              {},
              {}};
}

std::uint64_t Hbm::bytes_moved() const {
  if (rate_) return rate_->bytes_read.value() + rate_->bytes_written.value();
  std::uint64_t bytes = 0;
  for (int c = 0; c < engine_.config().geometry.channel_count(); ++c) {
    const ChannelStats& s = engine_.channel_stats(c);
    bytes += s.bytes_read.value() + s.bytes_written.value();
  }
  return bytes;
}

// One group per channel ("<hbm>.ch07.reads"); the counters live in the engine, beside what they
// count. The rate model counts for the whole HBM.
void Hbm::register_stats() {
  if (rate_) {
    core::StatsGroup g(name());
    g.attach("reads", rate_->reads, "transactions", "read transactions");
    g.attach("writes", rate_->writes, "transactions", "write transactions");
    g.attach("bytes_read", rate_->bytes_read, "B", "bytes read");
    g.attach("bytes_written", rate_->bytes_written, "B", "bytes written");
    return;
  }
  const int width = engine_.config().geometry.channel_count() > 10 ? 2 : 1;
  for (int c = 0; c < engine_.config().geometry.channel_count(); ++c) {
    core::StatsGroup g(fmt::format("{}.ch{:0{}}", name(), c, width));
    ChannelStats& s = engine_.channel_stats(c);
    g.attach("reads", s.reads, "bursts", "read bursts");
    g.attach("writes", s.writes, "bursts", "write bursts");
    g.attach("bytes_read", s.bytes_read, "B", "bytes read");
    g.attach("bytes_written", s.bytes_written, "B", "bytes written");
    g.attach("row_hits", s.row_hits, "bursts", "bursts to an open row");
    g.attach("row_misses", s.row_misses, "bursts", "bursts that activated a closed bank");
    g.attach("row_conflicts", s.row_conflicts, "bursts", "bursts that closed another row first");
    g.attach("refreshes", s.refreshes, "1", "all-bank refreshes of its pseudo-channels");
    g.attach("busy", s.busy_ps, "ps", "data bus busy, summed over its pseudo-channels");
  }
}

void Hbm::b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const tlm::tlm_response_status status = check(trans);
  if (status != tlm::TLM_OK_RESPONSE) return trans.set_response_status(status);
  const tlm::tlm_command command = trans.get_command();
  if (command != tlm::TLM_IGNORE_COMMAND && trans.get_data_length() > 0) {
    if (trans.get_data_ptr() != nullptr) move_data(trans);
    const core::TimePs now = core::now_ps();
    const core::TimePs done = serve(command == tlm::TLM_WRITE_COMMAND, trans.get_address(),
                                    trans.get_data_length(), now + delay.value());
    delay = core::to_sc_time(core::Duration{static_cast<std::int64_t>(done - now)});
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

core::TimePs Hbm::serve(bool write, std::uint64_t address, std::uint64_t length,
                        core::TimePs arrival) {
  if (!rate_) return engine_.access(write, address, length, arrival);
  (write ? rate_->writes : rate_->reads).add();
  (write ? rate_->bytes_written : rate_->bytes_read).add(length);
  const double occupancy = static_cast<double>(length) * rate_->ps_per_byte[write ? 1 : 0];
  const auto served =
      rate_->server.occupy(arrival, static_cast<core::TimePs>(std::llround(occupancy)));
  if (!busy_.empty())
    busy_[0].add(served.start, served.end, write ? 0 : length, write ? length : 0);
  return served.done;
}

unsigned int Hbm::transport_dbg(int, tlm::tlm_generic_payload& trans) {
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) return 0;
  if (trans.get_byte_enable_ptr() != nullptr || trans.get_data_ptr() == nullptr) return 0;
  if (!in_range(trans.get_address(), trans.get_data_length())) return 0;
  move_data(trans);
  return trans.get_data_length();
}

tlm::tlm_response_status Hbm::check(const tlm::tlm_generic_payload& trans) const {
  const unsigned int length = trans.get_data_length();
  if (!in_range(trans.get_address(), length)) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  if (trans.get_byte_enable_ptr() != nullptr) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  if (trans.get_streaming_width() < length) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (functional_ && length > 0 && trans.get_data_ptr() == nullptr &&
      trans.get_command() != tlm::TLM_IGNORE_COMMAND) {
    return tlm::TLM_GENERIC_ERROR_RESPONSE;
  }
  return tlm::TLM_OK_RESPONSE;
}

bool Hbm::in_range(std::uint64_t address, std::uint64_t length) const {
  const std::uint64_t size = capacity();
  return length <= size && address <= size - length;
}

void Hbm::move_data(tlm::tlm_generic_payload& trans) {
  if (trans.is_read()) {
    memory_->read(trans.get_address(), trans.get_data_ptr(), trans.get_data_length());
  } else if (trans.is_write()) {
    memory_->write(trans.get_address(), trans.get_data_ptr(), trans.get_data_length());
  }
}

}  // namespace podsim::hbm
