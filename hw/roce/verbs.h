// The verbs-level vocabulary of the NIC: work requests a user posts and the completions it gets
// back, shaped after ibv_send_wr / ibv_recv_wr / ibv_wc but reduced to what the model uses.
// Captures: opcodes of the Reliable Connected service (SEND, WRITE, each with immediate, READ),
// signaled and unsignaled sends, and the completion statuses the model can produce.
// Ignores: scatter/gather lists (one contiguous buffer per request), memory keys and protection
// domains (every address is valid unless the memory rejects it), atomics, inline data, fences.
#pragma once

#include <cstdint>

namespace podsim::roce {

// IBTA caps an RC message at 2^31 bytes.
constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 31;

enum class SendOpcode : std::uint8_t {
  kSend,
  kSendWithImmediate,
  kWrite,
  kWriteWithImmediate,
  kRead,
};

struct SendRequest {
  std::uint64_t wr_id = 0;
  SendOpcode opcode = SendOpcode::kWrite;
  std::uint64_t local_address = 0;   // source of SEND/WRITE, destination of READ
  std::uint64_t length = 0;          // bytes, 1..2^31
  std::uint64_t remote_address = 0;  // WRITE and READ only
  std::uint32_t immediate = 0;       // *WithImmediate only
  bool signaled = true;              // false: no completion unless it fails
};

struct RecvRequest {
  std::uint64_t wr_id = 0;
  std::uint64_t address = 0;
  std::uint64_t length = 0;  // may be 0 for a receive that only takes a WRITE's immediate
};

enum class CompletionStatus : std::uint8_t {
  kSuccess,
  kFlushed,               // the QP went to error before this request ran
  kRetryExceeded,         // retry_limit retransmissions timed out
  kRnrRetryExceeded,      // the responder had no receive posted (no RNR retry is modeled)
  kRemoteAccessError,     // the responder's memory rejected the address
  kRemoteInvalidRequest,  // the responder could not take the message (receive too small)
  kLocalLengthError,      // receive side: the SEND was longer than the posted buffer
  kLocalAccessError,      // this NIC's memory rejected the address
};

enum class CompletionOpcode : std::uint8_t {
  kSend,
  kWrite,
  kRead,
  kRecv,                    // a SEND arrived
  kRecvWriteWithImmediate,  // a WRITE with immediate arrived
};

struct Completion {
  std::uint64_t wr_id = 0;
  std::uint32_t qpn = 0;
  CompletionOpcode opcode = CompletionOpcode::kSend;
  CompletionStatus status = CompletionStatus::kSuccess;
  std::uint32_t byte_len = 0;  // receive side: bytes that arrived
  std::uint32_t immediate = 0;
  bool has_immediate = false;
};

const char* to_string(SendOpcode op);
const char* to_string(CompletionStatus status);
const char* to_string(CompletionOpcode op);

inline bool is_read(SendOpcode op) { return op == SendOpcode::kRead; }
inline bool is_write(SendOpcode op) {
  return op == SendOpcode::kWrite || op == SendOpcode::kWriteWithImmediate;
}
inline bool has_immediate(SendOpcode op) {
  return op == SendOpcode::kSendWithImmediate || op == SendOpcode::kWriteWithImmediate;
}

}  // namespace podsim::roce
