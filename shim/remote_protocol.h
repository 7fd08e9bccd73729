// The messages between the shim in a client process and a podsim server (remote_server.h) on a
// Unix stream socket: each client thread's call is a request on a connection of its own and its
// reply. Both ends are on one machine and one build, so the structures travel as they are in
// memory. A call that must lend the server memory of the client's (a command buffer's mapping,
// pages mapped with MAP USERPTR) sends the memory's file descriptor with the request.
#pragma once

#include <cstddef>
#include <cstdint>

namespace podsim::driver::shim::remote {

enum class Op : std::uint32_t {
  kHello = 1,  // reply: value the devices served
  kPciBus,     // device; reply: rc the bus the probe found, or -errno
  kOpen,       // device, a = control node; reply: rc a file id, or -errno
  kClose,      // file
  kIoctl,      // file, a = request, payload the argument (in and out); for MAP USERPTR b
               // LentPieces follow it, and the client's memory file travels beside
  kMmap,       // file, a = CB handle, b = length, an fd of `length` bytes; reply: value address
  kMunmap,     // file, a = CB handle
};

struct Request {
  Op op{};
  std::int32_t device = 0;
  std::int32_t file = 0;
  std::uint32_t size = 0;  // payload bytes after the header
  std::uint64_t a = 0, b = 0;
};

struct Reply {
  std::int64_t rc = 0;  // 0 or more, or -errno
  std::uint64_t value = 0;
  std::uint32_t size = 0;  // payload bytes after the header
  std::uint32_t pad = 0;
};

// Pages of the client's memory file (its one file of lent pages) at the client's `address`.
struct LentPiece {
  std::uint64_t address = 0, offset = 0, length = 0;
};

// The largest ioctl argument (_IOC_SIZE is 14 bits), and the most pieces one MAP USERPTR names
// (a range of pages lent in that many separate runs is refused: EFAULT).
constexpr std::size_t kMaxArgument = 1u << 14;
constexpr std::size_t kMaxPieces = 4096;
constexpr std::size_t kMaxPayload = kMaxArgument + kMaxPieces * sizeof(LentPiece);
// What one MAP USERPTR may lend (the device's host virtual range is smaller).
constexpr std::uint64_t kMaxLentBytes = 1ull << 40;

// Whole messages over a stream socket, with at most one descriptor beside. Each returns false
// when the peer has gone or the message is malformed.
bool send_message(int socket, const void* header, std::size_t header_size, const void* payload,
                  std::size_t payload_size, int fd = -1);
// Reads a header, then `payload` of the size header says (at most kMaxPayload), and the
// descriptor sent beside it, if any (-1 otherwise; the caller closes it).
bool receive_request(int socket, Request& request, void* payload, int& fd);
bool receive_reply(int socket, Reply& reply, void* payload, std::size_t capacity);

}  // namespace podsim::driver::shim::remote
