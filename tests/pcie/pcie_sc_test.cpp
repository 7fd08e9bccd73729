#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "core/kernel.h"
#include "core/memory_target.h"
#include "hw/host/host_cpu.h"
#include "hw/host/host_memory.h"
#include "hw/host/root_complex.h"
#include "hw/pcie/pcie_endpoint.h"
#include "hw/pcie/pcie_link.h"
#include "hw/pcie/pcie_switch.h"

namespace podsim::pcie {
namespace {

using core::TimePs;

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed = 7) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * 131 + seed);
  return bytes;
}

// Issues bulk transfers from an SC_THREAD: the chip's DMA engines, or a bare link's user.
class Master : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Master);
  tlm_utils::simple_initiator_socket<Master> socket;
  using Body = std::function<void(Master&)>;
  Master(sc_core::sc_module_name name, Body body)
      : sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_THREAD(run);
  }
  tlm::tlm_response_status transfer(tlm::tlm_command command, std::uint64_t address,
                                    std::uint8_t* data, std::uint32_t length) {
    sc_core::sc_time delay = issue(command, address, data, length, sc_core::SC_ZERO_TIME);
    wait(delay);
    return last_status_;
  }
  // Issues a transfer at the initiator's local time, `ahead` of the kernel's (temporal
  // decoupling), and returns when it completes relative to the kernel, without waiting for it.
  sc_core::sc_time issue(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                         std::uint32_t length, sc_core::sc_time ahead) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(address);
    trans.set_data_ptr(data);
    trans.set_data_length(length);
    trans.set_streaming_width(length);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = ahead;
    socket->b_transport(trans, delay);
    last_status_ = trans.get_response_status();
    return delay;
  }

 private:
  void run() { body_(*this); }
  Body body_;
  tlm::tlm_response_status last_status_ = tlm::TLM_INCOMPLETE_RESPONSE;
};

core::MemoryTargetConfig fast_memory(std::uint64_t size) {
  core::MemoryTargetConfig c;
  c.size = core::ByteSize{size};
  c.bandwidth = core::Bandwidth{8e12};  // 1 TB/s: never the bottleneck here
  c.latency = core::Duration{0};
  return c;
}

constexpr std::uint64_t kBulk = 4ull << 20;

TEST(PcieLink, BulkWritesAndReadsTakeTheOverheadModelsTimeBothWays) {
  PcieLink link("link", gen4_x16());
  core::MemoryTarget device_memory("device_memory", fast_memory(64ull << 20));
  core::MemoryTarget host_memory("host_memory", fast_memory(64ull << 20));
  std::vector<TimePs> times;
  TimePs small_write = 0;
  auto data = pattern(kBulk);
  std::vector<std::uint8_t> back(kBulk);
  Master host("host", [&](Master& m) {
    TimePs t0 = core::now_ps();
    EXPECT_EQ(m.transfer(tlm::TLM_WRITE_COMMAND, 0, data.data(), kBulk), tlm::TLM_OK_RESPONSE);
    times.push_back(core::now_ps() - t0);
    t0 = core::now_ps();
    EXPECT_EQ(m.transfer(tlm::TLM_READ_COMMAND, 0, back.data(), kBulk), tlm::TLM_OK_RESPONSE);
    times.push_back(core::now_ps() - t0);
    t0 = core::now_ps();
    m.transfer(tlm::TLM_WRITE_COMMAND, 0, data.data(), 4);
    small_write = core::now_ps() - t0;
  });
  Master device("device", [&](Master& m) {
    wait(sc_core::sc_time(1, sc_core::SC_MS));
    TimePs t0 = core::now_ps();
    EXPECT_EQ(m.transfer(tlm::TLM_WRITE_COMMAND, 0, data.data(), kBulk), tlm::TLM_OK_RESPONSE);
    times.push_back(core::now_ps() - t0);
  });
  host.socket.bind(link.from_host);
  link.to_device.bind(device_memory.target_socket);
  device.socket.bind(link.from_device);
  link.to_host.bind(host_memory.target_socket);
  sc_core::sc_start();

  ASSERT_EQ(times.size(), 3u);
  EXPECT_EQ(times[0], link.timing().write_time(kBulk));
  EXPECT_EQ(times[1], link.timing().read_time(kBulk));
  EXPECT_EQ(times[2], link.timing().write_time(kBulk));
  EXPECT_TRUE(back == data);
  EXPECT_GE(small_write, 150000u);  // a 4-byte write pays the link's latency
  EXPECT_LT(small_write, 153000u);
  for (TimePs t : times) {
    const double rate = kBulk / (t * 1e-12);
    EXPECT_GT(rate, 24e9);
    EXPECT_LT(rate, 26e9);
  }
  EXPECT_EQ(link.stats().down_bytes.value(), kBulk + 4);
  EXPECT_EQ(link.stats().up_bytes.value(), 2 * kBulk);
}

// Regression: a direction of the link held transfers in call order, so a small read that one
// QMAN issued for now waited behind another's buffer read issued earlier for microseconds later
// (its PQ entry's arrival): several microseconds per command-buffer fetch. Now a transfer takes
// the first idle stretch from its own arrival.
TEST(PcieLink, ATransferCalledLaterButArrivingEarlierIsNotHeldBehindOne) {
  PcieLink link("link", gen4_x16());
  core::MemoryTarget host_memory("host_memory", fast_memory(64ull << 20));
  core::MemoryTarget device_memory("device_memory", fast_memory(64ull << 20));
  std::vector<std::uint8_t> later(64 << 10), now(16);
  TimePs small_read = 0;
  Master device("device", [&](Master& m) {
    m.issue(tlm::TLM_READ_COMMAND, 0, later.data(), static_cast<std::uint32_t>(later.size()),
            sc_core::sc_time(10, sc_core::SC_US));
    const TimePs t0 = core::now_ps();
    m.transfer(tlm::TLM_READ_COMMAND, 4096, now.data(), static_cast<std::uint32_t>(now.size()));
    small_read = core::now_ps() - t0;
  });
  Master host("host", [](Master&) {});
  host.socket.bind(link.from_host);
  link.to_device.bind(device_memory.target_socket);
  device.socket.bind(link.from_device);
  link.to_host.bind(host_memory.target_socket);
  sc_core::sc_start();
  EXPECT_NEAR(static_cast<double>(small_read), static_cast<double>(link.timing().read_time(16)),
              100);
}

// The far side of a link as a register file that notes when each write arrives.
class ArrivalRecorder : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<ArrivalRecorder> socket;
  explicit ArrivalRecorder(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    socket.register_b_transport(this, &ArrivalRecorder::b_transport);
  }
  std::vector<std::pair<std::uint64_t, TimePs>> writes;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    if (trans.is_write()) writes.emplace_back(trans.get_address(), core::now_ps() + delay.value());
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// Regression: a direction gave each transfer its first idle stretch from its arrival, so a small
// write arriving after a larger one could take a gap the larger one did not fit and reach the far
// side first: a later doorbell could overtake an earlier one and move a queue's producer index
// back. PCIe keeps posted writes in order.
TEST(PcieLink, APostedWriteNeverOvertakesAnEarlierOne) {
  PcieLink link("link", gen4_x16());
  core::MemoryTarget host_memory("host_memory", fast_memory(64ull << 20));
  ArrivalRecorder device_side("device_side");
  std::vector<std::uint8_t> read_back(64 << 10), large(4096), doorbell(4);
  const TimePs read_at = 10'000'000;  // the device's read of host memory, issued 10 us ahead
  // Its completions hold the downstream direction from about read_at + the link's latency; the
  // large write arrives 50 ns before that (too short a gap for its ~170 ns), the doorbell 1 ns
  // after it (a gap it fits).
  const TimePs gap_end = read_at + static_cast<TimePs>(link.timing().latency());
  Master device("device", [&](Master& m) {
    m.issue(tlm::TLM_READ_COMMAND, 0, read_back.data(), 64 << 10,
            sc_core::sc_time::from_value(read_at));
  });
  Master host("host", [&](Master& m) {
    wait(sc_core::sc_time(1, sc_core::SC_NS));
    const TimePs now = core::now_ps();
    m.issue(tlm::TLM_WRITE_COMMAND, 0x1000, large.data(), 4096,
            sc_core::sc_time::from_value(gap_end - 50'000 - now));
    m.issue(tlm::TLM_WRITE_COMMAND, 0x2000, doorbell.data(), 4,
            sc_core::sc_time::from_value(gap_end - 49'000 - now));
  });
  host.socket.bind(link.from_host);
  link.to_device.bind(device_side.socket);
  device.socket.bind(link.from_device);
  link.to_host.bind(host_memory.target_socket);
  sc_core::sc_start();

  ASSERT_EQ(device_side.writes.size(), 2u);
  EXPECT_EQ(device_side.writes[0].first, 0x1000u);
  EXPECT_EQ(device_side.writes[1].first, 0x2000u);
  EXPECT_GT(device_side.writes[1].second, device_side.writes[0].second);
}

// A host with one root port, a link and a Gaudi endpoint whose chip side is a plain memory; the
// chip's DMA is a Master on the endpoint's from_chip socket.
struct Box {
  static constexpr std::uint64_t kBar0 = 0x4000000000, kBar2 = 0x4008000000, kBar4 = 0x4800000000;
  host::HostMemory memory{"host_memory", [] {
                            host::HostMemoryConfig c;
                            c.size = core::ByteSize{1ull << 32};
                            return c;
                          }()};
  host::RootComplex root{"root", [] {
                           host::RootComplexConfig c;
                           c.root_ports = 1;
                           return c;
                         }()};
  host::HostCpu cpu{"cpu", host::HostCpuConfig{}, root};
  PcieLink link{"link", gen4_x16()};
  PcieEndpoint endpoint{"endpoint", PcieEndpointConfig::gaudi1()};
  core::MemoryTarget chip{"chip", fast_memory(0x8000000000ull)};
  std::unique_ptr<Master> dma;

  explicit Box(Master::Body dma_body = [](Master&) {}) {
    dma = std::make_unique<Master>("dma", std::move(dma_body));
    root.to_device.bind(link.from_host);
    link.to_device.bind(endpoint.from_host);
    endpoint.to_host.bind(link.from_device);
    link.to_host.bind(root.from_device);
    root.to_memory.bind(memory.target_socket);
    endpoint.to_chip.bind(chip.target_socket);
    dma->socket.bind(endpoint.from_chip);
    root.map(0, 0x4000000000, 0x1000000000);
    root.map_buses(0, 1, 1);
  }

  // What a driver's probe does: assign the BARs, enable memory space and bus mastering.
  static void enumerate(host::HostCpu& cpu) {
    const std::uint32_t bars[6] = {0, 0x40, 0x08000000, 0x40, 0, 0x48};
    for (std::uint32_t i = 0; i < 6; ++i) cpu.config_write32(1, reg::kBar0 + 4 * i, bars[i]);
    cpu.config_write32(1, reg::kCommand, reg::kCommandMemory | reg::kCommandBusMaster);
  }
};

TEST(PcieEndpoint, ConfigurationReadsIdentifyTheChipAndSizeItsBars) {
  Box box;
  std::uint32_t id = 0, bar0 = 0, bar2 = 0, bar4_high = 0;
  box.cpu.run([&](host::HostCpu& cpu) {
    EXPECT_EQ(cpu.config_read32(1, reg::kVendorId, id), tlm::TLM_OK_RESPONSE);
    for (std::uint32_t r : {0u, 2u, 4u, 5u}) cpu.config_write32(1, reg::kBar0 + 4 * r, ~0u);
    cpu.config_read32(1, reg::kBar0, bar0);
    cpu.config_read32(1, reg::kBar0 + 8, bar2);
    cpu.config_read32(1, reg::kBar0 + 20, bar4_high);
    std::uint32_t none = 0;
    EXPECT_EQ(cpu.config_read32(9, reg::kVendorId, none), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  sc_core::sc_start();
  EXPECT_EQ(id, 0x1000u << 16 | 0x1da3u);
  EXPECT_EQ(~(bar0 & ~0xFu) + 1, 64u << 20);
  EXPECT_EQ(~(bar2 & ~0xFu) + 1, 128u << 20);
  EXPECT_EQ(bar4_high, 0xFFFFFFF8u);  // 32 GiB
}

TEST(PcieEndpoint, HostWritesThroughABarLandInChipMemoryByteExactly) {
  Box box;
  const auto data = pattern(8192);
  std::vector<std::uint8_t> back(8192);
  box.cpu.run([&](host::HostCpu& cpu) {
    Box::enumerate(cpu);
    EXPECT_EQ(cpu.write(Box::kBar0 + 0x100, data.data(), 8192), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(cpu.write(Box::kBar4 + 0x2000, data.data(), 64), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(cpu.read(Box::kBar2 + 0x4000000, back.data(), 4), tlm::TLM_OK_RESPONSE);
  });
  sc_core::sc_start();
  std::vector<std::uint8_t> in_chip(8192);
  box.chip.backing().read(0x7FF0000100, in_chip.data(), 8192);  // SRAM through BAR0
  EXPECT_TRUE(in_chip == data);
  box.chip.backing().read(0x2000, in_chip.data(), 64);  // HBM through BAR4
  EXPECT_TRUE(std::equal(in_chip.begin(), in_chip.begin() + 64, data.begin()));
}

TEST(PcieEndpoint, ChipDmaToHostMemoryAndBackIsByteExactAtTheLinkRate) {
  const auto data = pattern(kBulk, 3);
  std::vector<std::uint8_t> back(kBulk);
  TimePs write_time = 0;
  Box box([&](Master& m) {
    wait(sc_core::sc_time(50, sc_core::SC_US));  // after the host enumerated the device
    const TimePs t0 = core::now_ps();
    EXPECT_EQ(m.transfer(tlm::TLM_WRITE_COMMAND, 0x10000000, const_cast<std::uint8_t*>(data.data()),
                         kBulk),
              tlm::TLM_OK_RESPONSE);
    write_time = core::now_ps() - t0;
    EXPECT_EQ(m.transfer(tlm::TLM_READ_COMMAND, 0x10000000, back.data(), kBulk),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(m.transfer(tlm::TLM_WRITE_COMMAND, 0x200000000, back.data(), 64),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);  // beyond host memory
  });
  box.cpu.run([](host::HostCpu& cpu) { Box::enumerate(cpu); });
  sc_core::sc_start();
  std::vector<std::uint8_t> in_host(kBulk);
  box.memory.backing().read(0x10000000, in_host.data(), kBulk);
  EXPECT_TRUE(in_host == data);
  EXPECT_TRUE(back == data);
  const double rate = kBulk / (write_time * 1e-12);
  EXPECT_GT(rate, 24e9);
  EXPECT_LT(rate, 26e9);
}

TEST(PcieEndpoint, DmaWithoutBusMasteringIsRefused) {
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  Box box([&](Master& m) {
    std::uint8_t word[4] = {};
    status = m.transfer(tlm::TLM_WRITE_COMMAND, 0x1000, word, 4);
  });
  sc_core::sc_start();
  EXPECT_EQ(status, tlm::TLM_COMMAND_ERROR_RESPONSE);
}

TEST(PcieEndpoint, MsixReachesTheHostHandlerAndMaskedVectorsPend) {
  Box box;
  std::vector<std::pair<std::uint32_t, TimePs>> calls;
  std::uint32_t pba_before_unmask = 0;
  bool sent_masked = true;
  box.cpu.on_interrupt(0x43, [&] { calls.push_back({0x43, core::now_ps()}); });
  box.cpu.on_interrupt(0x45, [&] { calls.push_back({0x45, core::now_ps()}); });
  box.cpu.run([&](host::HostCpu& cpu) {
    Box::enumerate(cpu);
    const std::uint64_t table = Box::kBar2 + 0x3FF8000, pba = Box::kBar2 + 0x3FFC000;
    const std::uint32_t v3[4] = {0xFEE00000, 0, 0x43, 0}, v5[4] = {0xFEE00000, 0, 0x45, 1};
    for (int i = 0; i < 4; ++i) {
      cpu.write(table + 3 * 16 + 4 * i, &v3[i], 4);
      cpu.write(table + 5 * 16 + 4 * i, &v5[i], 4);
    }
    cpu.config_write32(1, reg::kMsixCapability, reg::kMsixEnable << 16);
    const TimePs raised = core::now_ps();
    EXPECT_TRUE(box.endpoint.raise(3));
    sent_masked = box.endpoint.raise(5);
    wait(sc_core::sc_time(2, sc_core::SC_US));
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].first, 0x43u);
    EXPECT_GT(calls[0].second, raised + 150000);  // it crossed the link
    cpu.read(pba, &pba_before_unmask, 4);
    const std::uint32_t unmask = 0;
    cpu.write(table + 5 * 16 + 12, &unmask, 4);
    wait(sc_core::sc_time(2, sc_core::SC_US));
  });
  sc_core::sc_start();
  EXPECT_FALSE(sent_masked);
  EXPECT_EQ(pba_before_unmask, 1u << 5);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].first, 0x45u);
  EXPECT_FALSE(box.endpoint.msix().pending(5));
  EXPECT_EQ(box.cpu.spurious_interrupts(), 0u);
  EXPECT_EQ(box.endpoint.stats().interrupts.value(), 2u);
}

TEST(PcieEndpoint, UnmappedAddressesGetAnAddressError) {
  Box box;
  std::vector<tlm::tlm_response_status> status;
  box.cpu.run([&](host::HostCpu& cpu) {
    std::uint8_t word[4] = {};
    status.push_back(cpu.read(Box::kBar0, word, 4));  // memory space still disabled
    Box::enumerate(cpu);
    status.push_back(cpu.read(0x10, word, 4));                        // no root port claims it
    status.push_back(cpu.read(0x4040000000, word, 4));                // behind the port, no BAR
    status.push_back(cpu.read(Box::kBar0 + 0x4000000 - 2, word, 4));  // runs past BAR0
    status.push_back(cpu.read(Box::kBar0, word, 4));
  });
  sc_core::sc_start();
  ASSERT_EQ(status.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(status[i], tlm::TLM_ADDRESS_ERROR_RESPONSE) << i;
  EXPECT_EQ(status[4], tlm::TLM_OK_RESPONSE);
}

TEST(PcieSwitch, RoutesTwoEndpointsByAddressAndBus) {
  host::HostMemory memory("host_memory", host::HostMemoryConfig{});
  host::RootComplexConfig rc;
  rc.root_ports = 1;
  host::RootComplex root("root", rc);
  host::HostCpu cpu("cpu", host::HostCpuConfig{}, root);
  PcieLink uplink("uplink", gen4_x16()), link_a("link_a", gen4_x16()), link_b("link_b", gen4_x16());
  PcieSwitchConfig sc;
  sc.downstream_ports = 2;
  PcieSwitch sw("switch", sc);
  PcieEndpoint a("a", PcieEndpointConfig::gaudi1());
  PcieEndpointConfig second = PcieEndpointConfig::gaudi1();
  second.device_id = 0x1020;
  PcieEndpoint b("b", second);
  core::MemoryTarget chip_a("chip_a", fast_memory(0x8000000000ull));
  core::MemoryTarget chip_b("chip_b", fast_memory(0x8000000000ull));
  root.to_device.bind(uplink.from_host);
  uplink.to_device.bind(sw.from_host);
  sw.to_host.bind(uplink.from_device);
  uplink.to_host.bind(root.from_device);
  root.to_memory.bind(memory.target_socket);
  PcieLink* links[] = {&link_a, &link_b};
  PcieEndpoint* eps[] = {&a, &b};
  core::MemoryTarget* chips[] = {&chip_a, &chip_b};
  for (int i = 0; i < 2; ++i) {
    sw.to_device.bind(links[i]->from_host);
    links[i]->to_host.bind(sw.from_device);
    links[i]->to_device.bind(eps[i]->from_host);
    eps[i]->to_host.bind(links[i]->from_device);
    eps[i]->to_chip.bind(chips[i]->target_socket);
  }
  Master idle_a("idle_a", [](Master&) {}), idle_b("idle_b", [](Master&) {});
  idle_a.socket.bind(a.from_chip);
  idle_b.socket.bind(b.from_chip);
  root.map(0, 0x4000000000, 0x1000000000);
  root.map_buses(0, 2, 3);
  sw.map(0, 0x4000000000, 0x100000000);
  sw.map(1, 0x4100000000, 0x100000000);
  sw.map_buses(0, 2, 2);
  sw.map_buses(1, 3, 3);
  std::uint32_t id_a = 0, id_b = 0;
  const std::uint32_t word_a = 0xAAAA5555, word_b = 0x12345678;
  cpu.run([&](host::HostCpu& c) {
    c.config_read32(2, reg::kVendorId, id_a);
    c.config_read32(3, reg::kVendorId, id_b);
    c.config_write32(2, reg::kBar0 + 4, 0x40);  // a: BAR0 at 0x4000000000
    c.config_write32(3, reg::kBar0 + 4, 0x41);  // b: BAR0 at 0x4100000000
    for (int bus : {2, 3}) c.config_write32(bus, reg::kCommand, reg::kCommandMemory);
    EXPECT_EQ(c.write(0x4000000040, &word_a, 4), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(c.write(0x4100000040, &word_b, 4), tlm::TLM_OK_RESPONSE);
    std::uint32_t w = 0;
    EXPECT_EQ(c.read(0x4200000000, &w, 4), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  sc_core::sc_start();
  EXPECT_EQ(id_a >> 16, 0x1000u);
  EXPECT_EQ(id_b >> 16, 0x1020u);
  std::uint32_t in_a = 0, in_b = 0;
  chip_a.backing().read(0x7FF0000040, &in_a, 4);  // Gaudi BAR0: SRAM
  chip_b.backing().read(0x7FF0000040, &in_b, 4);
  EXPECT_EQ(in_a, word_a);
  EXPECT_EQ(in_b, word_b);
}

}  // namespace
}  // namespace podsim::pcie
