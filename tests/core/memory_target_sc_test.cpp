#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/kernel.h"
#include "core/memory_target.h"
#include "core/stats.h"
#include "core/units.h"

namespace podsim::core {
namespace {

using namespace literals;
using ::testing::Each;
using ::testing::HasSubstr;

// 800 Gbps is 100 GB/s: exactly 10 ps per byte, so expected times are plain integers.
constexpr TimePs kPsPerByte = 10;
constexpr TimePs kLatencyPs = 50000;
constexpr std::uint64_t kMiB = 1 << 20;

MemoryTargetConfig test_config(bool functional = true) {
  MemoryTargetConfig config;
  config.size = 64_MiB;
  config.bandwidth = 800_Gbps;
  config.latency = Duration{static_cast<std::int64_t>(kLatencyPs)};
  config.functional = functional;
  return config;
}

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12));
  return bytes;
}

// Runs a test body in an SC_THREAD and offers one-call transactions on its socket.
class Initiator : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Initiator);
  tlm_utils::simple_initiator_socket<Initiator> socket;

  using Body = std::function<void(Initiator&)>;
  Initiator(sc_core::sc_module_name name, Body body)
      : sc_core::sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_THREAD(run);
  }

  // One b_transport; `delay` is the initiator's local time offset, advanced by the target.
  tlm::tlm_response_status transport(tlm::tlm_command command, std::uint64_t addr,
                                     std::uint8_t* data, unsigned length, sc_core::sc_time& delay,
                                     std::uint8_t* byte_enables = nullptr) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(addr);
    trans.set_data_ptr(data);
    trans.set_data_length(length);
    trans.set_streaming_width(length);
    trans.set_byte_enable_ptr(byte_enables);
    trans.set_byte_enable_length(byte_enables ? length : 0);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(trans, delay);
    return trans.get_response_status();
  }

  // A blocking transfer: transport, then wait out the delay the target returned.
  tlm::tlm_response_status transfer(tlm::tlm_command command, std::uint64_t addr,
                                    std::uint8_t* data, unsigned length) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const auto status = transport(command, addr, data, length, delay);
    wait(delay);
    return status;
  }

  // Pipelined transfers: every chunk is issued at the current time, then the thread waits for
  // the last one to complete.
  void pipelined(tlm::tlm_command command, std::uint64_t addr, std::uint8_t* data,
                 std::uint64_t length, unsigned chunk) {
    sc_core::sc_time longest = sc_core::SC_ZERO_TIME;
    for (std::uint64_t done = 0; done < length; done += chunk) {
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      EXPECT_EQ(transport(command, addr + done, data + done, chunk, delay), tlm::TLM_OK_RESPONSE);
      longest = std::max(longest, delay);
    }
    wait(longest);
  }

  unsigned debug(tlm::tlm_command command, std::uint64_t addr, std::uint8_t* data,
                 unsigned length) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(addr);
    trans.set_data_ptr(data);
    trans.set_data_length(length);
    return socket->transport_dbg(trans);
  }

 private:
  void run() { body_(*this); }
  Body body_;
};

// Lets several initiators reach the memory's single-bind target socket.
class Bus : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Bus> initiators;
  tlm_utils::simple_initiator_socket<Bus> memory_socket;

  explicit Bus(sc_core::sc_module_name name)
      : sc_core::sc_module(name), initiators("initiators"), memory_socket("memory_socket") {
    initiators.register_b_transport(this, &Bus::b_transport);
  }

 private:
  void b_transport(int, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    memory_socket->b_transport(trans, delay);
  }
};

// Writes 4 MiB in one transaction, reads it back in 64 KiB pipelined chunks, and records the
// time each phase ended. Shared by the functional and timing-only tests, which must agree.
struct BulkRun {
  std::vector<std::uint8_t> written = pattern(4 * kMiB);
  std::vector<std::uint8_t> read_back = std::vector<std::uint8_t>(4 * kMiB, 0xEE);
  TimePs write_done = 0;
  TimePs read_done = 0;
  tlm::tlm_response_status write_status = tlm::TLM_INCOMPLETE_RESPONSE;

  void run(Initiator& self) {
    write_status = self.transfer(tlm::TLM_WRITE_COMMAND, 1 * kMiB, written.data(),
                                 static_cast<unsigned>(written.size()));
    write_done = now_ps();
    self.pipelined(tlm::TLM_READ_COMMAND, 1 * kMiB, read_back.data(), read_back.size(), 64 * 1024);
    read_done = now_ps();
  }
};

constexpr TimePs kBulkTime = 4 * kMiB * kPsPerByte + kLatencyPs;

TEST(MemoryTarget, BulkWriteThenReadBackMovesDataAtConfiguredBandwidth) {
  MemoryTarget memory("mem", test_config());
  BulkRun bulk;
  Initiator initiator("cpu", [&](Initiator& self) { bulk.run(self); });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();

  EXPECT_EQ(bulk.write_status, tlm::TLM_OK_RESPONSE);
  EXPECT_TRUE(bulk.read_back == bulk.written) << "read-back data differs from what was written";
  EXPECT_EQ(bulk.write_done, kBulkTime);
  // Pipelined chunks pay the latency once: the bytes stream back to back at full bandwidth.
  EXPECT_EQ(bulk.read_done - bulk.write_done, kBulkTime);
  EXPECT_EQ(memory.backing().pages_allocated(), 4 * kMiB / 4096);
}

TEST(MemoryTarget, TimingOnlyModeGivesTheSameTimesAndMovesNoData) {
  MemoryTarget memory("mem", test_config(/*functional=*/false));
  BulkRun bulk;
  Initiator initiator("cpu", [&](Initiator& self) { bulk.run(self); });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();

  EXPECT_EQ(bulk.write_status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(bulk.write_done, kBulkTime);
  EXPECT_EQ(bulk.read_done - bulk.write_done, kBulkTime);
  EXPECT_THAT(bulk.read_back, Each(0xEE));
  EXPECT_EQ(memory.backing().pages_allocated(), 0u);
}

TEST(MemoryTarget, TimingOnlyModeAcceptsTransactionsWithoutData) {
  MemoryTarget memory("mem", test_config(/*functional=*/false));
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  Initiator initiator("cpu", [&](Initiator& self) {
    status = self.transfer(tlm::TLM_WRITE_COMMAND, 0, nullptr, 1000);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(now_ps(), 1000 * kPsPerByte + kLatencyPs);
}

TEST(MemoryTarget, TwoInitiatorsShareTheBandwidth) {
  MemoryTarget memory("mem", test_config());
  std::vector<std::uint8_t> a = pattern(kMiB), b = pattern(kMiB);
  TimePs a_done = 0, b_done = 0;
  Initiator first("first", [&](Initiator& self) {
    EXPECT_EQ(self.transfer(tlm::TLM_WRITE_COMMAND, 0, a.data(), kMiB), tlm::TLM_OK_RESPONSE);
    a_done = now_ps();
  });
  Initiator second("second", [&](Initiator& self) {
    EXPECT_EQ(self.transfer(tlm::TLM_READ_COMMAND, 8 * kMiB, b.data(), kMiB), tlm::TLM_OK_RESPONSE);
    b_done = now_ps();
  });
  Bus bus("bus");
  first.socket.bind(bus.initiators);
  second.socket.bind(bus.initiators);
  bus.memory_socket.bind(memory.target_socket);
  sc_core::sc_start();

  constexpr TimePs kOne = kMiB * kPsPerByte;
  // Whichever ran first gets the memory first; the other waits for it.
  EXPECT_EQ(std::min(a_done, b_done), kOne + kLatencyPs);
  EXPECT_EQ(std::max(a_done, b_done), 2 * kOne + kLatencyPs);
  EXPECT_EQ(memory.server().busy_ps(), 2 * kOne);
  EXPECT_NEAR(memory.stats().busy.average(now_ps()),
              static_cast<double>(2 * kOne) / static_cast<double>(2 * kOne + kLatencyPs), 1e-9);
}

TEST(MemoryTarget, TemporalDecouplingDelayCountsAsArrivalTime) {
  MemoryTarget memory("mem", test_config());
  std::vector<std::uint8_t> data(1000);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  Initiator initiator("cpu", [&](Initiator& self) {
    delay = sc_core::sc_time::from_value(7000);  // the initiator runs ahead of the kernel
    EXPECT_EQ(self.transport(tlm::TLM_WRITE_COMMAND, 0, data.data(), 1000, delay),
              tlm::TLM_OK_RESPONSE);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(delay.value(), 7000 + 1000 * kPsPerByte + kLatencyPs);
}

TEST(MemoryTarget, CountsTransactionsAndBytesUnderItsName) {
  MemoryTarget memory("mem", test_config());
  BulkRun bulk;
  Initiator initiator("cpu", [&](Initiator& self) { bulk.run(self); });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();

  EXPECT_EQ(memory.stats().writes.value(), 1u);
  EXPECT_EQ(memory.stats().bytes_written.value(), 4 * kMiB);
  EXPECT_EQ(memory.stats().reads.value(), 64u);
  EXPECT_EQ(memory.stats().bytes_read.value(), 4 * kMiB);
  for (const char* name : {"reads", "writes", "bytes_read", "bytes_written", "busy"}) {
    EXPECT_TRUE(stats_registry().contains(std::string("mem.") + name)) << name;
  }
}

TEST(MemoryTarget, OutOfRangeGivesAddressErrorAndTakesNoTime) {
  MemoryTarget memory("mem", test_config());
  std::vector<std::uint8_t> data(16, 0xEE);
  Initiator initiator("cpu", [&](Initiator& self) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.transport(tlm::TLM_READ_COMMAND, 64 * kMiB - 8, data.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.transport(tlm::TLM_WRITE_COMMAND, 64 * kMiB, data.data(), 1, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.transport(tlm::TLM_WRITE_COMMAND, ~std::uint64_t{0} - 4, data.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
    EXPECT_EQ(self.transport(tlm::TLM_READ_COMMAND, 64 * kMiB - 16, data.data(), 16, delay),
              tlm::TLM_OK_RESPONSE);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(memory.stats().reads.value(), 1u);
  EXPECT_EQ(memory.stats().writes.value(), 0u);
}

TEST(MemoryTarget, ByteEnablesAreRejected) {
  MemoryTarget memory("mem", test_config());
  std::vector<std::uint8_t> data(8, 1);
  std::vector<std::uint8_t> enables(8, 0xFF);
  Initiator initiator("cpu", [&](Initiator& self) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.transport(tlm::TLM_WRITE_COMMAND, 0, data.data(), 8, delay, enables.data()),
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(memory.backing().pages_allocated(), 0u);
}

TEST(MemoryTarget, IgnoreCommandSucceedsWithoutTime) {
  MemoryTarget memory("mem", test_config());
  std::vector<std::uint8_t> data(64, 3);
  Initiator initiator("cpu", [&](Initiator& self) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.transport(tlm::TLM_IGNORE_COMMAND, 0, data.data(), 64, delay),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay, sc_core::SC_ZERO_TIME);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(memory.backing().pages_allocated(), 0u);
  EXPECT_EQ(memory.stats().reads.value() + memory.stats().writes.value(), 0u);
}

TEST(MemoryTarget, DebugTransportMovesDataWithoutTime) {
  MemoryTarget memory("mem", test_config());
  const auto data = pattern(10000);
  std::vector<std::uint8_t> in = data, out(data.size());
  unsigned written = 0, read = 0, beyond = 0;
  Initiator initiator("cpu", [&](Initiator& self) {
    written = self.debug(tlm::TLM_WRITE_COMMAND, 4090, in.data(), 10000);
    read = self.debug(tlm::TLM_READ_COMMAND, 4090, out.data(), 10000);
    beyond = self.debug(tlm::TLM_READ_COMMAND, 64 * kMiB - 4, out.data(), 8);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(written, 10000u);
  EXPECT_EQ(read, 10000u);
  EXPECT_EQ(beyond, 0u);
  EXPECT_EQ(out, data);
  EXPECT_EQ(now_ps(), 0u);
  EXPECT_EQ(memory.server().busy_until(), 0u);
  EXPECT_EQ(memory.stats().writes.value(), 0u);
}

TEST(MemoryTarget, BackingIsVisibleToTransactions) {
  MemoryTarget memory("mem", test_config());
  const auto image = pattern(300);
  memory.backing().write(5000, image.data(), image.size());
  std::vector<std::uint8_t> out(300);
  Initiator initiator("cpu", [&](Initiator& self) {
    EXPECT_EQ(self.transfer(tlm::TLM_READ_COMMAND, 5000, out.data(), 300), tlm::TLM_OK_RESPONSE);
  });
  initiator.socket.bind(memory.target_socket);
  sc_core::sc_start();
  EXPECT_EQ(out, image);
}

std::string validation_error(const MemoryTargetConfig& config) {
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryTargetConfig, DefaultsAreValid) { EXPECT_NO_THROW(MemoryTargetConfig{}.validate()); }

TEST(MemoryTargetConfig, ValidateNamesTheBadField) {
  MemoryTargetConfig config = test_config();
  config.size = ByteSize{0};
  EXPECT_THAT(validation_error(config), HasSubstr("size"));

  config = test_config();
  config.bandwidth = Bandwidth{0};
  EXPECT_THAT(validation_error(config), HasSubstr("bandwidth"));

  config = test_config();
  config.latency = Duration{-5};
  EXPECT_THAT(validation_error(config), HasSubstr("latency"));

  config = test_config();
  config.page_size = ByteSize{3000};
  EXPECT_THAT(validation_error(config), HasSubstr("page_size"));
}

}  // namespace
}  // namespace podsim::core
