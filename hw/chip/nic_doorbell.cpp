#include "hw/chip/nic_doorbell.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "core/bulk_transfer.h"
#include "core/kernel.h"
#include "hw/chip/spec/sync_values.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace {
// Receives kept posted on each QP: one is taken per arriving WRITE with immediate and put back
// at once, so this only has to exceed the writes one QP has in flight.
constexpr int kPostedReceives = 1024;
}  // namespace

void Wqe::encode(std::uint8_t* out) const {
  std::memset(out, 0, kBytes);
  std::memcpy(out, &qpn, 4);
  std::memcpy(out + 8, &local, 8);
  std::memcpy(out + 16, &remote, 8);
  std::memcpy(out + 24, &length, 8);
  std::memcpy(out + 32, &immediate, 4);
  std::memcpy(out + 36, &completion, 4);
}

Wqe Wqe::decode(const std::uint8_t* bytes) {
  Wqe w;
  std::memcpy(&w.qpn, bytes, 4);
  std::memcpy(&w.local, bytes + 8, 8);
  std::memcpy(&w.remote, bytes + 16, 8);
  std::memcpy(&w.length, bytes + 24, 8);
  std::memcpy(&w.immediate, bytes + 32, 4);
  std::memcpy(&w.completion, bytes + 36, 4);
  return w;
}

NicDoorbell::NicDoorbell(sc_core::sc_module_name name, roce::Nic& nic,
                         std::vector<std::uint64_t> sync_managers)
    : sc_module(name),
      target_socket("target_socket"),
      initiator_socket("initiator_socket"),
      nic_(nic),
      sync_managers_(std::move(sync_managers)),
      stats_{core::StatsGroup(this->name()).counter("posts", "1", "WQEs posted"),
             core::StatsGroup(this->name())
                 .counter("completions", "1", "acknowledged writes counted on a sync object"),
             core::StatsGroup(this->name())
                 .counter("arrivals", "1", "arriving immediates counted on a sync object")} {
  target_socket.register_b_transport(this, &NicDoorbell::b_transport);
  send_cq_.set_callback([this](const roce::Completion& c) { on_send(c); });
  recv_cq_.set_callback([this](const roce::Completion& c) { on_recv(c); });
}

std::uint32_t NicDoorbell::create_qp(int port) {
  const std::uint32_t qpn = nic_.create_qp(port, send_cq_, recv_cq_);
  for (int i = 0; i < kPostedReceives; ++i) nic_.post_recv(qpn, roce::RecvRequest{});
  return qpn;
}

std::uint64_t NicDoorbell::sob_address(std::uint32_t sob) const {
  const std::size_t manager = sob / kObjectsPerManager;
  if (manager >= sync_managers_.size()) {
    throw std::out_of_range(fmt::format("{}: no sync object {}", name(), sob));
  }
  return PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(sync_managers_[manager], sob % kObjectsPerManager);
}

void NicDoorbell::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t offset = trans.get_address();
  if (trans.get_data_length() != 4 || offset % 4 != 0 || offset > kPost ||
      trans.get_data_ptr() == nullptr) {
    return trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  std::uint32_t value = 0;
  if (trans.is_read()) {
    if (offset != kPost) value = wqe_base_[offset / 4];
    std::memcpy(trans.get_data_ptr(), &value, 4);
  } else if (trans.is_write()) {
    std::memcpy(&value, trans.get_data_ptr(), 4);
    if (offset == kPost) {
      post(value, core::now_ps() + delay.value());
    } else {
      wqe_base_[offset / 4] = value;
    }
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void NicDoorbell::post(std::uint32_t index, core::TimePs at) {
  const std::uint64_t base = static_cast<std::uint64_t>(wqe_base_[1]) << 32 | wqe_base_[0];
  const std::uint64_t address = base + Wqe::kBytes * index;
  std::uint8_t bytes[Wqe::kBytes] = {};
  core::TimePs ready = 0;
  if (!core::bulk_transfer(initiator_socket, trans_, tlm::TLM_READ_COMMAND, address, bytes,
                           Wqe::kBytes, at, ready)) {
    return raise(core::ErrorEvent::Kind::kAddressError, address,
                 fmt::format("WQE {} at {:#x} could not be read", index, address));
  }
  posts_.push({ready, next_seq_++, Wqe::decode(bytes)});
  core::event_queue().schedule(ready, *this, 0);
}

// Posts every WQE whose read has returned, in doorbell order among equal times.
void NicDoorbell::fire(std::uint32_t) {
  while (!posts_.empty() && posts_.top().at <= core::now_ps()) {
    const Wqe w = posts_.top().wqe;
    posts_.pop();
    roce::SendRequest request;
    request.wr_id = next_wr_id_++;
    request.opcode = roce::SendOpcode::kWriteWithImmediate;
    request.local_address = w.local;
    request.remote_address = w.remote;
    request.length = w.length;
    request.immediate = w.immediate;
    completions_[request.wr_id] = w.completion;
    stats_.posts.add();
    try {
      nic_.post_send(w.qpn, request);
    } catch (const std::exception& e) {
      completions_.erase(request.wr_id);
      raise(core::ErrorEvent::Kind::kMalformed, w.qpn, fmt::format("WQE rejected: {}", e.what()));
    }
  }
}

void NicDoorbell::add_one(std::uint32_t sob_field, const char* what) {
  if (!(sob_field & Wqe::kSobValid)) return;
  const std::uint32_t sob = sob_field & Wqe::kSobMask;
  if (sob / kObjectsPerManager >= sync_managers_.size()) {
    return raise(core::ErrorEvent::Kind::kMalformed, sob,
                 fmt::format("{} names sync object {}, which does not exist", what, sob));
  }
  std::uint32_t value = spec::encode_sob_write({1, true, false});
  core::TimePs done = 0;
  tlm::tlm_generic_payload write;  // may run inside another access's completion
  if (!core::bulk_transfer(initiator_socket, write, tlm::TLM_WRITE_COMMAND, sob_address(sob),
                           reinterpret_cast<std::uint8_t*>(&value), 4, core::now_ps(), done)) {
    raise(core::ErrorEvent::Kind::kAddressError, sob_address(sob),
          fmt::format("{}: sync object write rejected", what));
  }
}

void NicDoorbell::on_send(const roce::Completion& c) {
  auto it = completions_.find(c.wr_id);
  if (it == completions_.end()) return;
  const std::uint32_t field = it->second;
  completions_.erase(it);
  if (c.status != roce::CompletionStatus::kSuccess) {
    return raise(core::ErrorEvent::Kind::kMalformed, c.qpn,
                 fmt::format("RDMA write on QP {} failed", c.qpn));
  }
  stats_.completions.add();
  add_one(field, "a write's completion");
}

void NicDoorbell::on_recv(const roce::Completion& c) {
  if (c.status != roce::CompletionStatus::kSuccess || !c.has_immediate) return;
  nic_.post_recv(c.qpn, roce::RecvRequest{});
  stats_.arrivals.add();
  add_one(c.immediate, "an arriving immediate");
}

void NicDoorbell::raise(core::ErrorEvent::Kind kind, std::uint64_t address, std::string detail) {
  if (error_sink_) {
    error_sink_(core::ErrorEvent{kind, name(), address, core::now_ps(), std::move(detail)});
  }
}

}  // namespace podsim::chip
