// The NoC's timing: its latency on every timed access, ports limited to a bandwidth, and engines
// that share a port queueing behind each other (hw/chip/noc.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "core/memory_target.h"
#include "core/stats.h"
#include "hw/chip/noc.h"

namespace podsim::chip {
namespace {

constexpr std::uint64_t kA = 0x0, kB = 0x10000000, kSize = 0x1000000;
constexpr unsigned kMiB = 1u << 20;
// 10 GB/s: a 1 MiB transfer holds a port for 104857.6 ns.
const core::Bandwidth kPortRate{10e9 * 8};
constexpr core::TimePs kMiBAtPortRate = 104857600;

AddressMap two_blocks() {
  AddressMap map;
  map.add("a", kA, kSize, 0);
  map.add("b", kB, kSize, 1);
  return map;
}

// Fast enough (1 TB/s, 5 ns) that the NoC, not the block, sets the time.
core::MemoryTargetConfig block() {
  core::MemoryTargetConfig c;
  c.size = core::ByteSize{kSize};
  c.bandwidth = core::Bandwidth{1e12 * 8};
  c.latency = core::Duration{5000};
  return c;
}

class Engine : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Engine);
  tlm_utils::simple_initiator_socket<Engine> socket;
  // What each of `targets` took, when written to at once (one delay accumulating nothing).
  std::vector<std::uint64_t> targets;
  std::vector<tlm::tlm_command> commands;  // by target; writes where not given
  std::vector<core::TimePs> took;
  tlm::tlm_response_status last_status = tlm::TLM_INCOMPLETE_RESPONSE;
  unsigned bytes = kMiB;

  explicit Engine(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    SC_THREAD(run);
  }

 private:
  void run() {
    std::vector<std::uint8_t> data(bytes, 0x5A);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const std::uint64_t address = targets[i];
      tlm::tlm_generic_payload t;
      t.set_command(i < commands.size() ? commands[i] : tlm::TLM_WRITE_COMMAND);
      t.set_address(address);
      t.set_data_ptr(data.data());
      t.set_data_length(bytes);
      t.set_streaming_width(bytes);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(t, delay);
      last_status = t.get_response_status();
      took.push_back(delay.value());
    }
  }
};

struct Bench {
  core::MemoryTarget a, b;
  Noc noc;
  Engine first, second;
  Bench(const std::string& prefix, const NocConfig& config)
      : a((prefix + "_a").c_str(), block()),
        b((prefix + "_b").c_str(), block()),
        noc((prefix + "_noc").c_str(), config, two_blocks()),
        first((prefix + "_first").c_str()),
        second((prefix + "_second").c_str()) {
    noc.initiator_socket.bind(a.target_socket);
    noc.initiator_socket.bind(b.target_socket);
    noc.connect("dma0", first.socket);
    second.socket.bind(noc.target_socket);  // unnamed: gets "initiator1"
  }
};

NocConfig with_latency(std::int64_t ps) {
  NocConfig c;
  c.latency = core::Duration{ps};
  return c;
}

TEST(Noc, EveryTimedAccessPaysTheLatency) {
  Bench fast("fast", with_latency(0)), slow("slow", with_latency(10000));
  for (Bench* b : {&fast, &slow}) b->first.targets = {kA, kB + 64};
  sc_core::sc_start();
  ASSERT_EQ(fast.first.took.size(), 2u);
  ASSERT_EQ(slow.first.took.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(slow.first.took[i], fast.first.took[i] + 10000);
}

TEST(Noc, ATargetPortLimitSetsTheTimeOfACopy) {
  NocConfig c = with_latency(0);
  c.target_port = kPortRate;
  Bench b("b", c);
  b.first.targets = {kA};
  sc_core::sc_start();
  ASSERT_EQ(b.first.took.size(), 1u);
  // Cut-through: the far faster block works while the port carries the bytes.
  EXPECT_EQ(b.first.took[0], kMiBAtPortRate);
}

TEST(Noc, EnginesSharingATargetPortQueueBehindEachOther) {
  NocConfig c = with_latency(10000);
  c.target_port = kPortRate;
  Bench shared("shared", c), apart("apart", c);
  shared.first.targets = {kA};
  shared.second.targets = {kA};
  apart.first.targets = {kA};
  apart.second.targets = {kB};
  sc_core::sc_start();
  // Apart, each engine has its own block's port; shared, the second waits out the first.
  EXPECT_EQ(apart.first.took.at(0), kMiBAtPortRate + 10000);
  EXPECT_EQ(apart.second.took.at(0), kMiBAtPortRate + 10000);
  EXPECT_EQ(shared.first.took.at(0), kMiBAtPortRate + 10000);
  EXPECT_EQ(shared.second.took.at(0), 2 * kMiBAtPortRate + 10000);
}

TEST(Noc, AnInitiatorPortLimitSerialisesOneEnginesTransfers) {
  NocConfig c = with_latency(0);
  c.initiator_port = kPortRate;
  Bench b("b", c);
  b.first.targets = {kA, kB};  // both issued at the same local time
  sc_core::sc_start();
  ASSERT_EQ(b.first.took.size(), 2u);
  EXPECT_EQ(b.first.took[0], kMiBAtPortRate);
  EXPECT_EQ(b.first.took[1], 2 * kMiBAtPortRate);
}

// Regression: timing-only models check addresses with ignored commands; these once counted as
// accesses and held the ports, so a timing-only run was slower than a functional one.
TEST(Noc, AnIgnoredCommandChecksTheAddressAndCrossesNoPort) {
  NocConfig c = with_latency(10000);
  c.target_port = kPortRate;
  c.initiator_port = kPortRate;
  Bench b("b", c);
  b.first.targets = {kA, kA, kA + kSize - 32};
  b.first.commands = {tlm::TLM_IGNORE_COMMAND, tlm::TLM_WRITE_COMMAND, tlm::TLM_IGNORE_COMMAND};
  sc_core::sc_start();
  ASSERT_EQ(b.first.took.size(), 3u);
  EXPECT_EQ(b.first.took[0], 0u);
  EXPECT_EQ(b.first.took[1], kMiBAtPortRate + 10000);               // no queue behind the check
  EXPECT_EQ(b.first.last_status, tlm::TLM_ADDRESS_ERROR_RESPONSE);  // straddles a's end
  EXPECT_EQ(b.noc.port_stats(0).accesses.value(), 1u);
  EXPECT_EQ(b.noc.initiator_stats(0).accesses.value(), 1u);
  EXPECT_EQ(b.noc.stats().address_errors.value(), 1u);
}

TEST(Noc, PortsCountAccessesAndBytesUnderTheirNames) {
  Bench b("b", NocConfig{});
  b.first.targets = {kA, kB};
  b.second.targets = {kB};
  sc_core::sc_start();
  auto value = [](const std::string& name) {
    EXPECT_TRUE(core::stats_registry().contains(name)) << name;
    return core::stats_registry().to_json(0)["stats"][name]["value"].get<std::uint64_t>();
  };
  EXPECT_EQ(value("b_noc.from_dma0.accesses"), 2u);
  EXPECT_EQ(value("b_noc.from_dma0.bytes"), 2u * kMiB);
  EXPECT_EQ(value("b_noc.from_initiator1.accesses"), 1u);
  EXPECT_EQ(value("b_noc.a.bytes"), kMiB);
  EXPECT_EQ(value("b_noc.b.accesses"), 2u);
  EXPECT_EQ(b.noc.port_stats(1).bytes.value(), 2u * kMiB);
  EXPECT_EQ(b.noc.initiator_stats(1).accesses.value(), 1u);
}

TEST(Noc, AnAccessOutsideTheMapIsAnAddressErrorAndTakesNoTime) {
  Bench b("b", NocConfig{});
  b.first.bytes = 64;
  b.first.targets = {kA + kSize - 32};  // straddles the end of a
  sc_core::sc_start();
  EXPECT_EQ(b.first.last_status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(b.first.took.at(0), 0u);
  EXPECT_EQ(b.noc.stats().address_errors.value(), 1u);
  EXPECT_EQ(b.noc.port_stats(0).accesses.value(), 0u);
}

}  // namespace
}  // namespace podsim::chip
