#include "hw/tpc/access_unit.h"

#include <algorithm>
#include <cstring>

namespace podsim::tpc {

AccessUnit::AccessUnit(const AccessConfig& config, MemoryTransport& transport, PipelineTimer& timer)
    : config_(config), transport_(transport), timer_(timer) {}

void AccessUnit::start(const std::array<TensorDescriptor, kMaxTensors>& tensors,
                       const std::array<std::uint64_t, kMaxTensors>* origins) {
  for (int t = 0; t < kMaxTensors; ++t) {
    Stream& s = streams_[static_cast<std::size_t>(t)];
    const TensorDescriptor& d = tensors[static_cast<std::size_t>(t)];
    s.bursts.clear();
    s.next = ~std::uint64_t{0};
    s.limit = d.base + d.span_bytes();
    s.write_start = s.write_end = 0;
    s.write_data.clear();
    bases_[static_cast<std::size_t>(t)] =
        origins ? (*origins)[static_cast<std::size_t>(t)] : d.base;
  }
  fault_ = 0;
}

bool AccessUnit::fetch(Stream& s, std::uint64_t start, std::uint64_t end, core::TimePs at) {
  Burst b;
  b.start = start;
  b.end = end;
  if (config_.functional) b.data.resize(end - start);
  const auto bytes = static_cast<std::uint32_t>(end - start);
  if (!transport_.read(start, config_.functional ? b.data.data() : nullptr, bytes, at, b.ready)) {
    fault_ = start;
    return false;
  }
  counters_.reads += 1;
  counters_.read_bytes += bytes;
  s.bursts.push_back(std::move(b));
  return true;
}

bool AccessUnit::load(int tensor, std::uint64_t address, std::uint8_t* data, std::uint32_t bytes) {
  Stream& s = streams_[static_cast<std::size_t>(tensor)];
  record(AccessEvent::kLoad, tensor, address, bytes);
  counters_.loads += 1;
  counters_.load_bytes += bytes;
  const core::TimePs at = timer_.load_issue_time();
  const std::uint64_t end = address + bytes;
  while (!s.bursts.empty() && s.bursts.front().end <= address) s.bursts.pop_front();
  const bool in_stream =
      !s.bursts.empty() && address >= s.bursts.front().start && address <= s.bursts.back().end;
  if (address != s.next && !in_stream) {
    // Not where the stream goes: fetch just these bytes.
    s.bursts.clear();
    if (!fetch(s, address, end, at)) return false;
  } else {
    // Bursts cover the load (a load is at most 256 bytes, a burst at least that), and
    // `prefetch` more are on their way, none past the tensor.
    const std::uint64_t horizon =
        std::min(s.limit, end + static_cast<std::uint64_t>(config_.prefetch) * config_.read_burst);
    std::uint64_t from = s.bursts.empty() ? address : s.bursts.back().end;
    while (from < end || from < horizon) {
      const std::uint64_t to = std::min(from + config_.read_burst, s.limit);
      if (!fetch(s, from, to, at)) return false;
      from = to;
    }
  }
  core::TimePs ready = 0;
  for (const Burst& b : s.bursts) {
    if (b.end <= address || b.start >= end) continue;
    ready = std::max(ready, b.ready);
    if (data != nullptr && !b.data.empty()) {
      const std::uint64_t lo = std::max(address, b.start), hi = std::min(end, b.end);
      std::memcpy(data + (lo - address), b.data.data() + (lo - b.start), hi - lo);
    }
  }
  s.next = end;
  timer_.load_data_at(ready);
  return true;
}

bool AccessUnit::store(int tensor, std::uint64_t address, const std::uint8_t* data,
                       std::uint32_t bytes) {
  Stream& s = streams_[static_cast<std::size_t>(tensor)];
  record(AccessEvent::kStore, tensor, address, bytes);
  counters_.stores += 1;
  counters_.store_bytes += bytes;
  const bool open = s.write_end > s.write_start;
  if (!open || address != s.write_end ||
      s.write_end - s.write_start + bytes > config_.write_burst) {
    if (!flush(s)) return false;
    s.write_start = s.write_end = address;
  }
  if (config_.functional && data != nullptr)
    s.write_data.insert(s.write_data.end(), data, data + bytes);
  s.write_end += bytes;
  if (s.write_end - s.write_start >= config_.write_burst) return flush(s);
  return true;
}

bool AccessUnit::flush(Stream& s) {
  if (s.write_end == s.write_start) return true;
  const core::TimePs at = timer_.store_issue_time();
  const auto bytes = static_cast<std::uint32_t>(s.write_end - s.write_start);
  core::TimePs done = at;
  const bool ok = transport_.write(
      s.write_start, config_.functional ? s.write_data.data() : nullptr, bytes, at, done);
  if (!ok) fault_ = s.write_start;
  timer_.store_done(done);
  counters_.writes += 1;
  counters_.write_bytes += bytes;
  s.write_start = s.write_end = 0;
  s.write_data.clear();
  return ok;
}

void AccessUnit::fence() {
  record(AccessEvent::kFence, 0, bases_[0], 0);
  for (Stream& s : streams_) flush(s);
  timer_.fence();
  for (Stream& s : streams_) {
    s.bursts.clear();
    s.next = ~std::uint64_t{0};
  }
}

bool AccessUnit::finish() {
  bool ok = true;
  for (Stream& s : streams_) ok = flush(s) && ok;
  return ok;
}

void AccessUnit::record(AccessEvent::Kind kind, int tensor, std::uint64_t address,
                        std::uint32_t bytes) {
  if (recorder_ == nullptr) return;
  recorder_->push_back(AccessEvent{kind, static_cast<std::uint8_t>(tensor), bytes,
                                   address - bases_[static_cast<std::size_t>(tensor)]});
}

bool AccessUnit::replay(const AccessEvent& e) {
  const std::uint64_t address = bases_[e.tensor] + e.value;
  switch (e.kind) {
    case AccessEvent::kLoad:
      return load(e.tensor, address, nullptr, e.bytes);
    case AccessEvent::kStore:
      return store(e.tensor, address, nullptr, e.bytes);
    case AccessEvent::kFence:
      fence();
      return true;
    default:
      return true;
  }
}

}  // namespace podsim::tpc
