// The driver's files and ioctls on a modeled Gaudi1 (hls1), probed through PCIe: open rules,
// INFO as user space reads it, engine idle masks read from the engines through BAR2, command
// buffers with mmap by handle, and the kernel's errno for bad arguments.
#include <gtest/gtest.h>

#include <cerrno>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "collectives/system_file.h"
#include "driver/device.h"
#include "drm/habanalabs_accel.h"
#include "hw/chip/chip.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/dma/dma_descriptor.h"
#include "hw/system/host_side.h"
#include "hw/system/system_model.h"
#include "podsim/spec/gaudi1.h"
#include "tests/driver/with_device.h"

namespace podsim::driver {
namespace {

constexpr std::uint64_t kCfgBarBase = 0x7FF8000000;  // Gaudi1's BAR2 on chip [C7]
using test::kKernelMemory;
using test::with_device;

std::unique_ptr<File> open_node(Device& device, bool control) {
  std::unique_ptr<File> file;
  EXPECT_EQ(device.open(control, file), 0);
  return file;
}

template <class T>
int info(File& file, std::uint32_t op, T& out, std::uint32_t size = sizeof(T)) {
  hl_info_args args{};
  args.return_pointer = reinterpret_cast<std::uintptr_t>(&out);
  args.return_size = size;
  args.op = op;
  return file.ioctl(HL_IOCTL_INFO, &args);
}

int cb_call(File& file, hl_cb_args& args) { return file.ioctl(HL_IOCTL_CB, &args); }

// The first kernel memory left after probe: past the event queue's ring (256 x 16 bytes).
constexpr std::uint64_t kFirstFree = kKernelMemory.base + 4096;

std::uint64_t create_cb(File& file, std::uint32_t size) {
  hl_cb_args args{};
  args.in.op = HL_CB_OP_CREATE;
  args.in.cb_size = size;
  EXPECT_EQ(cb_call(file, args), 0);
  return args.out.cb_handle;
}

TEST(DriverDevice, TheComputeNodeOpensOnceAndTheControlNodeAnswersInfoOnly) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel&) {
    auto compute = open_node(device, false);
    std::unique_ptr<File> second;
    EXPECT_EQ(device.open(false, second), -EBUSY);
    auto control = open_node(device, true);
    hl_info_hw_ip_info ip{};
    EXPECT_EQ(info(*control, HL_INFO_HW_IP_INFO, ip), 0);
    EXPECT_EQ(ip.device_id, 0x1000u);
    hl_cb_args args{};
    args.in.op = HL_CB_OP_CREATE;
    args.in.cb_size = 4096;
    EXPECT_EQ(cb_call(*control, args), -ENOTTY);
    compute.reset();
    compute = open_node(device, false);
    hl_open_stats_info stats{};
    EXPECT_EQ(info(*control, HL_INFO_OPEN_STATS, stats), 0);
    EXPECT_EQ(stats.open_counter, 2u);
    EXPECT_EQ(stats.is_compute_ctx_active, 1);
  });
}

TEST(DriverDevice, HwIpInfoDescribesTheChipAndShortBuffersGetWhatFits) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const chip::ChipConfig& chip = model.chip(0).config();
    hl_info_hw_ip_info ip{};
    ASSERT_EQ(info(*file, HL_INFO_HW_IP_INFO, ip), 0);
    EXPECT_EQ(ip.sram_base_address, chip.address_map.sram.value);
    EXPECT_EQ(ip.sram_size, chip.sram.size.bytes);
    // The driver keeps HBM's first 512 MiB for firmware and page tables.
    EXPECT_EQ(ip.dram_base_address, chip.address_map.hbm.value + 0x20000000);
    EXPECT_EQ(ip.dram_size, chip::memory_size(chip) - 0x20000000);
    EXPECT_EQ(ip.dram_enabled, 1);
    EXPECT_EQ(ip.tpc_enabled_mask, 0xFF);
    EXPECT_EQ(ip.server_type, HL_SERVER_GAUDI_HLS1);
    EXPECT_STREQ(reinterpret_cast<const char*>(ip.card_name), chip.name.c_str());
    std::uint64_t words[2] = {~0ull, ~0ull};
    ASSERT_EQ(info(*file, HL_INFO_HW_IP_INFO, words, 8), 0);
    EXPECT_EQ(words[0], chip.address_map.sram.value);
    EXPECT_EQ(words[1], ~0ull);  // beyond return_size: untouched
    hl_info_sync_manager sm{};
    EXPECT_EQ(info(*file, HL_INFO_SYNC_MANAGER, sm), 0);
    EXPECT_EQ(sm.first_available_sync_object, 144u);
    EXPECT_EQ(sm.first_available_monitor, 72u);
    hl_info_device_status status{};
    EXPECT_EQ(info(*file, HL_INFO_DEVICE_STATUS, status), 0);
    EXPECT_EQ(status.status, HL_DEVICE_STATUS_OPERATIONAL);
    hl_info_clk_rate clk{};
    EXPECT_EQ(info(*file, HL_INFO_CLK_RATE, clk), 0);
    EXPECT_EQ(clk.cur_clk_rate_mhz, static_cast<std::uint32_t>(chip.tpc.core.clock.hertz / 1e6));
    hl_info_dram_usage usage{};
    EXPECT_EQ(info(*file, HL_INFO_DRAM_USAGE, usage), 0);
    EXPECT_EQ(usage.dram_free_mem, ip.dram_size);
  });
}

// A DMA engine started through BAR2 shows busy in HW_IDLE until its transfer ends.
TEST(DriverDevice, HwIdleReadsTheEnginesThroughTheBar) {
  with_device([](Device& device, host::HostCpu& cpu, system::SystemModel&) {
    auto file = open_node(device, false);
    hl_info_hw_idle idle{};
    ASSERT_EQ(info(*file, HL_INFO_HW_IDLE, idle), 0);
    EXPECT_EQ(idle.is_idle, 1u);
    EXPECT_EQ(idle.busy_engines_mask, 0u);
    const std::uint64_t engine = chip::Chip::dma_core_base(3);
    const std::uint64_t bar2 = device.pci().bar(2).address;
    for (const auto& [offset, value] :
         dma::register_writes(dma::DmaJob::copy(0, 256 << 20, 256 << 20))) {
      ASSERT_EQ(cpu.write(bar2 + (engine + offset - kCfgBarBase), &value, 4), tlm::TLM_OK_RESPONSE);
    }
    ASSERT_EQ(info(*file, HL_INFO_HW_IDLE, idle), 0);
    EXPECT_EQ(idle.is_idle, 0u);
    EXPECT_EQ(idle.busy_engines_mask, 1u << GAUDI_ENGINE_ID_DMA_3);
    EXPECT_EQ(idle.busy_engines_mask_ext[0], 1u << GAUDI_ENGINE_ID_DMA_3);
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
    ASSERT_EQ(info(*file, HL_INFO_HW_IDLE, idle), 0);
    EXPECT_EQ(idle.is_idle, 1u);
  });
}

TEST(DriverDevice, BadArgumentsGetTheKernelsErrno) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel&) {
    auto file = open_node(device, false);
    hl_info_args args{};
    EXPECT_EQ(file->ioctl(_IOWR('X', 1, struct hl_info_args), &args), -ENOTTY);
    EXPECT_EQ(file->ioctl(_IOWR('H', 7, struct hl_info_args), &args), -ENOTTY);
    EXPECT_EQ(file->ioctl(_IOWR('H', 1, std::uint64_t), &args), -ENOTTY);  // wrong size
    EXPECT_EQ(file->ioctl(HL_IOCTL_INFO, nullptr), -EFAULT);
    hl_info_hw_ip_info ip{};
    EXPECT_EQ(info(*file, HL_INFO_HW_IP_INFO, ip, 0), -EINVAL);
    EXPECT_EQ(info(*file, 5, ip), -EINVAL);
    EXPECT_EQ(info(*file, 99, ip), -EINVAL);
    args.return_pointer = reinterpret_cast<std::uintptr_t>(&ip);
    args.return_size = sizeof ip;
    args.op = HL_INFO_HW_IP_INFO;
    args.pad = 1;
    EXPECT_EQ(file->ioctl(HL_IOCTL_INFO, &args), -EINVAL);
    hl_info_sync_manager sm{};
    args = {};
    args.return_pointer = reinterpret_cast<std::uintptr_t>(&sm);
    args.return_size = sizeof sm;
    args.op = HL_INFO_SYNC_MANAGER;
    args.dcore_id = 4;
    EXPECT_EQ(file->ioctl(HL_IOCTL_INFO, &args), -EINVAL);
    std::uint32_t small = 0;
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, small), -EINVAL);
    std::uint64_t events = 1;
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, events), 0);
    EXPECT_EQ(events, 0u);
    hl_power_info power{};
    EXPECT_EQ(info(*file, HL_INFO_POWER, power), -EOPNOTSUPP);
    struct hl_debug_args debug {};
    EXPECT_EQ(file->ioctl(HL_IOCTL_DEBUG, &debug), -EFAULT);  // not in debug mode
    debug.op = HL_DEBUG_OP_SET_MODE;
    debug.enable = 1;
    EXPECT_EQ(file->ioctl(HL_IOCTL_DEBUG, &debug), 0);
    EXPECT_EQ(file->ioctl(HL_IOCTL_DEBUG, &debug), -EFAULT);  // already
    debug.op = HL_DEBUG_OP_ETR;
    EXPECT_EQ(file->ioctl(HL_IOCTL_DEBUG, &debug), -EOPNOTSUPP);
    debug.op = 8;
    EXPECT_EQ(file->ioctl(HL_IOCTL_DEBUG, &debug), -EINVAL);
  });
}

TEST(DriverDevice, CommandBuffersAreCreatedMappedOnceAndDestroyed) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const std::uint64_t handle = create_cb(*file, 5000);
    EXPECT_EQ(handle, 0x1000000000001000ull);  // the CB type in bits 63:59, id 1 in pages
    hl_cb_args args{};
    args.in.op = HL_CB_OP_INFO;
    args.in.cb_handle = handle;
    EXPECT_EQ(cb_call(*file, args), 0);
    EXPECT_EQ(args.out.usage_cnt, 0u);
    std::uint64_t address = 0;
    EXPECT_EQ(file->mmap(handle, 4096, address), -EINVAL);  // fewer pages than the buffer
    ASSERT_EQ(file->mmap(handle, 5000, address), 0);        // the same pages
    EXPECT_EQ(address, kFirstFree);
    EXPECT_EQ(file->mmap(handle, 8192, address), -EINVAL);  // mapped already
    const std::uint32_t nop = 0x12345678;
    model.host(0).memory().backing().write(address, &nop, 4);
    args = {};
    args.in.op = HL_CB_OP_DESTROY;
    args.in.cb_handle = handle;
    EXPECT_EQ(cb_call(*file, args), 0);  // while mapped: freed at munmap
    EXPECT_EQ(cb_call(*file, args), -EINVAL);
    const std::uint64_t next = create_cb(*file, 4096);
    std::uint64_t next_address = 0;
    ASSERT_EQ(file->mmap(next, 4096, next_address), 0);
    EXPECT_NE(next_address, address);  // the destroyed CB still holds its pages
    EXPECT_EQ(file->munmap(handle), 0);
    EXPECT_EQ(file->munmap(handle), -EINVAL);
    args = {};
    args.in.op = HL_CB_OP_CREATE;
    args.in.cb_size = HL_MAX_CB_SIZE + 1;
    EXPECT_EQ(cb_call(*file, args), -EINVAL);
    args.in.cb_size = 0;
    EXPECT_EQ(cb_call(*file, args), -EINVAL);
    args.in.cb_size = 4096;
    args.in.flags = HL_CB_FLAGS_MAP;  // Gaudi1 maps no CB into the device
    EXPECT_EQ(cb_call(*file, args), -EINVAL);
    args = {};
    args.in.op = 3;
    EXPECT_EQ(cb_call(*file, args), -EINVAL);
    // A new context starts with the memory the closed one's buffers held.
    file.reset();
    file = open_node(device, false);
    const std::uint64_t fresh = create_cb(*file, 4096);
    ASSERT_EQ(file->mmap(fresh, 4096, address), 0);
    EXPECT_EQ(address, kFirstFree);
  });
}

chip::spec::Packet lin_dma(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  chip::spec::Packet p("LIN_DMA");
  p.set("tsize", bytes).set("lin", 1).set("src_addr", src).set("dst_addr", dst);
  p.barriers(false, true, false);
  return p;
}

// A CB of the driver's holding `packets`, mapped and filled as user space does.
std::pair<std::uint64_t, std::uint32_t> user_cb(File& file, system::SystemModel& model,
                                                const std::vector<chip::spec::Packet>& packets) {
  const auto bytes = chip::spec::PacketCodec().encode(packets);
  const std::uint64_t handle = create_cb(file, 4096);
  std::uint64_t address = 0;
  EXPECT_EQ(file.mmap(handle, 4096, address), 0);
  model.host(0).memory().backing().write(address, bytes.data(), bytes.size());
  return {handle, static_cast<std::uint32_t>(bytes.size())};
}

hl_cs_chunk chunk(std::uint64_t cb, std::uint32_t queue, std::uint32_t size) {
  hl_cs_chunk c{};
  c.cb_handle = cb;
  c.queue_index = queue;
  c.cb_size = size;
  return c;
}

int submit(File& file, std::vector<hl_cs_chunk> chunks, hl_cs_args& args) {
  args = {};
  args.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
  args.in.num_chunks_execute = static_cast<std::uint32_t>(chunks.size());
  return file.ioctl(HL_IOCTL_CS, &args);
}

hl_wait_cs_out wait_for(File& file, std::uint64_t seq, std::uint64_t timeout_us, int& rc) {
  hl_wait_cs_args args{};
  args.in.seq = seq;
  args.in.timeout_us = timeout_us;
  rc = file.ioctl(HL_IOCTL_WAIT_CS, &args);
  return args.out;
}

// `bytes` of host memory at `at`, counting up from `first`: a copy's source and what it must give.
std::vector<std::uint8_t> host_pattern(system::SystemModel& model, std::uint64_t at,
                                       std::uint32_t bytes, std::uint8_t first) {
  std::vector<std::uint8_t> data(bytes);
  std::iota(data.begin(), data.end(), first);
  model.host(0).memory().backing().write(at, data.data(), data.size());
  return data;
}

// A host-facing job copies host memory into HBM; an internal job on DMA 2 copies it on to SRAM
// from a CB in SRAM. WAIT_CS returns when the completion-queue entry the driver's packets wrote
// has been seen by its interrupt handler.
TEST(DriverDevice, ACommandSubmissionRunsAndCompletesThroughItsCompletionQueue) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    chip::Chip& chip = model.chip(0);
    const std::uint64_t window = chip.config().address_map.host.value;
    constexpr std::uint64_t kSource = 0x100000, kHbm = 0x200000, kSram = 0x7FF0100000;
    constexpr std::uint64_t kInternalCb = 0x7FF0010000;
    constexpr std::uint32_t kBytes = 1 << 20;
    const std::vector<std::uint8_t> data = host_pattern(model, kSource, kBytes, 3);
    const auto [handle, size] = user_cb(*file, model, {lin_dma(window + kSource, kHbm, kBytes)});
    hl_cs_args cs{};
    ASSERT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, size)}, cs), 0);
    EXPECT_EQ(cs.out.seq, 1u);
    EXPECT_EQ(cs.out.status, HL_CS_STATUS_SUCCESS);
    int rc = 0;
    EXPECT_EQ(wait_for(*file, 1, 0, rc).status, HL_WAIT_CS_STATUS_BUSY);  // a poll
    EXPECT_EQ(rc, 0);
    const hl_wait_cs_out done = wait_for(*file, 1, 1000000, rc);
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(done.status, HL_WAIT_CS_STATUS_COMPLETED);
    EXPECT_EQ(done.flags, HL_WAIT_CS_STATUS_FLAG_TIMESTAMP_VLD);
    std::vector<std::uint8_t> got(kBytes);
    chip.debug_read(kHbm, got.data(), got.size());
    EXPECT_TRUE(got == data) << "HBM differs";
    // The next CS: an internal job from a user CB in SRAM beside a host-facing one.
    const auto internal = chip::spec::PacketCodec().encode({lin_dma(kHbm, kSram, kBytes)});
    chip.debug_write(kInternalCb, internal.data(), internal.size());
    ASSERT_EQ(submit(*file,
                     {chunk(kInternalCb, GAUDI_QUEUE_ID_DMA_2_0,
                            static_cast<std::uint32_t>(internal.size())),
                      chunk(handle, GAUDI_QUEUE_ID_DMA_0_1, size)},
                     cs),
              0);
    EXPECT_EQ(cs.out.seq, 2u);
    EXPECT_EQ(wait_for(*file, 2, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
    chip.debug_read(kSram, got.data(), got.size());
    EXPECT_TRUE(got == data) << "SRAM differs";
    EXPECT_EQ(wait_for(*file, 1, 0, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    wait_for(*file, 3, 0, rc);
    EXPECT_EQ(rc, -EINVAL);  // never submitted
    EXPECT_EQ(chip.error_count(), 0u);
  });
}

// A Gaudi2 (hls2) is served with Gaudi2's ids: its HW_IP, a host-facing job on PDMA 0 and an
// internal one on DCORE1's first EDMA (the chip's DMA 4), the registers through BAR0, engine
// busy bits by Gaudi2's engine ids, and queues of engines the chip lacks refused.
TEST(DriverDevice, AGaudi2IsServedWithGaudi2sQueueAndEngineIds) {
  with_device(
      [](Device& device, host::HostCpu& cpu, system::SystemModel& model) {
        auto file = open_node(device, false);
        chip::Chip& chip = model.chip(0);
        hl_info_hw_ip_info ip{};
        ASSERT_EQ(info(*file, HL_INFO_HW_IP_INFO, ip), 0);
        EXPECT_EQ(ip.device_id, kGaudi2DeviceId);
        EXPECT_EQ(ip.server_type, HL_SERVER_GAUDI2_HLS2);
        EXPECT_EQ(ip.tpc_enabled_mask_ext, (1ull << 24) - 1);
        const std::uint64_t window = chip.config().address_map.host.value;
        constexpr std::uint64_t kSource = 0x100000, kHbm = 0x200000, kSram = 0x7FF0100000;
        constexpr std::uint64_t kInternalCb = 0x7FF0010000;
        constexpr std::uint32_t kBytes = 1 << 16;
        const std::vector<std::uint8_t> data = host_pattern(model, kSource, kBytes, 5);
        const auto [handle, size] =
            user_cb(*file, model, {lin_dma(window + kSource, kHbm, kBytes)});
        hl_cs_args cs{};
        ASSERT_EQ(submit(*file, {chunk(handle, GAUDI2_QUEUE_ID_PDMA_0_0, size)}, cs), 0);
        int rc = 0;
        EXPECT_EQ(wait_for(*file, cs.out.seq, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
        const auto internal = chip::spec::PacketCodec().encode({lin_dma(kHbm, kSram, kBytes)});
        chip.debug_write(kInternalCb, internal.data(), internal.size());
        const auto internal_size = static_cast<std::uint32_t>(internal.size());
        ASSERT_EQ(submit(*file,
                         {chunk(kInternalCb, GAUDI2_QUEUE_ID_DCORE1_EDMA_0_0, internal_size),
                          chunk(handle, GAUDI2_QUEUE_ID_PDMA_0_1, size)},
                         cs),
                  0);
        EXPECT_EQ(wait_for(*file, cs.out.seq, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
        sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
        EXPECT_EQ(chip.dma(4).stats().bytes_written.value(), kBytes);
        std::vector<std::uint8_t> got(kBytes);
        chip.debug_read(kSram, got.data(), got.size());
        EXPECT_TRUE(got == data) << "SRAM differs";
        // DCORE3's EDMAs would be the chip's DMA 8 and 9 (it has 8); NICs have no QMAN here.
        for (std::uint32_t q : {GAUDI2_QUEUE_ID_DCORE3_EDMA_0_0, GAUDI2_QUEUE_ID_NIC_0_0,
                                GAUDI2_QUEUE_ID_CPU_PQ, GAUDI2_QUEUE_ID_SIZE}) {
          EXPECT_EQ(submit(*file,
                           {chunk(kInternalCb, q, internal_size),
                            chunk(handle, GAUDI2_QUEUE_ID_PDMA_0_1, size)},
                           cs),
                    -EINVAL)
              << q;
        }
        const std::uint64_t bar0 = device.pci().bar(0).address;
        const std::uint64_t engine = chip::Chip::dma_core_base(3);
        for (const auto& [offset, value] :
             dma::register_writes(dma::DmaJob::copy(0, 256 << 20, 256 << 20))) {
          ASSERT_EQ(cpu.write(bar0 + (engine + offset - 0x7FFC000000), &value, 4),
                    tlm::TLM_OK_RESPONSE);
        }
        hl_info_hw_idle idle{};
        ASSERT_EQ(info(*file, HL_INFO_HW_IDLE, idle), 0);
        EXPECT_EQ(idle.is_idle, 0u);
        EXPECT_EQ(idle.busy_engines_mask_ext[0], 1ull << GAUDI2_DCORE0_ENGINE_ID_EDMA_1);
        EXPECT_EQ(chip.error_count(), 0u);
      },
      "hls2");
}

// The completion interrupt is handled by a callback that may run ahead of the kernel's time
// (regression: WAIT_CS returned at the kernel's earlier time, before the CS had completed, so a
// collective of 64 MiB seemed to take 46 us): the waiter wakes at the completion, never before,
// whether it waits on one CS or on several.
TEST(DriverDevice, AWaitReturnsNoEarlierThanTheCompletionItReports) {
  with_device(
      [](Device& device, host::HostCpu&, system::SystemModel& model) {
        auto file = open_node(device, false);
        const std::uint64_t window = model.chip(0).config().address_map.host.value;
        constexpr std::uint32_t kBytes = 32u << 20;  // about 1.5 ms over PCIe
        const auto [handle, size] =
            user_cb(*file, model, {lin_dma(window + 0x100000, 0x200000, kBytes)});
        for (const bool multi : {false, true}) {
          hl_cs_args cs{};
          ASSERT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, size)}, cs), 0);
          const core::TimePs submitted = core::now_ps();
          hl_wait_cs_args args{};
          args.in.seq = cs.out.seq;
          args.in.timeout_us = 1000000000;
          if (multi) {
            args.in.seq = reinterpret_cast<std::uintptr_t>(&cs.out.seq);
            args.in.seq_arr_len = 1;
            args.in.flags = HL_WAIT_CS_FLAGS_MULTI_CS;
          }
          ASSERT_EQ(file->ioctl(HL_IOCTL_WAIT_CS, &args), 0);
          EXPECT_EQ(args.out.status, HL_WAIT_CS_STATUS_COMPLETED);
          const auto completed = static_cast<core::TimePs>(args.out.timestamp_nsec) * 1000;
          EXPECT_GE(core::now_ps(), completed) << "multi " << multi;
          EXPECT_GT(completed - submitted, 1000000000ull) << "a 32 MiB copy takes over 1 ms";
          EXPECT_LT(core::now_ps() - completed, 1000000ull) << "woken within 1 us of it";
        }
      },
      "hls1", true);
}

TEST(DriverDevice, BadSubmissionsAreRefusedAndChangeNothing) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const auto [handle, size] = user_cb(*file, model, {chip::spec::Packet("NOP")});
    hl_cs_args cs{};
    EXPECT_EQ(submit(*file, {chunk(0x7FF0010000, GAUDI_QUEUE_ID_DMA_2_0, 8)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_CPU_PQ, size)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_NIC_0_0, size)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_SIZE, size)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle + 0x1000, GAUDI_QUEUE_ID_DMA_0_0, size)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, 4097)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, 0)}, cs), -EINVAL);
    EXPECT_EQ(submit(*file, {}, cs), -EINVAL);
    std::vector<hl_cs_chunk> many(HL_MAX_JOBS_PER_CS + 1,
                                  chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, size));
    EXPECT_EQ(submit(*file, many, cs), -EINVAL);
    std::vector<hl_cs_chunk> one = {chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, size)};
    cs = {};
    cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(one.data());
    cs.in.num_chunks_execute = 1;
    cs.in.pad[2] = 1;
    EXPECT_EQ(file->ioctl(HL_IOCTL_CS, &cs), -EINVAL);
    cs.in.pad[2] = 0;
    cs.in.cs_flags = HL_CS_FLAGS_ENGINE_CORE_COMMAND;  // Gaudi2's
    EXPECT_EQ(file->ioctl(HL_IOCTL_CS, &cs), -EOPNOTSUPP);
    cs = {};
    cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(one.data());
    cs.in.num_chunks_execute = 1;
    hl_wait_cs_args wait{};
    wait.in.flags = HL_WAIT_CS_FLAGS_INTERRUPT;
    EXPECT_EQ(file->ioctl(HL_IOCTL_WAIT_CS, &wait), -EPERM);
    ASSERT_EQ(submit(*file, one, cs), 0);
    EXPECT_EQ(cs.out.seq, 1u);  // nothing refused took a sequence number
    hl_info_cs_counters counters{};
    ASSERT_EQ(info(*file, HL_INFO_CS_COUNTERS, counters), 0);
    EXPECT_EQ(counters.total_validation_drop_cnt, 10u);  // the EINVALs above
    EXPECT_EQ(counters.ctx_validation_drop_cnt, 10u);
    EXPECT_EQ(counters.total_queue_full_drop_cnt, 0u);
    int rc = 0;
    EXPECT_EQ(wait_for(*file, 1, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
  });
}

// Gaudi1's MEMORY: ALLOC and FREE only account (DRAM_USAGE shows it), device handles do not
// exist, and a context's account closes with it.
TEST(DriverDevice, DeviceMemoryIsAccountedAsGaudi1sDriverDoes) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel&) {
    auto file = open_node(device, false);
    hl_info_dram_usage usage{};
    ASSERT_EQ(info(*file, HL_INFO_DRAM_USAGE, usage), 0);
    const std::uint64_t total = usage.dram_free_mem;
    hl_mem_args mem{};
    mem.in.op = HL_MEM_OP_ALLOC;
    mem.in.alloc.mem_size = 1ull << 30;
    ASSERT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), 0);
    EXPECT_EQ(mem.out.handle, 0u);
    ASSERT_EQ(info(*file, HL_INFO_DRAM_USAGE, usage), 0);
    EXPECT_EQ(usage.dram_free_mem, total - (1ull << 30));
    EXPECT_EQ(usage.ctx_dram_mem, 1ull << 30);
    mem = {};
    mem.in.op = HL_MEM_OP_FREE;
    mem.in.alloc.mem_size = 512ull << 20;  // FREE carries the size
    ASSERT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), 0);
    ASSERT_EQ(info(*file, HL_INFO_DRAM_USAGE, usage), 0);
    EXPECT_EQ(usage.ctx_dram_mem, 512ull << 20);
    mem = {};
    mem.in.op = HL_MEM_OP_ALLOC;
    EXPECT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), -EINVAL);  // size 0
    mem.in.op = HL_MEM_OP_MAP;
    EXPECT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), -EINVAL);  // no device handle exists
    mem.in.flags = HL_MEM_USERPTR;
    EXPECT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), -EINVAL);  // size 0
    mem = {};
    mem.in.op = HL_MEM_OP_UNMAP;
    EXPECT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), -EINVAL);
    mem.in.op = 9;
    EXPECT_EQ(file->ioctl(HL_IOCTL_MEMORY, &mem), -EINVAL);
    file.reset();
    file = open_node(device, false);
    ASSERT_EQ(info(*file, HL_INFO_DRAM_USAGE, usage), 0);
    EXPECT_EQ(usage.dram_free_mem, total);
  });
}

// MEMORY MAP USERPTR of `bytes` at user address `address`; the device VA, or 0 with `rc` set.
std::uint64_t map_user(File& file, std::uint64_t address, std::uint64_t bytes, int& rc,
                       std::uint64_t hint = 0, std::uint32_t flags = 0) {
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_MAP;
  mem.in.flags = HL_MEM_USERPTR | flags;
  mem.in.map_host.host_virt_addr = address;
  mem.in.map_host.mem_size = bytes;
  mem.in.map_host.hint_addr = hint;
  rc = file.ioctl(HL_IOCTL_MEMORY, &mem);
  return rc == 0 ? mem.out.device_virt_addr : 0;
}

int unmap_user(File& file, std::uint64_t va) {
  hl_mem_args mem{};
  mem.in.op = HL_MEM_OP_UNMAP;
  mem.in.unmap.device_virt_addr = va;
  return file.ioctl(HL_IOCTL_MEMORY, &mem);
}

// Runs `packets` as one host-facing job and waits for it.
void run_job(File& file, system::SystemModel& model, std::uint32_t queue,
             const std::vector<chip::spec::Packet>& packets) {
  const auto [handle, size] = user_cb(file, model, packets);
  hl_cs_args cs{};
  ASSERT_EQ(submit(file, {chunk(handle, queue, size)}, cs), 0);
  int rc = 0;
  EXPECT_EQ(wait_for(file, cs.out.seq, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
}

constexpr std::uint64_t kVaStart = 0x1000000000000;  // Gaudi1's host virtual range [C14]

// Lets an error's event-queue entry and interrupt reach the driver: they travel apart from the
// completion that ended the CS, as they do to Linux.
void settle() { sc_core::wait(sc_core::sc_time(20, sc_core::SC_US)); }

// User memory mapped with MAP USERPTR is what the DMA engines reach by device virtual address,
// through the MMU: down to HBM on DMA 0, back up into another buffer on DMA 1. The address keeps
// the user address's offset in its page; a free, aligned hint is honoured; a taken one is
// refused with FORCE_HINT and replaced without.
TEST(DriverDevice, MappedHostMemoryIsReachedByVirtualAddress) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    chip::Chip& chip = model.chip(0);
    const std::uint64_t hbm = device.properties().dram_base;
    constexpr std::uint64_t kSource = 0x100010, kDestination = 0x300000;
    constexpr std::uint32_t kBytes = 3 * 4096 + 100;
    std::vector<std::uint8_t> data(kBytes);
    std::iota(data.begin(), data.end(), 7);
    model.host(0).memory().backing().write(kSource, data.data(), data.size());
    int rc = 0;
    const std::uint64_t source = map_user(*file, kSource, kBytes, rc);
    ASSERT_EQ(rc, 0);
    EXPECT_GE(source, kVaStart);
    EXPECT_EQ(source % 4096, 0x10u);
    constexpr std::uint64_t kHint = kVaStart + (1ull << 30);
    const std::uint64_t destination =
        map_user(*file, kDestination, kBytes, rc, kHint, HL_MEM_FORCE_HINT);
    ASSERT_EQ(rc, 0);
    EXPECT_EQ(destination, kHint);
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_0_0, {lin_dma(source, hbm, kBytes)});
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_1_0, {lin_dma(hbm, destination, kBytes)});
    std::vector<std::uint8_t> got(kBytes);
    model.host(0).memory().backing().read(kDestination, got.data(), got.size());
    EXPECT_TRUE(got == data) << "the round trip through HBM differs";
    EXPECT_EQ(map_user(*file, kDestination, 4096, rc, kHint, HL_MEM_FORCE_HINT), 0u);
    EXPECT_EQ(rc, -ENOMEM);  // the hint is taken
    EXPECT_EQ(map_user(*file, kDestination, 4096, rc, kHint + 1, HL_MEM_FORCE_HINT), 0u);
    EXPECT_EQ(rc, -ENOMEM);  // not page aligned
    const std::uint64_t elsewhere = map_user(*file, kDestination, 4096, rc, kHint);
    EXPECT_EQ(rc, 0);
    EXPECT_NE(elsewhere, kHint);
    EXPECT_EQ(unmap_user(*file, elsewhere), 0);
    EXPECT_EQ(chip.error_count(), 0u);
  });
}

// After UNMAP, and in the next context, the old address faults: the DMA writes nothing, the MMU
// counts a page fault, and the CS still completes.
TEST(DriverDevice, UnmappedAndOtherContextsMemoryFaults) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    chip::Chip& chip = model.chip(0);
    const std::uint64_t hbm = device.properties().dram_base;
    constexpr std::uint64_t kBuffer = 0x500000;
    constexpr std::uint32_t kBytes = 8192;
    const std::vector<std::uint8_t> ones(kBytes, 1);
    chip.debug_write(hbm, ones.data(), ones.size());
    auto file = open_node(device, false);
    int rc = 0;
    const std::uint64_t va = map_user(*file, kBuffer, kBytes, rc);
    ASSERT_EQ(rc, 0);
    EXPECT_EQ(unmap_user(*file, va), 0);
    EXPECT_EQ(unmap_user(*file, va), -EINVAL);
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_1_0, {lin_dma(hbm, va, kBytes)});
    EXPECT_EQ(chip.mmu().stats().faults.value(), 1u);
    // The fault reaches the driver through the event queue, on its own path: recorded, and
    // notified once.
    settle();
    hl_page_fault_info fault{};
    EXPECT_EQ(info(*file, HL_INFO_PAGE_FAULT_EVENT, fault), 0);
    EXPECT_EQ(fault.addr, va);
    EXPECT_GT(fault.timestamp, 0);
    __u64 events = 0;
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, events), 0);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_PAGE_FAULT);
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, events), 0);
    EXPECT_EQ(events, 0u);
    // A context's mappings end with it: the next context's tables do not have them.
    const std::uint64_t kept = map_user(*file, kBuffer, kBytes, rc);
    ASSERT_EQ(rc, 0);
    file.reset();
    file = open_node(device, false);
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_1_0, {lin_dma(hbm, kept, kBytes)});
    EXPECT_EQ(chip.mmu().stats().faults.value(), 2u);
    settle();
    EXPECT_EQ(info(*file, HL_INFO_PAGE_FAULT_EVENT, fault), 0);
    EXPECT_EQ(fault.addr, kept);  // the new session's first fault
    std::vector<std::uint8_t> got(kBytes, 9);
    model.host(0).memory().backing().read(kBuffer, got.data(), got.size());
    EXPECT_EQ(got, std::vector<std::uint8_t>(kBytes, 0)) << "a faulting DMA wrote host memory";
    EXPECT_EQ(map_user(*file, 1ull << 62, 4096, rc), 0u);
    EXPECT_EQ(rc, -EFAULT);  // not the user's memory
  });
}

// An access outside the chip's map (a RAZWI) and a packet the QMAN does not know reach the
// driver through the event queue: INFO reports the first of each with its address.
TEST(DriverDevice, RazwiAndUndefinedOpcodeAreRecordedFromTheEventQueue) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const std::uint64_t hbm = device.properties().dram_base;
    constexpr std::uint64_t kNowhere = 0x1000000000;  // between HBM and the blocks: unmapped
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_0_0, {lin_dma(hbm, kNowhere, 256)});
    settle();
    hl_info_razwi_event razwi{};
    EXPECT_EQ(info(*file, HL_INFO_RAZWI_EVENT, razwi), 0);
    EXPECT_EQ(razwi.addr, kNowhere);
    EXPECT_GT(razwi.timestamp, 0);
    // A buffer holding an undefined opcode (0x1F): the QMAN stops on it, the CS times out.
    const std::uint64_t handle = create_cb(*file, 4096);
    std::uint64_t address = 0;
    ASSERT_EQ(file->mmap(handle, 4096, address), 0);
    const std::uint32_t packet[2] = {0, 0x1Fu << 24};
    model.host(0).memory().backing().write(address, packet, sizeof packet);
    hl_cs_args cs{};
    std::vector<hl_cs_chunk> chunks{chunk(handle, GAUDI_QUEUE_ID_DMA_0_0, sizeof packet)};
    cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
    cs.in.num_chunks_execute = 1;
    cs.in.cs_flags = HL_CS_FLAGS_CUSTOM_TIMEOUT;
    cs.in.timeout = 1;
    ASSERT_EQ(file->ioctl(HL_IOCTL_CS, &cs), 0);
    int rc = 0;
    wait_for(*file, cs.out.seq, 5000000, rc);
    hl_info_undefined_opcode_event undefined{};
    EXPECT_EQ(info(*file, HL_INFO_UNDEFINED_OPCODE_EVENT, undefined), 0);
    EXPECT_GT(undefined.timestamp, 0);
    EXPECT_EQ(undefined.cb_addr_streams_len, 1u);
    EXPECT_NE(undefined.cb_addr_streams[0][0], 0u);
    __u64 events = 0;
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, events), 0);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_RAZWI);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_UNDEFINED_OPCODE);
    // A second RAZWI does not replace the first.
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_0_0, {lin_dma(hbm, kNowhere + 4096, 256)});
    settle();
    EXPECT_EQ(info(*file, HL_INFO_RAZWI_EVENT, razwi), 0);
    EXPECT_EQ(razwi.addr, kNowhere);
  });
}

// One stage of a staged submission; `staged` the first stage's sequence (0 for the first).
int stage(File& file, std::vector<hl_cs_chunk> chunks, std::uint32_t flags, std::uint64_t staged,
          hl_cs_args& cs, std::uint32_t handle = 0) {
  cs = {};
  cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
  cs.in.num_chunks_execute = static_cast<std::uint32_t>(chunks.size());
  cs.in.cs_flags = HL_CS_FLAGS_STAGED_SUBMISSION | flags;
  if (handle != 0) {
    cs.in.encaps_sig_handle_id = handle;
  } else {
    cs.in.seq = staged;
  }
  return file.ioctl(HL_IOCTL_CS, &cs);
}

// A staged submission: a copy down in the first stage, a copy back up in the last. The first
// stage's sequence names it, and waiting for it waits for the last stage: before the last is
// submitted the submission is busy though the first stage's copy is done.
TEST(DriverDevice, AStagedSubmissionCompletesWithItsLastStage) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const std::uint64_t hbm = device.properties().dram_base;
    const std::uint64_t window = model.chip(0).config().address_map.host.value;
    std::vector<std::uint8_t> data(4096);
    std::iota(data.begin(), data.end(), 3);
    model.host(0).memory().backing().write(0x200000, data.data(), data.size());
    const auto [down, down_size] = user_cb(*file, model, {lin_dma(window + 0x200000, hbm, 4096)});
    const auto [up, up_size] = user_cb(*file, model, {lin_dma(hbm, window + 0x300000, 4096)});
    hl_cs_args cs{};
    ASSERT_EQ(stage(*file, {chunk(down, GAUDI_QUEUE_ID_DMA_0_0, down_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_FIRST, 0, cs),
              0);
    const std::uint64_t staged = cs.out.seq;
    int rc = 0;
    EXPECT_EQ(wait_for(*file, staged, 100000, rc).status, HL_WAIT_CS_STATUS_BUSY);
    // Stages of an unknown submission are refused.
    EXPECT_EQ(stage(*file, {chunk(up, GAUDI_QUEUE_ID_DMA_1_0, up_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_LAST, staged + 7, cs),
              -EINVAL);
    ASSERT_EQ(stage(*file, {chunk(up, GAUDI_QUEUE_ID_DMA_1_0, up_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_LAST, staged, cs),
              0);
    EXPECT_EQ(cs.out.seq, staged);
    EXPECT_EQ(wait_for(*file, staged, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    std::vector<std::uint8_t> got(4096);
    model.host(0).memory().backing().read(0x300000, got.data(), got.size());
    EXPECT_EQ(got, data);
    // After its last stage, the submission takes no more.
    EXPECT_EQ(stage(*file, {chunk(up, GAUDI_QUEUE_ID_DMA_1_0, up_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_LAST, staged, cs),
              -EINVAL);
  });
}

// Encapsulated signals: 200 signals of queue 0's sync object reserved; a staged CS adds them
// itself; a WAIT on the 200th waits for it; the reservation ends with the CS. Reservations
// that are not the latest cannot be given back, nor can too many be taken.
TEST(DriverDevice, EncapsulatedSignalsAreReservedCarriedAndWaitedFor) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    hl_cs_args cs{};
    cs.in.cs_flags = HL_CS_FLAGS_RESERVE_SIGNALS_ONLY;
    cs.in.encaps_signals_count = 200;
    cs.in.encaps_signals_q_idx = GAUDI_QUEUE_ID_DMA_0_0;
    ASSERT_EQ(file->ioctl(HL_IOCTL_CS, &cs), 0);
    const std::uint32_t handle = cs.out.handle_id;
    EXPECT_EQ(handle, 1u);
    EXPECT_EQ(cs.out.count, 201u);  // the next signal's value
    const std::uint64_t sob = PODSIM_GAUDI1_CFG_BASE + cs.out.sob_base_addr_offset;
    chip::spec::Packet add("MSG_LONG");
    add.set("addr", sob).set("value", chip::spec::encode_sob_write({200, true, false}));
    add.barriers(true, true, true);
    const auto [adds, adds_size] = user_cb(*file, model, {add});
    ASSERT_EQ(stage(*file, {chunk(adds, GAUDI_QUEUE_ID_DMA_0_0, adds_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_FIRST | HL_CS_FLAGS_ENCAP_SIGNALS, 0, cs, handle),
              0);
    const std::uint64_t staged = cs.out.seq;
    // A WAIT on queue 4 for signal `offset` of the reservation the staged CS carries.
    const auto encaps_wait = [&](std::uint32_t offset) {
      hl_cs_chunk wait{};
      wait.queue_index = GAUDI_QUEUE_ID_DMA_1_0;
      wait.encaps_signal_seq = staged;
      wait.encaps_signal_offset = offset;
      cs = {};
      cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(&wait);
      cs.in.num_chunks_execute = 1;
      cs.in.cs_flags = HL_CS_FLAGS_WAIT | HL_CS_FLAGS_ENCAP_SIGNALS;
      return file->ioctl(HL_IOCTL_CS, &cs);
    };
    ASSERT_EQ(encaps_wait(200), 0);
    ASSERT_NE(cs.out.seq, ~0ull);
    int rc = 0;
    EXPECT_EQ(wait_for(*file, cs.out.seq, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    EXPECT_EQ(encaps_wait(201), -EINVAL);  // beyond the reservation
    const auto [nop, nop_size] = user_cb(*file, model, {chip::spec::Packet("NOP")});
    ASSERT_EQ(stage(*file, {chunk(nop, GAUDI_QUEUE_ID_DMA_0_0, nop_size)},
                    HL_CS_FLAGS_STAGED_SUBMISSION_LAST, staged, cs),
              0);
    EXPECT_EQ(wait_for(*file, staged, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    // The reservation ended with its CS: a wait on it now has nothing to wait for.
    EXPECT_EQ(encaps_wait(1), 0);
    EXPECT_EQ(cs.out.seq, ~0ull);
    // Give back: only the latest reservation, once.
    const auto reserve = [&](std::uint32_t count) {
      cs = {};
      cs.in.cs_flags = HL_CS_FLAGS_RESERVE_SIGNALS_ONLY;
      cs.in.encaps_signals_count = count;
      cs.in.encaps_signals_q_idx = GAUDI_QUEUE_ID_DMA_0_0;
      return file->ioctl(HL_IOCTL_CS, &cs) == 0 ? cs.out.handle_id : 0u;
    };
    const auto unreserve = [&](std::uint32_t id) {
      cs = {};
      cs.in.cs_flags = HL_CS_FLAGS_UNRESERVE_SIGNALS_ONLY;
      cs.in.encaps_sig_handle_id = id;
      return file->ioctl(HL_IOCTL_CS, &cs);
    };
    const std::uint32_t a = reserve(10), b = reserve(20);
    ASSERT_NE(a, 0u);
    ASSERT_NE(b, 0u);
    EXPECT_EQ(unreserve(a), -EINVAL);  // b came after it
    EXPECT_EQ(unreserve(b), 0);
    EXPECT_EQ(unreserve(b), -EINVAL);
    EXPECT_EQ(unreserve(a), 0);
    EXPECT_EQ(reserve(40000), 0u);  // past the 15-bit limit
  });
}

// Several reservations on one queue, carried by CSs submitted in the opposite order and waited
// for on one queue (hl-thunk's parallel encapsulated-signal test, in one thread).
TEST(DriverDevice, SeveralReservationsOnOneQueueAreWaitedForInAnyOrder) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    constexpr int kReservations = 6;
    std::vector<std::uint32_t> handles;
    std::uint64_t sob = 0;
    hl_cs_args cs{};
    for (int i = 0; i < kReservations; ++i) {
      cs = {};
      cs.in.cs_flags = HL_CS_FLAGS_RESERVE_SIGNALS_ONLY;
      cs.in.encaps_signals_count = 200;
      cs.in.encaps_signals_q_idx = GAUDI_QUEUE_ID_DMA_0_1;
      ASSERT_EQ(file->ioctl(HL_IOCTL_CS, &cs), 0);
      handles.push_back(cs.out.handle_id);
      sob = PODSIM_GAUDI1_CFG_BASE + cs.out.sob_base_addr_offset;
    }
    chip::spec::Packet add("MSG_LONG");
    add.set("addr", sob).set("value", chip::spec::encode_sob_write({200, true, false}));
    add.barriers(true, true, true);
    std::vector<std::uint64_t> staged(kReservations), waits;
    for (int i = kReservations; i-- > 0;) {
      const auto [adds, adds_size] = user_cb(*file, model, {add});
      ASSERT_EQ(stage(*file, {chunk(adds, GAUDI_QUEUE_ID_DMA_0_1, adds_size)},
                      HL_CS_FLAGS_STAGED_SUBMISSION_FIRST | HL_CS_FLAGS_ENCAP_SIGNALS, 0, cs,
                      handles[static_cast<std::size_t>(i)]),
                0);
      staged[static_cast<std::size_t>(i)] = cs.out.seq;
    }
    for (int i = 0; i < kReservations; ++i) {
      hl_cs_chunk wait{};
      wait.queue_index = GAUDI_QUEUE_ID_DMA_1_1;
      wait.encaps_signal_seq = staged[static_cast<std::size_t>(i)];
      wait.encaps_signal_offset = 200;
      cs = {};
      cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(&wait);
      cs.in.num_chunks_execute = 1;
      cs.in.cs_flags = HL_CS_FLAGS_WAIT | HL_CS_FLAGS_ENCAP_SIGNALS;
      ASSERT_EQ(file->ioctl(HL_IOCTL_CS, &cs), 0);
      ASSERT_NE(cs.out.seq, ~0ull);
      waits.push_back(cs.out.seq);
    }
    int rc = 0;
    for (const std::uint64_t w : waits)
      EXPECT_EQ(wait_for(*file, w, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED) << w;
  });
}

// Regression: two threads submitting to one queue at once could ring its doorbell out of order
// (the producer index moving back), and a CS's record (a stage's place, a signal's sync object)
// was completed after its jobs were queued, so jobs another doorbell started could end
// unrecorded: a staged submission then never completed. Now submissions are one at a time and
// records complete first; two programs submit to one queue: every staged submission completes.
TEST(DriverDevice, StagesOnAQueueOtherThreadsAlsoRingComplete) {
  with_device([](Device& device, host::HostCpu& cpu, system::SystemModel& model) {
    auto file = open_node(device, false);
    const auto [nop, nop_size] = user_cb(*file, model, {chip::spec::Packet("NOP")});
    const hl_cs_chunk job = chunk(nop, GAUDI_QUEUE_ID_DMA_0_0, nop_size);
    constexpr int kRounds = 40;
    int noise_done = 0;
    cpu.run([&](host::HostCpu&) {  // another thread ringing the same queue
      hl_cs_args cs{};
      for (int i = 0; i < kRounds; ++i) EXPECT_EQ(submit(*file, {job, job, job}, cs), 0);
      ++noise_done;
    });
    int rc = 0;
    for (int i = 0; i < kRounds; ++i) {
      hl_cs_args cs{};
      ASSERT_EQ(stage(*file, {job}, HL_CS_FLAGS_STAGED_SUBMISSION_FIRST, 0, cs), 0);
      const std::uint64_t staged = cs.out.seq;
      ASSERT_EQ(stage(*file, {job, job}, HL_CS_FLAGS_STAGED_SUBMISSION_LAST, staged, cs), 0);
      ASSERT_EQ(wait_for(*file, staged, 1000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED)
          << "round " << i;
    }
    while (noise_done == 0) sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
  });
}

// A buffer that never ends (a FENCE nothing satisfies) times out at the CS's own timeout: its
// wait says TIMEDOUT, the CS queued behind it is aborted by the hard reset that follows, the
// reset and the timeout are recorded, and the device then runs work again.
TEST(DriverDevice, AnEndlessBufferTimesOutAndTheDeviceWorksAfterTheReset) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    chip::spec::Packet fence("FENCE");
    fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
    const auto [stuck, stuck_size] = user_cb(*file, model, {fence});
    const auto [nop, nop_size] = user_cb(*file, model, {chip::spec::Packet("NOP")});
    hl_cs_args cs{};
    std::vector<hl_cs_chunk> chunks{chunk(stuck, GAUDI_QUEUE_ID_DMA_0_0, stuck_size)};
    cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(chunks.data());
    cs.in.num_chunks_execute = 1;
    cs.in.cs_flags = HL_CS_FLAGS_CUSTOM_TIMEOUT;
    cs.in.timeout = 3;  // seconds
    ASSERT_EQ(file->ioctl(HL_IOCTL_CS, &cs), 0);
    const std::uint64_t endless = cs.out.seq;
    ASSERT_EQ(submit(*file, {chunk(nop, GAUDI_QUEUE_ID_DMA_0_0, nop_size)}, cs), 0);
    const std::uint64_t behind = cs.out.seq;
    int rc = 0;
    EXPECT_EQ(wait_for(*file, endless, 1000000, rc).status, HL_WAIT_CS_STATUS_BUSY);
    // A wait whose window closes during the reset the timeout started (100 ms from 3 s) learns
    // of the timeout (regression: it said BUSY, and the next WAIT_CS met the reset: EBUSY).
    EXPECT_EQ(wait_for(*file, endless, 2050000, rc).status, HL_WAIT_CS_STATUS_TIMEDOUT);
    EXPECT_EQ(rc, -ETIMEDOUT);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_MS));  // the reset is over
    EXPECT_EQ(wait_for(*file, endless, 10000000, rc).status, HL_WAIT_CS_STATUS_TIMEDOUT);
    EXPECT_EQ(rc, -ETIMEDOUT);
    EXPECT_EQ(wait_for(*file, behind, 10000000, rc).status, HL_WAIT_CS_STATUS_ABORTED);
    EXPECT_EQ(rc, -EIO);
    hl_info_reset_count resets{};
    EXPECT_EQ(info(*file, HL_INFO_RESET_COUNT, resets), 0);
    EXPECT_EQ(resets.hard_reset_cnt, 1u);
    hl_info_cs_timeout_event timeout{};
    EXPECT_EQ(info(*file, HL_INFO_CS_TIMEOUT_EVENT, timeout), 0);
    EXPECT_EQ(timeout.seq, endless);
    EXPECT_GE(timeout.timestamp, 3000000000);  // ns: after its three seconds
    hl_info_device_status status{};
    EXPECT_EQ(info(*file, HL_INFO_DEVICE_STATUS, status), 0);
    EXPECT_EQ(status.status, HL_DEVICE_STATUS_OPERATIONAL);
    __u64 events = 0;
    EXPECT_EQ(info(*file, HL_INFO_GET_EVENTS, events), 0);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_CS_TIMEOUT);
    EXPECT_TRUE(events & HL_NOTIFIER_EVENT_DEVICE_RESET);
    // The same queue runs a copy after the reset.
    chip::Chip& chip = model.chip(0);
    const std::uint64_t hbm = device.properties().dram_base;
    const std::vector<std::uint8_t> data(4096, 0x5A);
    model.host(0).memory().backing().write(0x100000, data.data(), data.size());
    const std::uint64_t window = chip.config().address_map.host.value;
    run_job(*file, model, GAUDI_QUEUE_ID_DMA_0_0, {lin_dma(window + 0x100000, hbm, 4096)});
    std::vector<std::uint8_t> got(4096);
    chip.debug_read(hbm, got.data(), got.size());
    EXPECT_EQ(got, data);
  });
}

// A sync-stream CS with one chunk: SIGNAL on `queue`, or WAIT there for `signal`.
int sync_stream(File& file, std::uint32_t flags, std::uint32_t queue, hl_cs_args& cs,
                std::uint64_t* signal = nullptr) {
  hl_cs_chunk c{};
  c.queue_index = queue;
  c.signal_seq_arr = reinterpret_cast<std::uintptr_t>(signal);
  c.num_signal_seq_arr = signal != nullptr ? 1 : 0;
  cs = {};
  cs.in.chunks_execute = reinterpret_cast<std::uintptr_t>(&c);
  cs.in.num_chunks_execute = 1;
  cs.in.cs_flags = flags;
  return file.ioctl(HL_IOCTL_CS, &cs);
}

// A WAIT on DMA 1 holds its queue until the SIGNAL queued on DMA 0 behind a long copy has run:
// the copy back up reads what the copy down wrote. The signal reports its sync object (W_S 128,
// queue 0's first) and value; a wait for a signal already seen queues nothing.
TEST(DriverDevice, AWaitHoldsItsQueueUntilTheSignalBehindACopy) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    const std::uint64_t window = model.chip(0).config().address_map.host.value;
    const std::uint64_t hbm = device.properties().dram_base;
    constexpr std::uint64_t kFrom = 0x100000, kTo = 0x400000;
    constexpr std::uint32_t kBytes = 1 << 20;
    std::vector<std::uint8_t> data(kBytes);
    std::iota(data.begin(), data.end(), 11);
    model.host(0).memory().backing().write(kFrom, data.data(), data.size());
    const auto [down, down_size] = user_cb(*file, model, {lin_dma(window + kFrom, hbm, kBytes)});
    const auto [up, up_size] = user_cb(*file, model, {lin_dma(hbm, window + kTo, kBytes)});
    hl_cs_args cs{};
    ASSERT_EQ(submit(*file, {chunk(down, GAUDI_QUEUE_ID_DMA_0_0, down_size)}, cs), 0);
    ASSERT_EQ(sync_stream(*file, HL_CS_FLAGS_SIGNAL, GAUDI_QUEUE_ID_DMA_0_0, cs), 0);
    std::uint64_t signal = cs.out.seq;
    EXPECT_EQ(cs.out.sob_base_addr_offset, 0x492000u + 4 * 128);
    EXPECT_EQ(cs.out.sob_count_before_submission, 1u);
    ASSERT_EQ(sync_stream(*file, HL_CS_FLAGS_WAIT, GAUDI_QUEUE_ID_DMA_1_0, cs, &signal), 0);
    const std::uint64_t waited = cs.out.seq;
    ASSERT_EQ(submit(*file, {chunk(up, GAUDI_QUEUE_ID_DMA_1_0, up_size)}, cs), 0);
    int rc = 0;
    EXPECT_EQ(wait_for(*file, cs.out.seq, 10000000, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    EXPECT_EQ(wait_for(*file, waited, 0, rc).status, HL_WAIT_CS_STATUS_COMPLETED);
    std::vector<std::uint8_t> got(kBytes);
    model.host(0).memory().backing().read(kTo, got.data(), got.size());
    EXPECT_TRUE(got == data) << "the copy up ran before the copy down had finished";
    ASSERT_EQ(sync_stream(*file, HL_CS_FLAGS_WAIT, GAUDI_QUEUE_ID_DMA_1_0, cs, &signal), 0);
    EXPECT_EQ(cs.out.seq, ~0ull);  // the signal has been seen: nothing to wait for
    std::uint64_t not_a_signal = waited;
    EXPECT_EQ(sync_stream(*file, HL_CS_FLAGS_WAIT, GAUDI_QUEUE_ID_DMA_1_0, cs, &not_a_signal),
              -EINVAL);
    EXPECT_EQ(sync_stream(*file, HL_CS_FLAGS_SIGNAL, GAUDI_QUEUE_ID_DMA_2_0, cs), -EINVAL);
    EXPECT_EQ(sync_stream(*file, HL_CS_FLAGS_SIGNAL | HL_CS_FLAGS_WAIT, 0, cs, &signal), -EINVAL);
    ASSERT_EQ(sync_stream(*file, HL_CS_FLAGS_SIGNAL, GAUDI_QUEUE_ID_DMA_0_0, cs), 0);
    EXPECT_EQ(cs.out.sob_count_before_submission, 2u);  // the object's next value
  });
}

// MULTI_CS waits for the first of several CSs: the one that completed has its bit, the one stuck
// on a fence does not; a CS also gets a new context's sync objects cleared.
TEST(DriverDevice, AMultiCsWaitReportsWhichCompletedAndContextsStartClean) {
  with_device([](Device& device, host::HostCpu&, system::SystemModel& model) {
    auto file = open_node(device, false);
    chip::spec::Packet fence("FENCE");
    fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
    chip::spec::Packet set_sob("MSG_SHORT");  // E_N object 5 = 7, through base 1
    set_sob.set("base", 1).set("msg_addr_offset", 4 * 5).set("value", 7);
    const auto [stuck, stuck_size] = user_cb(*file, model, {fence});
    const auto [sob, sob_size] = user_cb(*file, model, {set_sob});
    hl_cs_args cs{};
    ASSERT_EQ(submit(*file, {chunk(stuck, GAUDI_QUEUE_ID_DMA_0_1, stuck_size)}, cs), 0);
    std::uint64_t seqs[2] = {cs.out.seq, 0};
    ASSERT_EQ(submit(*file, {chunk(sob, GAUDI_QUEUE_ID_DMA_0_0, sob_size)}, cs), 0);
    seqs[1] = cs.out.seq;
    hl_wait_cs_args wait{};
    wait.in.seq = reinterpret_cast<std::uintptr_t>(seqs);
    wait.in.seq_arr_len = 2;
    wait.in.timeout_us = 1000000;
    wait.in.flags = HL_WAIT_CS_FLAGS_MULTI_CS;
    ASSERT_EQ(file->ioctl(HL_IOCTL_WAIT_CS, &wait), 0);
    EXPECT_EQ(wait.out.status, HL_WAIT_CS_STATUS_COMPLETED);
    EXPECT_EQ(wait.out.cs_completion_map, 0x2u);
    wait = {};
    wait.in.seq = reinterpret_cast<std::uintptr_t>(seqs);
    wait.in.seq_arr_len = 33;
    wait.in.flags = HL_WAIT_CS_FLAGS_MULTI_CS;
    EXPECT_EQ(file->ioctl(HL_IOCTL_WAIT_CS, &wait), -EINVAL);
    chip::SyncManager& e_n = model.chip(0).sync_manager(0);
    EXPECT_EQ(e_n.sob(5), 7u);
    file.reset();
    file = open_node(device, false);
    settle();  // the driver's clearing writes are posted: they land a PCIe crossing later
    EXPECT_EQ(e_n.sob(5), 0u);  // cleared for the new context
  });
}

}  // namespace
}  // namespace podsim::driver
