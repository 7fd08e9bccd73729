#include "driver/client.h"

#include <fmt/format.h>

#include <cstring>

namespace podsim::driver {

void Client::call(unsigned long request, void* arg, const char* what) {
  if (const int rc = file_.ioctl(request, arg); rc < 0) {
    throw ClientError(
        fmt::format("{}: {} failed: {} (errno {})", who_, what, std::strerror(-rc), -rc));
  }
}

Client::Cb Client::create_cb(std::uint32_t bytes) {
  hl_cb_args args{};
  args.in.op = HL_CB_OP_CREATE;
  args.in.cb_size = bytes;
  call(HL_IOCTL_CB, &args, "CB CREATE");
  Cb cb;
  cb.handle = args.out.cb_handle;
  cb.size = bytes;
  if (const int rc = file_.mmap(cb.handle, bytes, cb.address); rc < 0) {
    destroy_cb(cb);
    throw ClientError(
        fmt::format("{}: mapping a command buffer failed: {}", who_, std::strerror(-rc)));
  }
  return cb;
}

void Client::destroy_cb(const Cb& cb) {
  if (cb.address != 0) file_.munmap(cb.handle);
  hl_cb_args args{};
  args.in.op = HL_CB_OP_DESTROY;
  args.in.cb_handle = cb.handle;
  call(HL_IOCTL_CB, &args, "CB DESTROY");
}

std::uint64_t Client::map_host(std::uint64_t address, std::uint64_t bytes) {
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_MAP;
  mem.in.flags = HL_MEM_USERPTR;
  mem.in.map_host.host_virt_addr = address;
  mem.in.map_host.mem_size = bytes;
  call(HL_IOCTL_MEMORY, &mem, "MEMORY MAP USERPTR");
  return mem.out.device_virt_addr;
}

std::uint64_t Client::submit(const std::vector<hl_cs_chunk>& chunks) {
  hl_cs_args cs{};
  cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
  cs.in.num_chunks_execute = static_cast<std::uint32_t>(chunks.size());
  call(HL_IOCTL_CS, &cs, "CS");
  return cs.out.seq;
}

std::uint32_t Client::wait(std::uint64_t seq, std::uint64_t timeout_us) {
  hl_wait_cs_args args{};
  args.in.seq = seq;
  args.in.timeout_us = timeout_us;
  call(HL_IOCTL_WAIT_CS, &args, "WAIT_CS");
  return args.out.status;
}

hl_cs_chunk Client::chunk(std::uint32_t queue, std::uint64_t cb, std::uint32_t bytes) {
  hl_cs_chunk c{};
  c.cb_handle = cb;
  c.queue_index = queue;
  c.cb_size = bytes;
  return c;
}

}  // namespace podsim::driver
