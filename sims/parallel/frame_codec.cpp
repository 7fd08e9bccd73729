#include "sims/parallel/frame_codec.h"

#include <cstring>
#include <stdexcept>

namespace podsim::parallel {
namespace {

struct FrameHead {
  std::uint32_t link;
  std::uint32_t side;
  std::uint32_t payload_bytes;
};

template <class T>
void append(std::vector<char>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

}  // namespace

void encode_frame(std::vector<char>& out, std::uint32_t link, int side,
                  const fabric::Packet& packet) {
  append(out, FrameHead{link, static_cast<std::uint32_t>(side),
                        static_cast<std::uint32_t>(packet.payload.size())});
  append(out, static_cast<const fabric::PacketFields&>(packet));
  const auto* payload = reinterpret_cast<const char*>(packet.payload.data());
  out.insert(out.end(), payload, payload + packet.payload.size());
}

void decode_frames(const char* bytes, std::size_t size,
                   const std::function<void(std::uint32_t, int, fabric::Packet*)>& take) {
  std::size_t at = 0;
  while (at < size) {
    FrameHead head{};
    if (size - at < sizeof head + sizeof(fabric::PacketFields)) {
      throw std::runtime_error("a frame from another process is cut short");
    }
    std::memcpy(&head, bytes + at, sizeof head);
    at += sizeof head;
    if (head.side > 1) throw std::runtime_error("a frame from another process names no link side");
    if (size - at < sizeof(fabric::PacketFields) + head.payload_bytes) {
      throw std::runtime_error("a frame from another process is cut short");
    }
    // Through a copy: the payload vector may sit in the fields' tail padding, which a copy of
    // the bytes over the packet would overwrite.
    fabric::PacketFields fields;
    std::memcpy(&fields, bytes + at, sizeof fields);
    at += sizeof fields;
    fabric::Packet* p = fabric::packet_pool().acquire_raw();
    static_cast<fabric::PacketFields&>(*p) = fields;
    p->next = nullptr;
    p->payload.assign(bytes + at, bytes + at + head.payload_bytes);
    at += head.payload_bytes;
    take(head.link, static_cast<int>(head.side), p);
  }
}

}  // namespace podsim::parallel
