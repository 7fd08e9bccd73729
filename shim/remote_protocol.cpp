#include "shim/remote_protocol.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace podsim::driver::shim::remote {
namespace {

bool write_all(int socket, const std::uint8_t* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = send(socket, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int socket, void* data, std::size_t size) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = recv(socket, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A message of one buffer with room for one descriptor beside it.
struct MessageWithFd {
  iovec io;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  MessageWithFd(void* data, std::size_t size) : io{data, size} {
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
};

// The header, with the descriptor that came with its first byte.
bool read_header(int socket, void* header, std::size_t size, int& fd) {
  fd = -1;
  MessageWithFd m(header, size);
  msghdr& msg = m.msg;
  ssize_t n;
  do {
    n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    }
  }
  const bool whole =
      read_all(socket, static_cast<std::uint8_t*>(header) + n, size - static_cast<std::size_t>(n));
  if (!whole && fd >= 0) {
    close(fd);
    fd = -1;
  }
  return whole;
}

}  // namespace

bool send_message(int socket, const void* header, std::size_t header_size, const void* payload,
                  std::size_t payload_size, int fd) {
  const auto* h = static_cast<const std::uint8_t*>(header);
  if (fd >= 0) {
    // The descriptor travels with the header's first byte; the rest follows as a stream.
    MessageWithFd m(const_cast<std::uint8_t*>(h), 1);
    msghdr& msg = m.msg;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do {
      n = sendmsg(socket, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != 1) return false;
    ++h;
    --header_size;
  }
  return write_all(socket, h, header_size) &&
         write_all(socket, static_cast<const std::uint8_t*>(payload), payload_size);
}

bool receive_request(int socket, Request& request, void* payload, int& fd) {
  if (!read_header(socket, &request, sizeof request, fd)) return false;
  if (request.size > kMaxPayload || !read_all(socket, payload, request.size)) {
    if (fd >= 0) close(fd);
    fd = -1;
    return false;
  }
  return true;
}

bool receive_reply(int socket, Reply& reply, void* payload, std::size_t capacity) {
  int fd = -1;
  if (!read_header(socket, &reply, sizeof reply, fd)) return false;
  if (fd >= 0) close(fd);  // replies carry none
  return reply.size <= capacity && read_all(socket, payload, reply.size);
}

}  // namespace podsim::driver::shim::remote
