// What the register blocks of the sync manager and the queue managers share: finding which
// element of a register array an offset names, serving a TLM access to 32-bit registers, and
// register writes that take effect at their time (the initiator's time plus its delay), so that
// a target never runs a block's behaviour inside b_transport, ahead of that time or re-entrantly.
// Captures: word-granular register access (any multiple of 4 bytes, aligned), in address order.
// Ignores: byte enables and sub-word accesses (answered with an error response).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <queue>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "core/register_access.h"
#include "core/units.h"

namespace podsim::chip {

// The index of the element of a register array (first at `offset`, `count` elements `stride`
// bytes apart) that `address` names, or nullopt.
inline std::optional<std::uint32_t> register_element(std::uint64_t address, std::uint64_t offset,
                                                     std::uint32_t count, std::uint32_t stride) {
  if (address < offset || (address - offset) % stride != 0) return std::nullopt;
  const std::uint64_t index = (address - offset) / stride;
  if (index >= count) return std::nullopt;
  return static_cast<std::uint32_t>(index);
}

// Register writes waiting for their time, taken out in (time, arrival) order. The owner keeps
// one callback armed, at the earliest write's time, rather than one per write (a collective's
// start clears thousands of sync objects at once); a write of several words (a driver clearing a
// sync manager's objects in one burst) waits as one entry:
//   if (writes.push(at, offset, values, count)) schedule(at);  // earlier than the armed callback
//   in the callback:  if (!writes.armed_for(now)) return;  // one superseded by an earlier
//                     writes.apply_due(now, apply);       // apply(offset, value) per word
//                     if (auto next = writes.rearm()) schedule(*next);
class TimedRegisterWrites {
 public:
  // True when the owner must schedule a callback at `at`.
  [[nodiscard]] bool push(core::TimePs at, std::uint64_t offset, const std::uint32_t* values,
                          std::uint32_t count) {
    const std::uint64_t order = next_order_++;
    if (count > 1) runs_.emplace(order, std::vector<std::uint32_t>(values, values + count));
    queue_.push({at, order, offset, values[0], count});
    if (at >= armed_) return false;
    armed_ = at;
    return true;
  }
  [[nodiscard]] bool push(core::TimePs at, std::uint64_t offset, std::uint32_t value) {
    return push(at, offset, &value, 1);
  }
  bool armed_for(core::TimePs now) const { return now == armed_; }
  bool empty() const { return queue_.empty(); }
  // Applies every write due by `now`, word by word in order: apply(offset, value).
  template <class Apply>
  void apply_due(core::TimePs now, Apply apply) {
    while (!queue_.empty() && queue_.top().at <= now) {
      const Write w = queue_.top();
      queue_.pop();
      if (w.count == 1) {
        apply(w.offset, w.value);
        continue;
      }
      const auto run = runs_.find(w.order);
      const std::vector<std::uint32_t> values = std::move(run->second);
      runs_.erase(run);
      for (std::uint32_t i = 0; i < w.count; ++i) apply(w.offset + 4 * i, values[i]);
    }
  }
  // After the armed callback has applied every due write: when the next one is due, if any.
  std::optional<core::TimePs> rearm() {
    armed_ = queue_.empty() ? kNever : queue_.top().at;
    return queue_.empty() ? std::nullopt : std::optional<core::TimePs>(armed_);
  }

 private:
  struct Write {
    core::TimePs at = 0;
    std::uint64_t order = 0;
    std::uint64_t offset = 0;
    std::uint32_t value = 0;  // the first word
    std::uint32_t count = 1;  // words; those of a run are kept in runs_
  };
  struct Later {
    bool operator()(const Write& a, const Write& b) const {
      return a.at != b.at ? a.at > b.at : a.order > b.order;
    }
  };
  static constexpr core::TimePs kNever = ~core::TimePs{0};
  std::priority_queue<Write, std::vector<Write>, Later> queue_;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> runs_;  // by order
  std::uint64_t next_order_ = 0;
  core::TimePs armed_ = kNever;  // time of the callback that applies the next writes
};

// Serves a TLM access to a block of 32-bit registers `span` bytes long: reads call
// read(offset) per word now; a write calls write(offset, values, count) once. Sets the response;
// a bad access gets core's one answer (core/register_access.h), returned for the block to raise.
template <class Read, class Write>
std::optional<core::BadRegisterAccess> serve_registers(tlm::tlm_generic_payload& trans,
                                                       std::uint64_t span, Read read, Write write) {
  if (!trans.is_read() && !trans.is_write()) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return std::nullopt;
  }
  if (auto bad = core::check_register_access(trans, [span](std::uint64_t o) { return o < span; })) {
    trans.set_response_status(bad->status);
    return bad;
  }
  const std::uint64_t address = trans.get_address();
  const std::uint32_t length = trans.get_data_length();
  std::uint8_t* data = trans.get_data_ptr();
  if (trans.is_write()) {
    std::uint32_t word = 0;
    std::vector<std::uint32_t> words;
    if (length > 4) words.resize(length / 4);
    std::uint32_t* values = length > 4 ? words.data() : &word;
    std::memcpy(values, data, length);
    write(address, values, length / 4);
  } else {
    for (std::uint32_t i = 0; i < length; i += 4) {
      const std::uint32_t word = read(address + i);
      std::memcpy(data + i, &word, 4);
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return std::nullopt;
}

}  // namespace podsim::chip
