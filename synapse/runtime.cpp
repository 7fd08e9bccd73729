#include "synapse/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <bitset>
#include <cerrno>
#include <cstring>

#include "drm/habanalabs_accel.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::synapse {
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kAlign = 256;
constexpr std::uint64_t kStagingBytes = 4ull << 20;
constexpr std::uint64_t kMaxDmaBytes = 1ull << 30;
constexpr std::uint32_t kCbBytes = HL_MAX_CB_SIZE;    // the completion job's buffer: the largest
constexpr std::uint64_t kWaitUs = 3600ull * 1000000;  // an hour of simulated time
constexpr std::size_t kCachedCommandBuffers = 64;

using Packet = chip::spec::Packet;

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// Streams on the host-facing DMA engines 0 (to the device) and 1 (to the host).
std::uint32_t queue_of(const driver::QueueMap& map, StreamKind kind) {
  const auto dma = [&](int engine, int stream) {
    return map.queue_id({driver::EngineKind::kDma, engine}, stream);
  };
  switch (kind) {
    case StreamKind::kHostToDevice:
      return dma(0, 0);
    case StreamKind::kDeviceToHost:
      return dma(1, 0);
    case StreamKind::kDeviceToDevice:
      return dma(0, 1);
    case StreamKind::kCollective:
      return dma(0, 2);
    case StreamKind::kCompute:
      break;
  }
  return dma(1, 3);
}

Packet msg_long(std::uint64_t address, std::uint32_t value) {
  Packet p("MSG_LONG");
  p.set("addr", address).set("value", value);
  return p;
}

Packet lin_dma(std::uint64_t src, std::uint64_t dst, std::uint64_t bytes) {
  Packet p("LIN_DMA");
  p.set("tsize", bytes).set("lin", 1).set("src_addr", src).set("dst_addr", dst);
  p.barriers(false, true, false);
  return p;
}

// A queue's monitor writes 1 to fence counter 0 of the queue's stream when it fires.
void monitor_payload(std::vector<Packet>& out, std::uint32_t monitor,
                     const driver::QueueRef& queue) {
  const std::uint64_t fence =
      PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(driver::qman_base(queue.engine), queue.stream);
  const std::uint64_t sm = PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE;
  out.push_back(msg_long(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(sm, monitor),
                         static_cast<std::uint32_t>(fence)));
  out.push_back(msg_long(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(sm, monitor),
                         static_cast<std::uint32_t>(fence >> 32)));
  out.push_back(msg_long(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(sm, monitor), 1));
}

// Waits until sync object `sob` reaches `count`: the monitor armed on it, then the fence.
void wait_for(std::vector<Packet>& out, std::uint32_t monitor, std::uint32_t sob,
              std::uint32_t count) {
  out.push_back(
      msg_long(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE, monitor),
               chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                   sob, count, chip::spec::MonitorOp::kGreaterOrEqual))));
  Packet fence("FENCE");
  fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
  out.push_back(fence);
}

}  // namespace

Runtime::Runtime(driver::Device& device, host::HostMemory& memory, HostRegion region,
                 const chip::ResourceShare& share)
    : memory_(memory), host_(region.base, region.size) {
  if (const int rc = device.open(false, owned_file_); rc != 0) {
    throw RuntimeError(fmt::format("synapse: acquiring the device: {} ({})", std::strerror(-rc),
                                   rc == -EBUSY ? "another process holds it" : "open failed"));
  }
  file_ = owned_file_.get();
  set_up(share);
}

Runtime::Runtime(driver::File& file, host::HostMemory& memory, HostRegion region,
                 const chip::ResourceShare& share)
    : memory_(memory), file_(&file), host_(region.base, region.size) {
  set_up(share);
}

void Runtime::set_up(const chip::ResourceShare& share) {
  hl_info_hw_ip_info ip{};
  hl_info_args args{};
  args.op = HL_INFO_HW_IP_INFO;
  args.return_pointer = reinterpret_cast<std::uintptr_t>(&ip);
  args.return_size = sizeof ip;
  call(HL_IOCTL_INFO, &args, "INFO HW_IP_INFO");
  hl_info_sync_manager sm{};
  args = {};
  args.op = HL_INFO_SYNC_MANAGER;
  args.return_pointer = reinterpret_cast<std::uintptr_t>(&sm);
  args.return_size = sizeof sm;
  call(HL_IOCTL_INFO, &args, "INFO SYNC_MANAGER");
  if (driver::QueueMap::find(ip.device_id) == nullptr) {
    throw RuntimeError(
        fmt::format("synapse: device id {:#06x} is not a Gaudi1 or Gaudi2", ip.device_id));
  }
  target_ = Target::of(ip.device_id);
  target_.tpcs = static_cast<int>(std::bitset<64>(ip.tpc_enabled_mask_ext).count());
  // From what the driver leaves to user space on W_S to the end of the runtime's share.
  const std::uint32_t sob_end = (share.first_sob + share.sobs - 1) % chip::kObjectsPerManager + 1;
  target_.first_sob = sm.first_available_sync_object;
  target_.first_monitor = sm.first_available_monitor;
  if (share.stream_count() == 0 || sob_end <= target_.first_sob ||
      share.first_monitor + share.monitors <= target_.first_monitor) {
    throw RuntimeError(fmt::format(
        "synapse: the runtime's share of the chip (objects to {}, monitors to {}, {} streams) "
        "holds nothing past what the driver keeps (objects to {}, monitors to {})",
        sob_end, share.first_monitor + share.monitors, share.stream_count(), target_.first_sob,
        target_.first_monitor));
  }
  target_.sobs = sob_end - target_.first_sob;
  target_.monitors = share.first_monitor + share.monitors - target_.first_monitor;
  target_.stream = share.stream(0);
  // The share's part of the SRAM, in whole 256-byte lines, for the compiler's staging buffers.
  const auto line = [&](double fraction) {
    return static_cast<std::uint64_t>(fraction * static_cast<double>(ip.sram_size)) / 256 * 256;
  };
  sram_base_ = ip.sram_base_address + line(share.sram_from);
  target_.sram_bytes = line(share.sram_to) - line(share.sram_from);
  dram_ = core::RangeAllocator(ip.dram_base_address, ip.dram_size);
  staging_ = host_malloc(kStagingBytes);
  staging_bytes_ = kStagingBytes;
  uploads_ = make_stream(StreamKind::kHostToDevice);
}

Runtime::~Runtime() {
  try {
    synchronize_device();
  } catch (const RuntimeError&) {
    // The device failed; closing the file below releases what the context held.
  }
}

int Runtime::call(unsigned long request, void* arg, const char* what) {
  const int rc = file_->ioctl(request, arg);
  if (rc < 0)
    throw RuntimeError(
        fmt::format("synapse: {} failed: {} (errno {})", what, std::strerror(-rc), -rc));
  return rc;
}

std::uint64_t Runtime::host_malloc(std::uint64_t bytes) {
  if (bytes == 0) throw RuntimeError("synapse: host_malloc of 0 bytes");
  const std::uint64_t size = round_up(bytes, kPage);
  const auto at = host_.allocate(size, kPage);
  if (!at) {
    throw RuntimeError(
        fmt::format("synapse: host_malloc of {} bytes: the process's host memory "
                    "has {} bytes free in one piece",
                    bytes, host_.largest()));
  }
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_MAP;
  mem.in.flags = HL_MEM_USERPTR;
  mem.in.map_host.host_virt_addr = *at;
  mem.in.map_host.mem_size = size;
  if (const int rc = file_->ioctl(HL_IOCTL_MEMORY, &mem); rc < 0) {
    host_.release(*at, size);
    throw RuntimeError(
        fmt::format("synapse: mapping {} bytes of host memory: {}", size, std::strerror(-rc)));
  }
  host_buffers_[*at] = HostBuffer{size, mem.out.device_virt_addr};
  return *at;
}

void Runtime::host_free(std::uint64_t address) {
  const auto it = host_buffers_.find(address);
  if (it == host_buffers_.end())
    throw RuntimeError(
        fmt::format("synapse: host_free({:#x}): not a host_malloc'd buffer", address));
  synchronize_device();
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_UNMAP;
  mem.in.unmap.device_virt_addr = it->second.va;
  call(HL_IOCTL_MEMORY, &mem, "MEMORY UNMAP");
  host_.release(address, it->second.bytes);
  host_buffers_.erase(it);
}

void Runtime::host_write(std::uint64_t address, const void* data, std::uint64_t bytes) {
  memory_.backing().write(address, data, bytes);
}
void Runtime::host_read(std::uint64_t address, void* data, std::uint64_t bytes) {
  memory_.backing().read(address, data, bytes);
}

std::uint64_t Runtime::device_malloc(std::uint64_t bytes) {
  if (bytes == 0) throw RuntimeError("synapse: device_malloc of 0 bytes");
  const std::uint64_t size = round_up(bytes, kAlign);
  const auto at = dram_.allocate(size, kAlign);
  if (!at) {
    throw RuntimeError(
        fmt::format("synapse: device_malloc of {} bytes: the device has {} bytes "
                    "free in one piece",
                    bytes, dram_.largest()));
  }
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_ALLOC;
  mem.in.alloc.mem_size = size;
  if (const int rc = file_->ioctl(HL_IOCTL_MEMORY, &mem); rc < 0) {
    dram_.release(*at, size);
    throw RuntimeError(
        fmt::format("synapse: device_malloc of {} bytes: {}", bytes, std::strerror(-rc)));
  }
  device_buffers_[*at] = size;
  return *at;
}

void Runtime::device_free(std::uint64_t address) {
  const auto it = device_buffers_.find(address);
  if (it == device_buffers_.end()) {
    throw RuntimeError(
        fmt::format("synapse: device_free({:#x}): not a device_malloc'd buffer", address));
  }
  synchronize_device();
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_FREE;
  mem.in.alloc.mem_size = it->second;
  call(HL_IOCTL_MEMORY, &mem, "MEMORY FREE");
  dram_.release(address, it->second);
  device_buffers_.erase(it);
}

StreamId Runtime::create_stream(StreamKind kind) {
  streams_.push_back(make_stream(kind));
  return static_cast<StreamId>(streams_.size() - 1);
}

Runtime::Stream Runtime::make_stream(StreamKind kind) {
  Stream s;
  s.kind = kind;
  s.queue = queue_of(map(), kind);
  hl_cb_args cb{};
  cb.in.op = HL_CB_OP_CREATE;
  cb.in.cb_size = kCbBytes;
  call(HL_IOCTL_CB, &cb, "CB CREATE");
  s.cb_handle = cb.out.cb_handle;
  if (const int rc = file_->mmap(s.cb_handle, kCbBytes, s.cb_address); rc < 0)
    throw RuntimeError(fmt::format("synapse: mapping a command buffer: {}", std::strerror(-rc)));
  return s;
}

Runtime::Stream& Runtime::stream(StreamId id) {
  if (id < 0 || static_cast<std::size_t>(id) >= streams_.size())
    throw RuntimeError(fmt::format("synapse: stream {} does not exist", id));
  return streams_[static_cast<std::size_t>(id)];
}

// The device address of host bytes [host, host + bytes): inside one mapped buffer.
std::uint64_t Runtime::device_va(std::uint64_t host, std::uint64_t bytes) {
  auto it = host_buffers_.upper_bound(host);
  if (it != host_buffers_.begin()) {
    --it;
    if (host + bytes <= it->first + it->second.bytes) return it->second.va + (host - it->first);
  }
  throw RuntimeError(
      fmt::format("synapse: host range [{:#x}, +{}) is not inside one host_malloc'd "
                  "buffer",
                  host, bytes));
}

void Runtime::wait_seq(std::uint64_t seq) {
  if (seq == 0 || completed_.count(seq) != 0) return;
  hl_wait_cs_args args{};
  args.in.seq = seq;
  args.in.timeout_us = kWaitUs;
  call(HL_IOCTL_WAIT_CS, &args, "WAIT_CS");
  if (args.out.status != HL_WAIT_CS_STATUS_COMPLETED) {
    throw RuntimeError(fmt::format("synapse: CS {} did not complete (WAIT_CS status {}{})", seq,
                                   args.out.status,
                                   args.out.flags & HL_WAIT_CS_STATUS_FLAG_GONE ? ", gone" : ""));
  }
  completed_[seq] = static_cast<core::TimePs>(args.out.timestamp_nsec) * 1000;
}

void Runtime::before_submit(Stream& s) {
  for (std::uint64_t seq : s.after) wait_seq(seq);
  s.after.clear();
  wait_seq(s.last);
}

std::uint64_t Runtime::submit(Stream& s, const std::vector<std::uint8_t>& packets,
                              const std::vector<QueueBuffer>& internal) {
  if (packets.size() > kCbBytes)
    throw RuntimeError(fmt::format("synapse: a command buffer of {} bytes (at most {})",
                                   packets.size(), kCbBytes));
  before_submit(s);
  memory_.backing().write(s.cb_address, packets.data(), packets.size());
  std::vector<hl_cs_chunk> chunks;
  for (const QueueBuffer& b : internal) {
    hl_cs_chunk c{};
    c.cb_handle = b.address;  // an internal job's CB is named by its device address
    c.queue_index = b.queue;
    c.cb_size = b.bytes;
    chunks.push_back(c);
  }
  hl_cs_chunk own{};
  own.cb_handle = s.cb_handle;
  own.queue_index = s.queue;
  own.cb_size = static_cast<std::uint32_t>(packets.size());
  chunks.push_back(own);
  hl_cs_args cs{};
  cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
  cs.in.num_chunks_execute = static_cast<std::uint32_t>(chunks.size());
  call(HL_IOCTL_CS, &cs, "CS");
  s.last = cs.out.seq;
  return cs.out.seq;
}

void Runtime::memcpy(StreamId id, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
  Stream& s = stream(id);
  if (bytes == 0) return;
  std::uint64_t from = src, to = dst;
  switch (s.kind) {
    case StreamKind::kHostToDevice:
      from = device_va(src, bytes);
      break;
    case StreamKind::kDeviceToHost:
      to = device_va(dst, bytes);
      break;
    case StreamKind::kDeviceToDevice:
      break;
    default:
      throw RuntimeError(
          fmt::format("synapse: memcpy on stream {}, which is not a copy stream", id));
  }
  std::vector<Packet> packets;
  for (std::uint64_t done = 0; done < bytes; done += kMaxDmaBytes) {
    packets.push_back(lin_dma(from + done, to + done, std::min(kMaxDmaBytes, bytes - done)));
  }
  submit(s, chip::spec::PacketCodec().encode(packets));
}

// Device bytes written from the host: through the staging buffer, a piece at a time.
void Runtime::upload(std::uint64_t device, const std::vector<std::uint8_t>& bytes) {
  for (std::uint64_t done = 0; done < bytes.size(); done += staging_bytes_) {
    const std::uint64_t n = std::min<std::uint64_t>(staging_bytes_, bytes.size() - done);
    wait_seq(uploads_.last);
    host_write(staging_, bytes.data() + done, n);
    const std::uint64_t va = device_va(staging_, n);
    submit(uploads_,
           chip::spec::PacketCodec().encode(std::vector<Packet>{lin_dma(va, device + done, n)}));
  }
  wait_seq(uploads_.last);
}

std::uint64_t Runtime::program(const Recipe& recipe, bool& uploaded) {
  uploaded = false;
  if (recipe.program_bytes == 0) return 0;
  if (auto it = programs_.find(recipe.fingerprint); it != programs_.end()) return it->second.first;
  std::vector<std::uint8_t> image(recipe.program_bytes, 0);
  for (const KernelBinary& b : recipe.program)
    std::copy(b.code.begin(), b.code.end(), image.begin() + static_cast<std::ptrdiff_t>(b.offset));
  const std::uint64_t at = device_malloc(image.size());
  upload(at, image);
  programs_[recipe.fingerprint] = {at, image.size()};
  uploaded = true;
  return at;
}

// The engine queues' command buffers of one launch, in device memory.
const Runtime::Uploaded& Runtime::command_buffers(const Recipe& recipe,
                                                  const std::vector<std::uint64_t>& bases,
                                                  bool& uploaded) {
  const std::string key = fmt::format("{:x}@{:x}", recipe.fingerprint, fmt::join(bases, ","));
  uploaded = false;
  if (auto it = command_buffers_.find(key); it != command_buffers_.end()) return it->second;
  if (command_buffers_.size() >= kCachedCommandBuffers) {
    synchronize_device();
    for (auto& [k, u] : command_buffers_) device_free(u.address);
    command_buffers_.clear();
  }
  std::vector<std::uint32_t> queues;
  for (const Stage& st : recipe.stages) {
    for (const EngineJob& j : st.jobs) {
      if (std::find(queues.begin(), queues.end(), j.queue) == queues.end())
        queues.push_back(j.queue);
    }
  }
  if (queues.size() + 1 > target_.monitors)
    throw RuntimeError("synapse: the recipe uses more queues than the device has monitors");
  std::map<std::uint32_t, std::vector<Packet>> cbs;
  std::map<std::uint32_t, std::vector<std::uint8_t>> encoded;
  const chip::spec::PacketCodec codec;
  for (std::uint32_t q = 0; q < queues.size(); ++q)
    monitor_payload(cbs[queues[q]], recipe.first_monitor + q, *map().queue(queues[q]));
  const auto address = [&](const SectionAddress& a) { return bases.at(a.section) + a.offset; };
  for (std::uint32_t k = 0; k < recipe.stages.size(); ++k) {
    const Stage& st = recipe.stages[k];
    for (const EngineJob& j : st.jobs) {
      std::vector<Packet>& cb = cbs[j.queue];
      const auto slot = static_cast<std::uint32_t>(
          std::find(queues.begin(), queues.end(), j.queue) - queues.begin());
      for (std::uint32_t w : st.waits) {
        wait_for(cb, recipe.first_monitor + slot, recipe.first_sob + w,
                 static_cast<std::uint32_t>(recipe.stages[w].jobs.size()));
      }
      if (st.engine == Engine::kDma) {
        cb.push_back(lin_dma(address(j.src), address(j.dst), j.bytes));
        Packet done = msg_long(sob_address(recipe.first_sob + k),
                               chip::spec::encode_sob_write({1, true, false}));
        done.barriers(true, true, true);
        cb.push_back(done);
        continue;
      }
      std::vector<core::RegisterRun> runs = j.registers;
      for (const Relocation& r : j.relocations) {
        auto& v = runs[r.run].values;
        const std::uint64_t a =
            (static_cast<std::uint64_t>(v[r.index + 1]) << 32 | v[r.index]) + bases.at(r.section);
        v[r.index] = static_cast<std::uint32_t>(a);
        v[r.index + 1] = static_cast<std::uint32_t>(a >> 32);
      }
      std::vector<std::uint8_t>& bytes = encoded[j.queue];
      for (const Packet& p : cb) codec.encode(p, bytes);
      cb.clear();
      codec.encode_registers(runs, bytes);
      Packet wreg("WREG_32");
      wreg.set("reg_offset", j.execute).set("value", 1);
      cb.push_back(wreg);
    }
  }
  for (auto& [q, cb] : cbs) {
    for (const Packet& p : cb) codec.encode(p, encoded[q]);
  }
  Uploaded u;
  std::vector<std::uint8_t> blob;
  for (std::uint32_t q : queues) {
    const std::vector<std::uint8_t>& bytes = encoded[q];
    const std::uint64_t offset = blob.size();
    blob.insert(blob.end(), bytes.begin(), bytes.end());
    blob.resize(round_up(blob.size(), kAlign), 0);
    u.buffers.push_back({q, offset, static_cast<std::uint32_t>(bytes.size())});
  }
  u.bytes = blob.size();
  u.address = device_malloc(blob.size());
  for (QueueBuffer& b : u.buffers) b.address += u.address;
  upload(u.address, blob);
  uploaded = true;
  return command_buffers_.emplace(key, std::move(u)).first->second;
}

// The completion job: the last stage of each engine class has ended, so every stage has (each
// class runs its stages in turn); the recipe's sync objects are cleared for the next launch.
std::vector<std::uint8_t> Runtime::completion(const Recipe& recipe, std::uint32_t monitor,
                                              std::uint32_t queue) const {
  std::vector<Packet> p;
  monitor_payload(p, monitor, *map().queue(queue));
  std::map<Engine, std::uint32_t> last;
  for (std::uint32_t k = 0; k < recipe.stages.size(); ++k) last[recipe.stages[k].engine] = k;
  for (const auto& [engine, k] : last) {
    wait_for(p, monitor, recipe.first_sob + k,
             static_cast<std::uint32_t>(recipe.stages[k].jobs.size()));
  }
  for (std::uint32_t k = 0; k < recipe.stages.size(); ++k) {
    Packet clear = msg_long(sob_address(recipe.first_sob + k),
                            chip::spec::encode_sob_write({0, false, false}));
    clear.barriers(false, true, true);
    p.push_back(clear);
  }
  return chip::spec::PacketCodec().encode(p);
}

LaunchInfo Runtime::launch(StreamId id, const Recipe& recipe,
                           const std::vector<std::uint64_t>& tensors, std::uint64_t workspace) {
  Stream& s = stream(id);
  if (s.kind != StreamKind::kCompute)
    throw RuntimeError(
        fmt::format("synapse: launch on stream {}, which is not a compute stream", id));
  LaunchInfo info;
  const Uploaded& u = uploaded(recipe, tensors, workspace, info);
  wait_seq(last_launch_);
  const auto monitor = recipe.first_monitor + static_cast<std::uint32_t>(u.buffers.size());
  info.seq = submit(s, completion(recipe, monitor, s.queue), u.buffers);
  last_launch_ = info.seq;
  return info;
}

LaunchInfo Runtime::prepare(const Recipe& recipe, const std::vector<std::uint64_t>& tensors,
                            std::uint64_t workspace) {
  LaunchInfo info;
  uploaded(recipe, tensors, workspace, info);
  wait_seq(uploads_.last);
  return info;
}

const Runtime::Uploaded& Runtime::uploaded(const Recipe& recipe,
                                           const std::vector<std::uint64_t>& tensors,
                                           std::uint64_t workspace, LaunchInfo& info) {
  if (tensors.size() != recipe.persistent.size()) {
    throw RuntimeError(
        fmt::format("synapse: the recipe takes {} persistent tensors, {} addresses "
                    "given",
                    recipe.persistent.size(), tensors.size()));
  }
  if (recipe.workspace_bytes > 0 && workspace == 0)
    throw RuntimeError(
        fmt::format("synapse: the recipe needs a workspace of {} bytes", recipe.workspace_bytes));
  if (recipe.device_id != target_.device_id) {
    throw RuntimeError(
        fmt::format("synapse: the recipe was compiled for device {:#06x}, this is {:#06x}",
                    recipe.device_id, target_.device_id));
  }
  if (recipe.first_sob != target_.first_sob || recipe.first_monitor != target_.first_monitor ||
      recipe.first_sob + recipe.stages.size() > target_.first_sob + target_.sobs) {
    throw RuntimeError("synapse: the recipe was compiled for another device's sync objects");
  }
  if (recipe.sram_bytes > target_.sram_bytes) {
    throw RuntimeError(
        fmt::format("synapse: the recipe stages {} bytes in SRAM, the runtime's part holds {}",
                    recipe.sram_bytes, target_.sram_bytes));
  }
  std::vector<std::uint64_t> bases{program(recipe, info.uploaded_program), workspace, sram_base_};
  bases.insert(bases.end(), tensors.begin(), tensors.end());
  return command_buffers(recipe, bases, info.uploaded_command_buffers);
}

Event Runtime::record(StreamId id) {
  Stream& s = stream(id);
  return Event{id, s.last, core::now_ps()};
}

void Runtime::wait(StreamId id, const Event& event) { stream(id).after.push_back(event.seq); }

void Runtime::synchronize(const Event& event) { wait_seq(event.seq); }
void Runtime::synchronize(StreamId id) { wait_seq(stream(id).last); }
void Runtime::synchronize_device() {
  wait_seq(uploads_.last);
  for (Stream& s : streams_) wait_seq(s.last);
}

core::TimePs Runtime::elapsed(const Event& from, const Event& to) {
  const auto when = [&](const Event& e) {
    wait_seq(e.seq);
    return e.seq == 0 ? e.recorded : std::max(e.recorded, completed_.at(e.seq));
  };
  const core::TimePs a = when(from), b = when(to);
  return b > a ? b - a : 0;
}

}  // namespace podsim::synapse
