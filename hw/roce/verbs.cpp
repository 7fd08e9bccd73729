#include "hw/roce/verbs.h"

namespace podsim::roce {

const char* to_string(SendOpcode op) {
  switch (op) {
    case SendOpcode::kSend:
      return "send";
    case SendOpcode::kSendWithImmediate:
      return "send_with_immediate";
    case SendOpcode::kWrite:
      return "write";
    case SendOpcode::kWriteWithImmediate:
      return "write_with_immediate";
    case SendOpcode::kRead:
      return "read";
  }
  return "?";
}

const char* to_string(CompletionStatus status) {
  switch (status) {
    case CompletionStatus::kSuccess:
      return "success";
    case CompletionStatus::kFlushed:
      return "flushed";
    case CompletionStatus::kRetryExceeded:
      return "retry_exceeded";
    case CompletionStatus::kRnrRetryExceeded:
      return "rnr_retry_exceeded";
    case CompletionStatus::kRemoteAccessError:
      return "remote_access_error";
    case CompletionStatus::kRemoteInvalidRequest:
      return "remote_invalid_request";
    case CompletionStatus::kLocalLengthError:
      return "local_length_error";
    case CompletionStatus::kLocalAccessError:
      return "local_access_error";
  }
  return "?";
}

const char* to_string(CompletionOpcode op) {
  switch (op) {
    case CompletionOpcode::kSend:
      return "send";
    case CompletionOpcode::kWrite:
      return "write";
    case CompletionOpcode::kRead:
      return "read";
    case CompletionOpcode::kRecv:
      return "recv";
    case CompletionOpcode::kRecvWriteWithImmediate:
      return "recv_write_with_immediate";
  }
  return "?";
}

}  // namespace podsim::roce
