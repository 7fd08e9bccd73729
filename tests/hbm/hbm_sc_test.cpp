#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/stats.h"
#include "hw/hbm/hbm.h"

namespace podsim::hbm {
namespace {

HbmConfig small() {
  HbmConfig c = hbm2();
  c.geometry.rows = 256;  // 4 stacks x 16 pseudo-channels x 16 banks x 256 x 1 KiB = 256 MiB
  return c;
}

class Initiator : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Initiator);
  tlm_utils::simple_initiator_socket<Initiator> socket;
  using Body = std::function<void(Initiator&)>;
  Initiator(sc_core::sc_module_name name, Body body)
      : sc_core::sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_THREAD(run);
  }
  tlm::tlm_response_status transport(tlm::tlm_command command, std::uint64_t addr,
                                     std::uint8_t* data, unsigned length, sc_core::sc_time& delay) {
    tlm::tlm_generic_payload t;
    t.set_command(command);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(length);
    t.set_streaming_width(length);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    socket->b_transport(t, delay);
    return t.get_response_status();
  }
  void pause(const sc_core::sc_time& t) { wait(t); }
  unsigned debug(tlm::tlm_command command, std::uint64_t addr, std::uint8_t* data, unsigned n) {
    tlm::tlm_generic_payload t;
    t.set_command(command);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(n);
    return socket->transport_dbg(t);
  }

 private:
  void run() { body_(*this); }
  Body body_;
};

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 131 + (i >> 10));
  return v;
}

struct Bench {
  Hbm hbm;
  Initiator initiator;
  Bench(const HbmConfig& c, bool functional, Initiator::Body body)
      : hbm("hbm", c, functional), initiator("initiator", std::move(body)) {
    initiator.socket.bind(hbm.target_socket);
  }
};

// Writes then reads back 1 MiB at an odd offset; returns the two delays.
std::vector<sc_core::sc_time> write_then_read(Initiator& i, bool check_data) {
  const std::size_t n = (1 << 20) + 100;
  auto data = pattern(n);
  std::vector<std::uint8_t> back(n);
  sc_core::sc_time w = sc_core::SC_ZERO_TIME, r = sc_core::SC_ZERO_TIME;
  EXPECT_EQ(i.transport(tlm::TLM_WRITE_COMMAND, 4096 + 7, data.data(), n, w), tlm::TLM_OK_RESPONSE);
  i.pause(w);
  EXPECT_EQ(i.transport(tlm::TLM_READ_COMMAND, 4096 + 7, back.data(), n, r), tlm::TLM_OK_RESPONSE);
  i.pause(r);
  if (check_data) {
    EXPECT_EQ(back, data);
  }
  return {w, r};
}

TEST(HbmModule, BulkDataIsByteExactAndSpreadOverEveryChannel) {
  Bench b(small(), true, [](Initiator& i) { write_then_read(i, true); });
  sc_core::sc_start();
  auto& stats = core::stats_registry();
  const auto json = stats.to_json(0);
  for (int ch = 0; ch < 32; ++ch) {
    const std::string name = fmt::format("hbm.ch{:02}.bytes_written", ch);
    ASSERT_TRUE(stats.contains(name)) << name;
    EXPECT_GT(json["stats"][name]["value"].get<std::uint64_t>(), 30000u) << name;
  }
}

TEST(HbmModule, TimingOnlyGivesTheSameDelaysAsFunctional) {
  std::vector<sc_core::sc_time> functional, timing;
  Bench f(small(), true, [&](Initiator& i) { functional = write_then_read(i, true); });
  HbmConfig c = small();
  Hbm timing_only("timing_only", c, false);
  Initiator second("second", [&](Initiator& i) { timing = write_then_read(i, false); });
  second.socket.bind(timing_only.target_socket);
  sc_core::sc_start();
  ASSERT_EQ(functional.size(), 2u);
  EXPECT_EQ(functional, timing);
  EXPECT_GT(functional[1], sc_core::sc_time(1, sc_core::SC_US));  // 1 MiB at 1 TB/s: ~1 us
  EXPECT_FALSE(timing_only.functional());
}

TEST(HbmModule, DebugTransportMovesDataWithoutTime) {
  Bench b(small(), true, [](Initiator& i) {
    auto data = pattern(300);
    std::vector<std::uint8_t> back(300);
    EXPECT_EQ(i.debug(tlm::TLM_WRITE_COMMAND, 12345, data.data(), 300), 300u);
    EXPECT_EQ(i.debug(tlm::TLM_READ_COMMAND, 12345, back.data(), 300), 300u);
    EXPECT_EQ(back, data);
    EXPECT_EQ(i.debug(tlm::TLM_READ_COMMAND, (256ULL << 20) - 10, back.data(), 300), 0u);
  });
  sc_core::sc_start();
  EXPECT_EQ(b.hbm.engine().channel_stats(0).reads.value(), 0u);
}

TEST(HbmModule, OutsideTheCapacityIsAnAddressError) {
  Bench b(small(), true, [](Initiator& i) {
    std::uint8_t buf[64] = {};
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(i.transport(tlm::TLM_READ_COMMAND, (256ULL << 20) - 32, buf, 64, d),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(d, sc_core::SC_ZERO_TIME);
    EXPECT_EQ(i.transport(tlm::TLM_READ_COMMAND, (256ULL << 20) - 64, buf, 64, d),
              tlm::TLM_OK_RESPONSE);
  });
  sc_core::sc_start();
}

TEST(HbmModule, BTransportAddsToTheCallersDelayAndCommitsInCallOrder) {
  Bench b(small(), false, [](Initiator& i) {
    sc_core::sc_time first = sc_core::SC_ZERO_TIME;
    i.transport(tlm::TLM_READ_COMMAND, 0, nullptr, 32, first);
    EXPECT_EQ(first, sc_core::sc_time(39, sc_core::SC_NS));  // front end, tRCD, RL, BL/2
    sc_core::sc_time second = sc_core::sc_time(100, sc_core::SC_NS);
    i.transport(tlm::TLM_READ_COMMAND, 128, nullptr, 32, second);  // same bank
    EXPECT_EQ(second, sc_core::sc_time(125, sc_core::SC_NS));      // a row hit, 25 ns later
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);    // no wait inside
  });
  sc_core::sc_start();
}

// The rate model serves a transaction at the stream rate the banks' rules give, after their
// unloaded latency; back-to-back transactions queue on its one server; data still moves.
TEST(HbmModule, RateModelServesAtTheBanksStreamRate) {
  HbmConfig c = small();
  c.model = HbmModel::kRate;
  const StreamTiming t = stream_timing(c);
  // An idle 64-byte read: front end, tRCD, RL, BL/2, and tRRD_S for its second bank group's ACT.
  EXPECT_EQ(t.latency.ps, 43000);
  const double peak = c.peak_bandwidth().bits_per_second;
  EXPECT_GT(t.read.bits_per_second, 0.85 * peak);
  EXPECT_LT(t.read.bits_per_second, peak);
  EXPECT_GT(t.write.bits_per_second, 0.85 * peak);
  std::vector<sc_core::sc_time> delays;
  Bench b(c, true, [&](Initiator& i) {
    delays = write_then_read(i, true);
    sc_core::sc_time a = sc_core::SC_ZERO_TIME, second = sc_core::SC_ZERO_TIME;
    i.transport(tlm::TLM_READ_COMMAND, 0, nullptr, 0, a);
    std::vector<std::uint8_t> buf(1 << 20);
    i.transport(tlm::TLM_READ_COMMAND, 0, buf.data(), 1 << 20, a);
    i.transport(tlm::TLM_READ_COMMAND, 1 << 20, buf.data(), 1 << 20, second);
    EXPECT_GT(second, a);  // it waited for the first megabyte's turn
  });
  sc_core::sc_start();
  ASSERT_EQ(delays.size(), 2u);
  const double bytes = (1 << 20) + 100;
  EXPECT_NEAR(static_cast<double>(delays[1].value()), bytes * 8e12 / t.read.bits_per_second + 43000,
              2);
  auto& stats = core::stats_registry();
  EXPECT_TRUE(stats.contains("hbm.bytes_read"));
  EXPECT_FALSE(stats.contains("hbm.ch00.reads"));
}

}  // namespace
}  // namespace podsim::hbm
