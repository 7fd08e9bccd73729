// The uAPI under random calls: a fixed number of ioctls, mmaps and reopenings with random
// requests, opcodes, flags, sizes, handles, queue ids, sequence numbers and command-buffer bytes
// (pointers are either null or point at buffers as large as the call may read or write, as a
// kernel's copy_from_user would otherwise refuse them). Nothing may crash or trip the sanitizers,
// every call answers 0 or an errno the Linux driver uses, and afterwards the device still runs a
// copy correctly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "collectives/system_file.h"
#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"
#include "tests/driver/with_device.h"

namespace podsim::driver {
namespace {

constexpr int kIterations = 5000;
constexpr std::uint64_t kSeed = 20261125;

const std::set<int> kErrnos = {0,       -EINVAL, -EFAULT, -ENOTTY,    -EBUSY,     -EAGAIN,
                               -ENOMEM, -EPERM,  -EIO,    -ETIMEDOUT, -EOPNOTSUPP};

class Fuzzer {
 public:
  Fuzzer(Device& device, system::SystemModel& model) : device_(device), model_(model) {}

  void run() {
    reopen();
    for (int i = 0; i < kIterations; ++i) {
      const int rc = one_call();
      ASSERT_TRUE(kErrnos.count(rc)) << "call " << i << " answered " << rc;
      ++answers_[rc];
      // As a program would, give a busy device (a reset under way) or a full ring some time.
      if (rc == -EBUSY || rc == -EAGAIN) sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
    }
  }
  std::unique_ptr<File>& file() { return file_; }
  // How many calls got each answer: a fuzzer whose calls all fail early tests little.
  const std::map<int, int>& answers() const { return answers_; }
  int submitted() const { return submitted_; }

 private:
  std::uint64_t any() {
    switch (rng_() % 6) {
      case 0:
        return 0;
      case 1:
        return rng_() % 16;
      case 2:
        return rng_() % 200;  // queue ids, ops, small sizes
      case 3:
        return handles_.empty() ? rng_() : handles_[rng_() % handles_.size()];
      case 4:
        return 1 + rng_() % 64;  // sequence numbers
      default:
        return rng_();
    }
  }
  std::uint32_t any32() { return static_cast<std::uint32_t>(any()); }

  void reopen() {
    file_.reset();
    handles_.clear();
    cbs_.clear();
    seqs_.clear();
    ASSERT_EQ(device_.open(false, file_), 0);
    if (!control_) {
      ASSERT_EQ(device_.open(true, control_), 0);
    }
  }

  int one_call() {
    switch (rng_() % 10) {
      case 0:
        return info();
      case 1:
      case 2:
        return cb();
      case 3:
      case 4:
        return cs();
      case 5:
        return wait();
      case 6:
        return memory();
      case 7:
        return mmap();
      case 8: {
        std::vector<std::uint8_t> junk(64);
        for (auto& b : junk) b = static_cast<std::uint8_t>(rng_());
        const unsigned long request = rng_() % 3 == 0 ? rng_() : _IOWR('H', rng_() % 9, int);
        return (rng_() % 2 ? file_ : control_)->ioctl(request, junk.data());
      }
      default:
        if (rng_() % 20 == 0) reopen();
        return debug();
    }
  }

  int info() {
    hl_info_args a{};
    a.return_pointer = rng_() % 8 ? reinterpret_cast<std::uintptr_t>(buffer_.data()) : 0;
    a.return_size = static_cast<std::uint32_t>(rng_() % (buffer_.size() + 1));
    a.op = static_cast<std::uint32_t>(rng_() % 45);
    a.dcore_id = any32();
    a.pad = rng_() % 10 == 0 ? 1 : 0;
    return (rng_() % 2 ? file_ : control_)->ioctl(HL_IOCTL_INFO, &a);
  }

  int cb() {
    hl_cb_args a{};
    a.in.op = rng_() % 4;
    a.in.cb_size = static_cast<std::uint32_t>(rng_() % 3 ? rng_() % 0x10000 : any());
    a.in.cb_handle = any();
    a.in.flags = rng_() % 4 == 0 ? any32() : 0;
    const int rc = file_->ioctl(HL_IOCTL_CB, &a);
    if (rc == 0 && a.in.op == HL_CB_OP_CREATE) {
      handles_.push_back(a.out.cb_handle);
      cbs_.emplace_back(a.out.cb_handle, a.in.cb_size);
    }
    if (rc == 0 && a.in.op == HL_CB_OP_CREATE && rng_() % 2) fill_cb(a.out.cb_handle);
    return rc;
  }

  // Random bytes or random packets in a new CB, as a program's bugs would put there.
  void fill_cb(std::uint64_t handle) {
    std::uint64_t address = 0;
    if (file_->mmap(handle, 4096, address) != 0) return;
    std::vector<std::uint8_t> bytes(256);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng_());
    if (rng_() % 2) {
      chip::spec::Packet p("MSG_LONG");
      p.set("addr", any()).set("value", any32());
      bytes = chip::spec::PacketCodec().encode({p, chip::spec::Packet("NOP")});
    }
    model_.host(0).memory().backing().write(address, bytes.data(), bytes.size());
    file_->munmap(handle);
  }

  // Mostly chunks a program could mean (a CB of its own on a host-facing queue, a buffer in SRAM
  // on an internal one), some junk.
  hl_cs_chunk chunk() {
    hl_cs_chunk c{};
    const auto pick = rng_() % 4;
    if (pick < 2 && !cbs_.empty()) {
      const auto& [handle, size] = cbs_[rng_() % cbs_.size()];
      c.cb_handle = handle;
      c.queue_index = static_cast<std::uint32_t>(rng_() % 8);
      c.cb_size = 8 + 8 * static_cast<std::uint32_t>(rng_() % std::max<std::uint32_t>(1, size / 8));
    } else if (pick == 2) {
      c.cb_handle = 0x7FF0000000 + 8 * (rng_() % 0x20000);
      c.queue_index = static_cast<std::uint32_t>(9 + rng_() % 104);
      c.cb_size = static_cast<std::uint32_t>(8 * (1 + rng_() % 32));
    } else {
      c.cb_handle = any();
      c.queue_index = any32();
      c.cb_size = any32();
    }
    if (rng_() % 6 == 0) {  // a sync-stream chunk (the same words as a CB's handle and size)
      c.signal_seq_arr = rng_() % 8 ? reinterpret_cast<std::uintptr_t>(&seq_) : 0;
      c.num_signal_seq_arr = static_cast<std::uint32_t>(rng_() % 3);
    }
    return c;
  }

  int cs() {
    std::vector<hl_cs_chunk> chunks(1 + rng_() % 4);
    for (hl_cs_chunk& c : chunks) c = chunk();
    seq_ = seqs_.empty() || rng_() % 4 == 0 ? any() : seqs_[rng_() % seqs_.size()];
    hl_cs_args a{};
    a.in.chunks_execute = rng_() % 10 ? reinterpret_cast<std::uintptr_t>(chunks.data()) : 0;
    a.in.num_chunks_execute = static_cast<std::uint32_t>(rng_() % 5 ? chunks.size() : any());
    a.in.num_chunks_execute = std::min<std::uint32_t>(a.in.num_chunks_execute, chunks.size());
    a.in.chunks_restore = rng_() % 4 == 0 ? reinterpret_cast<std::uintptr_t>(chunks.data()) : 0;
    a.in.num_chunks_restore =
        a.in.chunks_restore != 0 || rng_() % 10 == 0
            ? std::min<std::uint32_t>(any32(), static_cast<std::uint32_t>(chunks.size()))
            : 0;
    a.in.cs_flags = rng_() % 3 ? 0 : 1u << (rng_() % 18);
    if (rng_() % 6 == 0) a.in.cs_flags = rng_() % 2 ? HL_CS_FLAGS_SIGNAL : HL_CS_FLAGS_WAIT;
    a.in.timeout = static_cast<std::uint32_t>(rng_() % 4);
    const int rc = file_->ioctl(HL_IOCTL_CS, &a);
    if (rc == 0 && a.out.seq != ~0ull) seqs_.push_back(a.out.seq);
    submitted_ += rc == 0 ? 1 : 0;
    return rc;
  }

  int wait() {
    std::uint64_t seqs[32];
    for (auto& s : seqs) s = 1 + rng_() % 64;
    hl_wait_cs_args a{};
    a.in.flags = rng_() % 3 ? 0 : 1u << (rng_() % 6);
    a.in.seq = a.in.flags & HL_WAIT_CS_FLAGS_MULTI_CS ? reinterpret_cast<std::uintptr_t>(seqs)
               : seqs_.empty()                        ? any()
                                                      : seqs_[rng_() % seqs_.size()];
    a.in.timeout_us = rng_() % 2 ? rng_() % 1000 : any();
    a.in.seq_arr_len = static_cast<std::uint8_t>(rng_() % 33);
    return file_->ioctl(HL_IOCTL_WAIT_CS, &a);
  }

  int memory() {
    hl_mem_args a{};
    a.in.op = static_cast<std::uint32_t>(rng_() % 8);
    a.in.flags = static_cast<std::uint32_t>(rng_() % 16);
    a.in.map_host.host_virt_addr = rng_() % 2 ? rng_() % (1ull << 32) : any();
    a.in.map_host.hint_addr = rng_() % 2 ? 0x1000000000000 + (rng_() % 64) * 4096 : any();
    a.in.map_host.mem_size = rng_() % 2 ? rng_() % (1 << 22) : any();
    if (a.in.op == HL_MEM_OP_UNMAP && !mapped_.empty()) {
      a.in.unmap.device_virt_addr = mapped_[rng_() % mapped_.size()];
    }
    const int rc = file_->ioctl(HL_IOCTL_MEMORY, &a);
    if (rc == 0 && a.in.op == HL_MEM_OP_MAP) mapped_.push_back(a.out.device_virt_addr);
    return rc;
  }

  int mmap() {
    std::uint64_t address = 0;
    const std::uint64_t handle = any();
    if (rng_() % 2) return file_->munmap(handle);
    return file_->mmap(handle, rng_() % 3 ? 4096 : any(), address);
  }

  int debug() {
    hl_debug_args a{};
    a.op = static_cast<std::uint32_t>(rng_() % 10);
    a.enable = static_cast<std::uint32_t>(rng_() % 2);
    return file_->ioctl(HL_IOCTL_DEBUG, &a);
  }

  Device& device_;
  system::SystemModel& model_;
  std::mt19937_64 rng_{kSeed};
  std::unique_ptr<File> file_, control_;
  std::vector<std::uint64_t> handles_, mapped_, seqs_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> cbs_;  // handle, size
  std::vector<std::uint8_t> buffer_ = std::vector<std::uint8_t>(4096);
  std::uint64_t seq_ = 0;
  std::map<int, int> answers_;
  int submitted_ = 0;
};

TEST(DriverFuzz, RandomCallsAreAnsweredAndTheDeviceStillWorks) {
  test::with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    Fuzzer fuzzer(device, model);
    fuzzer.run();
    for (const auto& [rc, n] : fuzzer.answers()) std::printf("answer %d: %d calls\n", rc, n);
    EXPECT_GT(fuzzer.answers().at(0), kIterations / 10) << "too few calls got through";
    std::printf("command submissions accepted: %d\n", fuzzer.submitted());
    EXPECT_GT(fuzzer.submitted(), kIterations / 100) << "too few submissions ran";
    // A plain copy host -> HBM still runs and completes.
    File& file = *fuzzer.file();
    hl_cb_args cb{};
    cb.in.op = HL_CB_OP_CREATE;
    cb.in.cb_size = 4096;
    ASSERT_EQ(file.ioctl(HL_IOCTL_CB, &cb), 0);
    std::uint64_t address = 0;
    ASSERT_EQ(file.mmap(cb.out.cb_handle, 4096, address), 0);
    const std::uint64_t window = model.chip(0).config().address_map.host.value;
    const std::uint64_t hbm = device.properties().dram_base + (1ull << 30);
    chip::spec::Packet copy("LIN_DMA");
    copy.set("tsize", 4096).set("lin", 1).set("src_addr", window + 0x200000).set("dst_addr", hbm);
    copy.barriers(false, true, false);
    const auto bytes = chip::spec::PacketCodec().encode({copy});
    model.host(0).memory().backing().write(address, bytes.data(), bytes.size());
    const std::vector<std::uint8_t> data(4096, 0xC3);
    model.host(0).memory().backing().write(0x200000, data.data(), data.size());
    hl_cs_chunk chunk{};
    chunk.cb_handle = cb.out.cb_handle;
    chunk.queue_index = GAUDI_QUEUE_ID_DMA_0_3;
    chunk.cb_size = static_cast<std::uint32_t>(bytes.size());
    hl_cs_args cs{};
    cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(&chunk);
    cs.in.num_chunks_execute = 1;
    int rc = -EAGAIN;
    for (int tries = 0; rc == -EAGAIN && tries < 100; ++tries) {  // a ring may still be full
      rc = file.ioctl(HL_IOCTL_CS, &cs);
      if (rc == -EAGAIN) sc_core::wait(sc_core::sc_time(1, sc_core::SC_SEC));
    }
    ASSERT_EQ(rc, 0);
    hl_wait_cs_args wait{};
    wait.in.seq = cs.out.seq;
    wait.in.timeout_us = 60000000;
    ASSERT_EQ(file.ioctl(HL_IOCTL_WAIT_CS, &wait), 0);
    EXPECT_EQ(wait.out.status, HL_WAIT_CS_STATUS_COMPLETED);
    std::vector<std::uint8_t> got(4096);
    model.chip(0).debug_read(hbm, got.data(), got.size());
    EXPECT_EQ(got, data);
  });
}

}  // namespace
}  // namespace podsim::driver
