// Queue managers and the sync manager on a small chip: memory, the E_N sync manager and two
// QMANs (DMA0_QM, DMA1_QM) with fake engines, all at their Gaudi1 addresses behind a chip::Noc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/memory_target.h"
#include "hw/chip/noc.h"
#include "hw/chip/qman.h"
#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/chip/sync_manager.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::chip {
namespace {

using spec::MonitorArm;
using spec::MonitorOp;
using spec::Packet;
using ::testing::HasSubstr;
using Kind = core::ErrorEvent::Kind;

constexpr std::uint64_t kSync = PODSIM_GAUDI1_SYNC_MNGR_E_N_BASE;
constexpr std::uint64_t kQm[2] = {PODSIM_GAUDI1_DMA0_QM_BASE, PODSIM_GAUDI1_DMA1_QM_BASE};
constexpr std::uint64_t kEngine[2] = {PODSIM_GAUDI1_DMA0_CORE_BASE, PODSIM_GAUDI1_DMA1_CORE_BASE};
constexpr std::uint64_t kPq = 0x10000;        // stream s of QMAN q: kPq + (2q + s) * 0x10000
constexpr std::uint64_t kBuffers = 0x100000;  // command buffers
constexpr std::uint64_t kData = 0x800000;     // where messages land
constexpr std::uint64_t kUnmapped = 0x7F00000000000;
constexpr core::TimePs kPacketPs = 4000;

// An engine that records its register writes and stays busy for a while after COMMIT.
class FakeEngine : public sc_core::sc_module, public core::EngineStatus, private core::Timed {
 public:
  tlm_utils::simple_target_socket<FakeEngine> socket;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> writes;
  core::TimePs busy_ps = 1000000, committed_at = 0, done_at = 0;

  explicit FakeEngine(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    socket.register_b_transport(this, &FakeEngine::b_transport);
  }
  bool busy() const override { return busy_; }
  void when_idle(std::function<void()> then) override {
    if (!busy_) return then();
    waiters_.push_back(std::move(then));
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    for (unsigned i = 0; i < trans.get_data_length(); i += 4) {
      std::uint32_t word = 0;
      std::memcpy(&word, trans.get_data_ptr() + i, 4);
      writes.emplace_back(trans.get_address() + i, word);
      if (trans.get_address() + i == PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET) {
        busy_ = true;
        committed_at = core::now_ps() + delay.value();
        core::event_queue().schedule(committed_at + busy_ps, *this, 0);
      }
    }
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  void fire(std::uint32_t) override {
    busy_ = false;
    done_at = core::now_ps();
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& w : waiters) w();
  }
  bool busy_ = false;
  std::vector<std::function<void()>> waiters_;
};

// The host: runs the test's body in a thread and writes registers through the NoC.
class Host : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Host);
  tlm_utils::simple_initiator_socket<Host> socket;
  std::function<void()> body;

  explicit Host(sc_core::sc_module_name name) : sc_module(name), socket("socket") {
    SC_THREAD(run);
  }
  void write32(std::uint64_t address, std::uint32_t value) {
    transport(tlm::TLM_WRITE_COMMAND, address, value);
  }
  std::uint32_t read32(std::uint64_t address) {
    return transport(tlm::TLM_READ_COMMAND, address, 0);
  }

 private:
  std::uint32_t transport(tlm::tlm_command command, std::uint64_t address, std::uint32_t value) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(address);
    trans.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    trans.set_data_length(4);
    trans.set_streaming_width(4);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(trans, delay);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE) << std::hex << address;
    wait(delay);
    return value;
  }
  void run() {
    if (body) body();
  }
};

AddressMap test_map() {
  AddressMap map;
  map.add("memory", 0, 64 << 20, 0);
  map.add("sync", kSync, SyncManager::kRegisterSpan, 1);
  for (int q = 0; q < 2; ++q) {
    map.add("qm" + std::to_string(q), kQm[q], Qman::kRegisterSpan, 2 + q);
    map.add("engine" + std::to_string(q), kEngine[q], 0x1000, 4 + q);
  }
  return map;
}

core::MemoryTargetConfig memory_config() {
  core::MemoryTargetConfig c;
  c.size = core::ByteSize{64 << 20};
  c.latency = core::Duration{50000};
  return c;
}

QmanConfig qman_config(int q) {
  QmanConfig c;
  c.engine_base.value = kEngine[q];
  c.packet_time = core::Duration{static_cast<std::int64_t>(kPacketPs)};
  return c;
}

class Bench {
 public:
  core::MemoryTarget memory{"memory", memory_config()};
  SyncManager sync{"sync", SyncManagerConfig{}};
  std::unique_ptr<Qman> qm[2];
  FakeEngine engine0{"engine0"}, engine1{"engine1"};
  FakeEngine* engine[2] = {&engine0, &engine1};
  // No NoC latency: the expectations below time the QMAN alone.
  Noc noc{"noc", NocConfig{core::Duration{0}}, test_map()};
  Host host{"host"};
  std::vector<core::ErrorEvent> errors;
  spec::PacketCodec codec;

  explicit Bench(core::Duration fence_timeout = core::Duration{1000000000000}) {
    for (int q = 0; q < 2; ++q) {
      QmanConfig c = qman_config(q);
      c.fence_timeout = fence_timeout;
      qm[q] = std::make_unique<Qman>(("qm" + std::to_string(q)).c_str(), c);
    }
    noc.initiator_socket.bind(memory.target_socket);
    noc.initiator_socket.bind(sync.target_socket);
    noc.initiator_socket.bind(qm[0]->target_socket);
    noc.initiator_socket.bind(qm[1]->target_socket);
    noc.initiator_socket.bind(engine0.socket);
    noc.initiator_socket.bind(engine1.socket);
    qm[0]->initiator_socket.bind(noc.target_socket);
    qm[1]->initiator_socket.bind(noc.target_socket);
    sync.initiator_socket.bind(noc.target_socket);
    host.socket.bind(noc.target_socket);
    const auto sink = [this](const core::ErrorEvent& e) { errors.push_back(e); };
    sync.set_error_sink(sink);
    for (int q = 0; q < 2; ++q) {
      qm[q]->set_error_sink(sink);
      qm[q]->attach_engine(*engine[q]);
    }
  }

  static std::uint64_t pq(int q, int s) {
    return kPq + static_cast<std::uint64_t>(2 * q + s) * 0x10000;
  }

  // As the driver sets a QMAN up: PQ rings, MSG_SHORT bases, LIN_DMA offsets, enables.
  void init_qman(int q, std::uint32_t log2_size = 4) {
    const std::uint64_t base = kQm[q];
    for (int s = 0; s < Qman::kStreams; ++s) {
      host.write32(PODSIM_GAUDI1_QMAN_PQ_BASE_LO(base, s), static_cast<std::uint32_t>(pq(q, s)));
      host.write32(PODSIM_GAUDI1_QMAN_PQ_BASE_HI(base, s),
                   static_cast<std::uint32_t>(pq(q, s) >> 32));
      host.write32(PODSIM_GAUDI1_QMAN_PQ_SIZE(base, s), log2_size);
    }
    for (int cp = 0; cp < Qman::kCps; ++cp) {
      set_msg_base(q, cp, 0, PODSIM_GAUDI1_MSG_SHORT_BASE0);
      set_msg_base(q, cp, 1, PODSIM_GAUDI1_MSG_SHORT_BASE1);
      host.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_TSIZE_OFFSET(base, cp),
                   PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET);
      host.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_SRC_BASE_LO_OFFSET(base, cp),
                   PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET);
      host.write32(PODSIM_GAUDI1_QMAN_CP_LDMA_DST_BASE_LO_OFFSET(base, cp),
                   PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET);
    }
    host.write32(PODSIM_GAUDI1_QMAN_GLBL_CFG0(base),
                 podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
  }
  void set_msg_base(int q, int cp, int n, std::uint64_t address) {
    const std::uint64_t lo[] = {PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_LO(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_LO(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_LO(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_LO(kQm[q], cp)};
    const std::uint64_t hi[] = {PODSIM_GAUDI1_QMAN_CP_MSG_BASE0_ADDR_HI(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE1_ADDR_HI(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE2_ADDR_HI(kQm[q], cp),
                                PODSIM_GAUDI1_QMAN_CP_MSG_BASE3_ADDR_HI(kQm[q], cp)};
    host.write32(lo[n], static_cast<std::uint32_t>(address));
    host.write32(hi[n], static_cast<std::uint32_t>(address >> 32));
  }

  // Writes a buffer at `address` and its descriptor at the stream's next PQ slot, without the
  // doorbell; returns the producer index after it.
  std::uint32_t queue(int q, int s, std::uint64_t address, const std::vector<Packet>& packets,
                      std::uint32_t control = 0, std::uint32_t log2_size = 4) {
    const std::vector<std::uint8_t> bytes = codec.encode(packets);
    return queue_bytes(q, s, address, bytes, control, log2_size);
  }
  std::uint32_t queue_bytes(int q, int s, std::uint64_t address,
                            const std::vector<std::uint8_t>& bytes, std::uint32_t control = 0,
                            std::uint32_t log2_size = 4) {
    if (!bytes.empty()) memory.backing().write(address, bytes.data(), bytes.size());
    std::uint32_t& pi = pi_[q][s];
    PqEntry e;
    e.address = address;
    e.length = static_cast<std::uint32_t>(bytes.size());
    e.control = control;
    std::uint8_t raw[PODSIM_GAUDI1_PQ_ENTRY_SIZE];
    encode_pq_entry(e, raw);
    memory.backing().write(pq(q, s) + pq_slot(pi, log2_size) * sizeof raw, raw, sizeof raw);
    pi = pq_next(pi, log2_size);
    return pi;
  }
  void doorbell(int q, int s) { host.write32(PODSIM_GAUDI1_QMAN_PQ_PI(kQm[q], s), pi_[q][s]); }
  void submit(int q, int s, std::uint64_t address, const std::vector<Packet>& packets,
              std::uint32_t control = 0) {
    queue(q, s, address, packets, control);
    doorbell(q, s);
  }

  std::uint32_t mem32(std::uint64_t address) {
    std::uint32_t v = 0;
    memory.backing().read(address, reinterpret_cast<std::uint8_t*>(&v), 4);
    return v;
  }
  std::uint64_t mem64(std::uint64_t address) {
    std::uint64_t v = 0;
    memory.backing().read(address, reinterpret_cast<std::uint8_t*>(&v), 8);
    return v;
  }

  void run(std::function<void()> body) {
    host.body = std::move(body);
    sc_core::sc_start();
  }

 private:
  std::uint32_t pi_[2][Qman::kStreams] = {};
};

// ---- packets, as the driver and hl-thunk's tests build them (rb always set)

Packet barrier(Packet p, bool eb = false, bool mb = false) {
  p.barriers(eb, true, mb);
  return p;
}
Packet msg_long(std::uint64_t address, std::uint32_t value, bool mb = false) {
  return barrier(Packet("MSG_LONG").set("addr", address).set("value", value), false, mb);
}
Packet timestamp(std::uint64_t address) {
  return barrier(Packet("MSG_LONG").set("addr", address).set("op", 1));
}
Packet msg_short(int base, std::uint32_t offset, std::uint32_t value, bool mb = false) {
  return barrier(
      Packet("MSG_SHORT").set("base", base).set("msg_addr_offset", offset).set("value", value),
      false, mb);
}
// SOB updates and monitor setup on the E_N manager through bases 1 and 0, as the driver sets them.
Packet sob_add(std::uint32_t sob, std::uint32_t value) {
  return msg_short(1, sob * 4, spec::encode_sob_write({value, true, false}));
}
Packet sob_set(std::uint32_t sob, std::uint32_t value) {
  return msg_short(1, sob * 4, spec::encode_sob_write({value, false, false}));
}
std::uint32_t monitor_offset(std::uint64_t array_offset, std::uint32_t monitor) {
  return static_cast<std::uint32_t>(array_offset + monitor * 4 -
                                    PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL_OFFSET);
}
// Monitor `mon` writes `data` to `address` once `sob` reaches `value`.
std::vector<Packet> monitor(std::uint32_t mon, std::uint64_t address, std::uint32_t data,
                            std::uint32_t sob, std::uint32_t value,
                            MonitorOp op = MonitorOp::kGreaterOrEqual) {
  return {msg_short(0, monitor_offset(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL_OFFSET, mon),
                    static_cast<std::uint32_t>(address)),
          msg_short(0, monitor_offset(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH_OFFSET, mon),
                    static_cast<std::uint32_t>(address >> 32)),
          msg_short(0, monitor_offset(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA_OFFSET, mon), data),
          msg_short(0, monitor_offset(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM_OFFSET, mon),
                    spec::encode_monitor_arm(MonitorArm::single(sob, value, op)), true)};
}
Packet fence(int id, std::uint32_t target, std::uint32_t dec) {
  return barrier(Packet("FENCE").set("id", id).set("target_val", target).set("dec_val", dec), false,
                 true);
}
std::vector<Packet> operator+(std::vector<Packet> a, const std::vector<Packet>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- tests

TEST(Qman, DoorbellFetchesAndRunsABuffer) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers,
             {barrier(Packet("WREG_32").set("reg_offset", 0x7C).set("value", 0xCAFE)),
              msg_long(kData, 0x1234), barrier(Packet("NOP")), barrier(Packet("STOP")),
              msg_long(kData + 4, 0x5678)});
  });
  EXPECT_EQ(b.mem32(kData), 0x1234u);
  EXPECT_EQ(b.mem32(kData + 4), 0u) << "a packet after STOP ran";
  ASSERT_EQ(b.engine0.writes.size(), 1u);
  EXPECT_EQ(b.engine0.writes[0], std::make_pair(std::uint64_t{0x7C}, std::uint32_t{0xCAFE}));
  EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET), 1u);
  EXPECT_EQ(b.qm[0]->stream_stats(0).packets.value(), 4u);
  EXPECT_EQ(b.qm[0]->stream_stats(0).cbs.value(), 1u);
  EXPECT_TRUE(b.qm[0]->idle());
  EXPECT_TRUE(b.errors.empty());
  // Two memory reads (descriptor, buffer) of at least the latency each, then the packets.
  EXPECT_GE(sc_core::sc_time_stamp().value(), 2 * 50000 + 2 * kPacketPs);
}

TEST(Qman, WregBulkWritesConsecutiveRegisters) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.submit(
        0, 0, kBuffers,
        {barrier(Packet("WREG_BULK").set("reg_offset", 0x14).set_tail({0x11112222, 0x33334444}))});
  });
  ASSERT_EQ(b.engine0.writes.size(), 4u);
  EXPECT_EQ(b.engine0.writes[0], std::make_pair(std::uint64_t{0x14}, std::uint32_t{0x11112222}));
  EXPECT_EQ(b.engine0.writes[1].second, 0u);
  EXPECT_EQ(b.engine0.writes[2], std::make_pair(std::uint64_t{0x1C}, std::uint32_t{0x33334444}));
}

TEST(Qman, FenceBlocksUntilAMonitorWritesItsCounter) {
  Bench b;
  const std::uint32_t sob = 300, mon = 80;
  const std::uint64_t fence_reg = PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[0], 0);
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers,
             monitor(mon, fence_reg, 1, sob, 1, MonitorOp::kEqual) +
                 std::vector<Packet>{fence(0, 1, 1), timestamp(kData)});
    wait(10, sc_core::SC_US);
    EXPECT_EQ(b.mem64(kData), 0u) << "passed the fence before the monitor fired";
    EXPECT_EQ(b.qm[0]->stream_stats(0).fence_waits.value(), 1u);
    EXPECT_TRUE(b.sync.monitor_armed(mon));
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(kSync, sob),
                   spec::encode_sob_write({1, false, false}));
  });
  EXPECT_GE(b.mem64(kData), 10000000u);
  EXPECT_LT(b.mem64(kData), 10000000u + 100000u);
  EXPECT_FALSE(b.sync.monitor_armed(mon));
  EXPECT_EQ(b.sync.stats().monitor_fires.value(), 1u);
  EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_CP_FENCE0_CNT_OFFSET), 0u);  // decremented
}

TEST(Qman, MsgShortWritesAtTheSelectedBase) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.set_msg_base(0, 0, 2, kData);
    b.submit(0, 0, kBuffers, {sob_add(5, 3), sob_add(5, 4), msg_short(2, 8, 0xABC)});
  });
  EXPECT_EQ(b.sync.sob(5), 7u);
  EXPECT_EQ(b.mem32(kData + 8), 0xABCu);
  EXPECT_EQ(b.sync.stats().sob_writes.value(), 2u);
}

// Monitors, driven directly through the sync manager's registers.
TEST(SyncManager, MonitorGroupMaskAndComparison) {
  Bench b;
  auto arm = [&](std::uint32_t mon, MonitorArm a, std::uint64_t address, std::uint32_t data) {
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(kSync, mon),
                   static_cast<std::uint32_t>(address));
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(kSync, mon),
                   static_cast<std::uint32_t>(address >> 32));
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(kSync, mon), data);
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(kSync, mon), spec::encode_monitor_arm(a));
  };
  auto set = [&](std::uint32_t sob, std::uint32_t v) {
    b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(kSync, sob),
                   spec::encode_sob_write({v, false, false}));
  };
  b.run([&] {
    MonitorArm group;
    group.group = 3;  // objects 24..31; 24 and 25 watched
    group.mask = 0xFC;
    group.value = 2;
    arm(1, group, kData, 11);
    set(24, 2);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData), 0u) << "fired with one watched object unmet";
    const std::uint32_t status = b.host.read32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_STATUS(kSync, 1));
    EXPECT_EQ(status & PODSIM_GAUDI1_MON_STATUS_VALID_MASK, 1u);
    EXPECT_EQ(
        (status & PODSIM_GAUDI1_MON_STATUS_PENDING_MASK) >> PODSIM_GAUDI1_MON_STATUS_PENDING_SHIFT,
        0x2u);
    set(26, 0);  // masked out
    set(25, 3);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData), 11u);

    arm(2, MonitorArm::single(40, 5, MonitorOp::kEqual), kData + 4, 22);
    set(40, 6);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData + 4), 0u) << "== fired on a larger value";
    set(40, 5);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData + 4), 22u);
    // Fired once: it does not fire again until armed again, and then at once if met.
    b.memory.backing().write(kData + 4, std::vector<std::uint8_t>(4, 0).data(), 4);
    set(40, 0);
    set(40, 5);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData + 4), 0u);
    EXPECT_FALSE(b.sync.monitor_armed(2));
    arm(2, MonitorArm::single(40, 5, MonitorOp::kEqual), kData + 4, 33);
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.mem32(kData + 4), 33u);
  });
  EXPECT_EQ(b.sync.stats().monitor_fires.value(), 3u);
}

TEST(Qman, LinDmaProgramsTheEngineAndTheEngineBarrierWaits) {
  Bench b;
  b.engine0.busy_ps = 2000000;
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers,
             {barrier(Packet("LIN_DMA")
                          .set("tsize", 4096)
                          .set("lin", 1)
                          .set("wr_comp_en", 1)
                          .set("src_addr", 0x123456789A)
                          .set("dst_addr", 0xABCDEF0123)),
              barrier(Packet("NOP")), barrier(timestamp(kData), true)});
  });
  const auto& w = b.engine0.writes;
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[0], std::make_pair(std::uint64_t{PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET}, 4096u));
  EXPECT_EQ(w[1],
            std::make_pair(std::uint64_t{PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET}, 0x3456789Au));
  EXPECT_EQ(w[2], std::make_pair(std::uint64_t{PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET}, 0x12u));
  EXPECT_EQ(w[3],
            std::make_pair(std::uint64_t{PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET}, 0xCDEF0123u));
  EXPECT_EQ(w[4], std::make_pair(std::uint64_t{PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET}, 0xABu));
  EXPECT_EQ(w[5].first, std::uint64_t{PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET});
  EXPECT_EQ(w[5].second,
            PODSIM_GAUDI1_DMA_COMMIT_WR_COMP_EN_MASK | PODSIM_GAUDI1_DMA_COMMIT_LIN_MASK);
  // The NOP does not wait; the packet with the engine barrier waits for the engine.
  EXPECT_GE(b.mem64(kData), b.engine0.done_at);
  EXPECT_EQ(b.engine0.done_at, b.engine0.committed_at + 2000000);
}

TEST(Qman, CpDmaRunsANestedBufferOnTheLowerCp) {
  Bench b;
  const std::uint64_t inner = kBuffers + 0x1000;
  const std::vector<std::uint8_t> inner_bytes =
      b.codec.encode({timestamp(kData), fence(1, 1, 1), timestamp(kData + 8)});
  b.memory.backing().write(inner, inner_bytes.data(), inner_bytes.size());
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers,
             {barrier(Packet("CP_DMA").set("src_addr", inner).set("tsize", inner_bytes.size())),
              timestamp(kData + 16)});
    wait(5, sc_core::SC_US);
    EXPECT_NE(b.mem64(kData), 0u);
    EXPECT_EQ(b.mem64(kData + 8), 0u);
    // The nested buffer's fence is the lower CP's (index 4) counter 1.
    b.host.write32(PODSIM_GAUDI1_QMAN_CP_FENCE1_RDATA(kQm[0], Qman::kLowerCp), 1);
  });
  EXPECT_GT(b.mem64(kData + 8), b.mem64(kData));
  EXPECT_GT(b.mem64(kData + 16), b.mem64(kData + 8));
  EXPECT_GE(b.mem64(kData + 8), 5000000u);
  EXPECT_TRUE(b.errors.empty());
}

TEST(Qman, RepeatLoopsAsManyTimesAsTheDescriptorSays) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    // REPEAT start at byte 0, the body at byte 8, REPEAT end jumping back to it.
    b.submit(0, 0, kBuffers,
             {barrier(Packet("REPEAT").set("sore", 0)), sob_add(7, 1),
              barrier(Packet("REPEAT").set("sore", 1).set("jmp_ptr", 8)), sob_add(8, 1)},
             PqEntry::kRepeatValid | 3);
  });
  EXPECT_EQ(b.sync.sob(7), 4u);
  EXPECT_EQ(b.sync.sob(8), 1u);
}

TEST(Qman, LoadAndExeSetsPredicatesAndStartsTheEngine) {
  Bench b;
  std::vector<std::uint32_t> executed;
  b.qm[0]->set_execute([&](std::uint32_t etype) { executed.push_back(etype); });
  // Gaudi1's predicate map: one 32-bit word per predicate, its bit 0 (here P3 set; a set bit 4
  // of word 0 is not P4, as it would be in a consecutive map).
  std::uint32_t predicates[32] = {};
  predicates[0] = 1u << 4;
  predicates[3] = 1;
  b.memory.backing().write(kData + 0x100, reinterpret_cast<const std::uint8_t*>(predicates),
                           sizeof predicates);
  b.run([&] {
    b.init_qman(0);
    b.submit(
        0, 0, kBuffers,
        {barrier(msg_long(kData, 1).set("pred", 3)),  // predicates are all clear at first
         barrier(
             Packet("LOAD_AND_EXE").set("load", 1).set("dst", 0).set("src_addr", kData + 0x100)),
         barrier(msg_long(kData + 4, 2).set("pred", 3)),
         barrier(msg_long(kData + 8, 3).set("pred", 4)),
         barrier(Packet("LOAD_AND_EXE").set("exe", 1).set("etype", 1))});
  });
  EXPECT_EQ(b.mem32(kData), 0u);
  EXPECT_EQ(b.mem32(kData + 4), 2u);
  EXPECT_EQ(b.mem32(kData + 8), 0u);
  EXPECT_EQ(executed, std::vector<std::uint32_t>{1});
}

// A stream that takes the arbiter (ARB_POINT without release) keeps the issue slot through its
// fence wait; the other stream only runs once it releases it.
TEST(Qman, ArbPointHoldsTheIssueSlotUntilReleased) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers,
             {barrier(Packet("ARB_POINT")), fence(0, 1, 1), timestamp(kData),
              barrier(Packet("ARB_POINT").set("rls", 1))});
    wait(1, sc_core::SC_US);
    b.submit(0, 1, kBuffers + 0x1000, {timestamp(kData + 8)});
    wait(5, sc_core::SC_US);
    EXPECT_EQ(b.mem64(kData + 8), 0u) << "stream 1 ran while stream 0 held the arbiter";
    b.host.write32(PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[0], 0), 1);
  });
  EXPECT_GT(b.mem64(kData + 8), b.mem64(kData));
}

TEST(Qman, WithoutArbPointAWaitingStreamLetsOthersRun) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.submit(0, 0, kBuffers, {fence(0, 1, 1), timestamp(kData)});
    wait(1, sc_core::SC_US);
    b.submit(0, 1, kBuffers + 0x1000, {timestamp(kData + 8)});
    wait(5, sc_core::SC_US);
    EXPECT_NE(b.mem64(kData + 8), 0u);
    b.host.write32(PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[0], 0), 1);
  });
  EXPECT_GT(b.mem64(kData), b.mem64(kData + 8));
}

TEST(Qman, PqWrapsAround) {
  Bench b;
  const std::uint32_t log2 = 2;  // four entries
  b.run([&] {
    b.init_qman(0, log2);
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 2; ++i)
        b.queue(0, 0, kBuffers + 0x100 * (2 * round + i), {sob_add(9, 1)}, 0, log2);
      b.doorbell(0, 0);
      wait(2, sc_core::SC_US);
    }
  });
  EXPECT_EQ(b.sync.sob(9), 10u);
  EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET), 10u & pq_index_mask(log2));
  EXPECT_EQ(b.qm[0]->stream_stats(0).cbs.value(), 10u);
}

// Two QMANs hand a token back and forth 1000 times: each signals the other's sync object and
// waits, through a monitor, on its own fence counter.
TEST(Qman, TwoQmansPingPongThroughSemaphoresAndMonitors) {
  constexpr int kIterations = 1000;
  constexpr std::uint32_t kLog2 = 10;
  constexpr std::uint32_t kSobA = 200, kSobB = 208, kMonA = 100, kMonB = 101;
  const std::uint64_t log_a = kData, log_b = kData + 0x10000;
  const std::uint64_t fence_a = PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[0], 0);
  const std::uint64_t fence_b = PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[1], 0);
  Bench b;
  for (int i = 0; i < kIterations; ++i) {
    // A: arm on B's signal, signal B, wait, take B's signal back, log.
    b.queue(0, 0, kBuffers + 0x100 * i,
            monitor(kMonA, fence_a, 1, kSobB, 1) +
                std::vector<Packet>{sob_add(kSobA, 1), fence(0, 1, 1), sob_set(kSobB, 0),
                                    timestamp(log_a + 8 * i)},
            0, kLog2);
    // B: arm on A's signal, wait, take it back, log, signal A.
    b.queue(1, 0, kBuffers + 0x100000 + 0x100 * i,
            monitor(kMonB, fence_b, 1, kSobA, 1) +
                std::vector<Packet>{fence(0, 1, 1), sob_set(kSobA, 0), timestamp(log_b + 8 * i),
                                    sob_add(kSobB, 1)},
            0, kLog2);
  }
  b.run([&] {
    b.init_qman(0, kLog2);
    b.init_qman(1, kLog2);
    b.doorbell(1, 0);
    b.doorbell(0, 0);
  });
  for (int i = 0; i < kIterations; ++i) {
    const std::uint64_t a = b.mem64(log_a + 8 * i), bb = b.mem64(log_b + 8 * i);
    ASSERT_NE(a, 0u) << i;
    ASSERT_LT(bb, a) << "A passed iteration " << i << " before B signalled";
    if (i > 0) {
      ASSERT_GT(bb, b.mem64(log_a + 8 * (i - 1))) << i;
    }
  }
  EXPECT_EQ(b.sync.sob(kSobA), 0u);
  EXPECT_EQ(b.sync.sob(kSobB), 0u);
  EXPECT_EQ(b.sync.stats().monitor_fires.value(), 2u * kIterations);
  EXPECT_EQ(b.qm[0]->stream_stats(0).cbs.value(), static_cast<std::uint64_t>(kIterations));
  EXPECT_EQ(b.qm[1]->stream_stats(0).cbs.value(), static_cast<std::uint64_t>(kIterations));
  EXPECT_TRUE(b.errors.empty());
  // Each iteration: two descriptor and buffer fetches in turn (latency 50 ns each) and a dozen
  // packets, so a few hundred nanoseconds; never more than a few microseconds.
  const double per_iteration =
      static_cast<double>(b.mem64(log_a + 8 * (kIterations - 1)) - b.mem64(log_a)) /
      (kIterations - 1);
  EXPECT_GT(per_iteration, 2 * 50000.0 + 10 * kPacketPs);
  EXPECT_LT(per_iteration, 2000000.0);
  RecordProperty("ns_per_iteration", static_cast<int>(per_iteration / 1000));
}

TEST(Qman, ErrorsDropTheBufferAndTheChipKeepsRunning) {
  Bench b;
  std::vector<std::uint8_t> bad = b.codec.encode({barrier(Packet("NOP"))});
  const std::uint32_t undefined[2] = {0, 0x1Fu << PODSIM_GAUDI1_PKT_HDR_OPCODE_SHIFT};
  bad.insert(bad.end(), reinterpret_cast<const std::uint8_t*>(undefined),
             reinterpret_cast<const std::uint8_t*>(undefined) + 8);
  const std::vector<std::uint8_t> after = b.codec.encode({msg_long(kData, 1)});
  bad.insert(bad.end(), after.begin(), after.end());
  b.run([&] {
    b.init_qman(0);
    b.init_qman(1);
    b.queue_bytes(0, 0, kBuffers, bad);
    b.queue(0, 0, kBuffers + 0x100, {msg_long(kUnmapped, 7), msg_long(kData + 4, 2)});
    b.queue(0, 0, kBuffers + 0x200, {msg_long(kData + 8, 3)});
    b.doorbell(0, 0);
    b.submit(1, 0, kBuffers + 0x300, {msg_long(kData + 12, 4)});
  });
  ASSERT_EQ(b.errors.size(), 2u);
  EXPECT_EQ(b.errors[0].kind, Kind::kUndefinedOpcode);
  EXPECT_EQ(b.errors[0].block, "qm0");
  EXPECT_EQ(b.errors[0].address, kBuffers + 8);
  EXPECT_EQ(b.errors[1].kind, Kind::kAddressError);
  EXPECT_EQ(b.errors[1].address, kUnmapped);
  EXPECT_THAT(b.errors[1].detail, HasSubstr("stream 0"));
  EXPECT_EQ(b.mem32(kData), 0u);
  EXPECT_EQ(b.mem32(kData + 4), 0u);
  EXPECT_EQ(b.mem32(kData + 8), 3u);   // the next buffer ran
  EXPECT_EQ(b.mem32(kData + 12), 4u);  // the other QMAN was not affected
  EXPECT_EQ(b.qm[0]->stream_stats(0).errors.value(), 2u);
  EXPECT_EQ(b.qm[0]->stream_stats(0).cbs.value(), 1u);
  EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET), 3u);
  EXPECT_EQ(b.noc.stats().address_errors.value(), 1u);
}

TEST(Qman, TruncatedPacketAndFenceTimeoutAreErrorsToo) {
  Bench b(core::Duration{1000000});  // 1 us fence timeout
  std::vector<std::uint8_t> truncated = b.codec.encode({msg_long(kData, 1)});
  truncated.resize(12);
  b.run([&] {
    b.init_qman(0);
    b.queue_bytes(0, 0, kBuffers, truncated);
    b.queue(0, 0, kBuffers + 0x100, {fence(2, 1, 1), msg_long(kData + 4, 2)});
    b.queue(0, 0, kBuffers + 0x200, {msg_long(kData + 8, 3)});
    b.doorbell(0, 0);
  });
  ASSERT_EQ(b.errors.size(), 2u);
  EXPECT_EQ(b.errors[0].kind, Kind::kMalformed);
  EXPECT_EQ(b.errors[0].address, kBuffers);
  EXPECT_EQ(b.errors[1].kind, Kind::kFenceTimeout);
  EXPECT_EQ(b.errors[1].address, kBuffers + 0x100);
  EXPECT_GE(b.errors[1].time_ps, 1000000u);
  EXPECT_EQ(b.mem32(kData + 4), 0u);
  EXPECT_EQ(b.mem32(kData + 8), 3u);
}

// A stream keeps one fence timer, not one per wait (a regression: every FENCE that waited left a
// callback a timeout ahead in the event queue, over a million of them in a 128-chip collective):
// a wait released in time leaves the timer to the next wait, which still times out a whole
// timeout after it began.
TEST(Qman, OneFenceTimerServesEveryWaitOfAStream) {
  Bench b(core::Duration{50000000});  // 50 us fence timeout
  const std::uint32_t sob = 301, mon = 81;
  const std::uint64_t fence_reg = PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(kQm[0], 0);
  std::size_t pending_while_waiting = 0;
  b.run([&] {
    b.init_qman(0);
    std::vector<Packet> buffer;
    for (int i = 0; i < 100; ++i) {  // a hundred waits, each released by the host below
      buffer = buffer + monitor(mon, fence_reg, 1, sob, static_cast<std::uint32_t>(i + 1)) +
               std::vector<Packet>{fence(0, 1, 1)};
    }
    buffer = buffer + std::vector<Packet>{fence(1, 1, 1), msg_long(kData, 7)};  // never released
    b.submit(0, 0, kBuffers, buffer);
    for (int i = 0; i < 100; ++i) {
      wait(400, sc_core::SC_NS);
      b.host.write32(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(kSync, sob),
                     spec::encode_sob_write({1, true, false}));
    }
    wait(1, sc_core::SC_US);
    pending_while_waiting = core::event_queue().pending();
  });
  EXPECT_LE(pending_while_waiting, 2u);
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(b.errors[0].kind, Kind::kFenceTimeout);
  // The last wait began after the hundredth release, about 40 us in.
  EXPECT_GE(b.errors[0].time_ps, 40000000u + 50000000u);
  EXPECT_LT(b.errors[0].time_ps, 41000000u + 50000000u);
  EXPECT_EQ(b.mem32(kData), 0u);
}

// Register writes waiting for their time keep one callback armed per block, not one per write
// (a regression: a collective's start, clearing thousands of sync objects, left as many
// callbacks pending); each still takes effect at its own time.
TEST(SyncManager, WritesWaitingForTheirTimeShareOneCallback) {
  Bench b;
  std::size_t pending = 0;
  b.run([&] {
    for (std::uint32_t sob = 0; sob < 1000; ++sob) {  // all at once, due 100 ns from now
      std::uint32_t value = spec::encode_sob_write({sob % 7 + 1, false, false});
      tlm::tlm_generic_payload trans;
      trans.set_command(tlm::TLM_WRITE_COMMAND);
      trans.set_address(PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(kSync, sob));
      trans.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
      trans.set_data_length(4);
      trans.set_streaming_width(4);
      sc_core::sc_time delay(100, sc_core::SC_NS);
      b.host.socket->b_transport(trans, delay);
    }
    pending = core::event_queue().pending();
    EXPECT_EQ(b.sync.sob(999), 0u);  // not before its time
    wait(101, sc_core::SC_NS);
    for (std::uint32_t sob = 0; sob < 1000; ++sob) EXPECT_EQ(b.sync.sob(sob), sob % 7 + 1);
  });
  EXPECT_LE(pending, 1u);
}

// A reset's halt: GLBL_CFG1's flush drops the buffer waiting on a fence and the descriptors
// queued behind it (CI catches up with PI); while stopped the stream fetches nothing, and once
// the stop is lifted it runs what is queued next.
TEST(Qman, StopAndFlushDropWhatIsQueuedAndTheStreamRunsAgain) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.queue(0, 0, kBuffers, {fence(0, 1, 1), sob_add(9, 1)});
    b.queue(0, 0, kBuffers + 0x100, {sob_add(9, 1)});
    b.doorbell(0, 0);
    wait(10, sc_core::SC_US);
    EXPECT_EQ(b.sync.sob(9), 0u);  // stuck on the fence
    const std::uint64_t cfg1 = PODSIM_GAUDI1_QMAN_GLBL_CFG1(kQm[0]);
    b.host.write32(cfg1, podsim_gaudi1_make_qman_glbl_cfg1(0xF, 0x1F, 0x1F, 0xF, 0x1F, 0x1F));
    wait(1, sc_core::SC_US);
    EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET), 2u);
    b.queue(0, 0, kBuffers + 0x200, {sob_add(9, 5)});
    b.doorbell(0, 0);
    wait(10, sc_core::SC_US);
    EXPECT_EQ(b.sync.sob(9), 0u);  // stopped: nothing fetched
    b.host.write32(cfg1, 0);
    wait(10, sc_core::SC_US);
  });
  EXPECT_EQ(b.sync.sob(9), 5u);
  EXPECT_EQ(b.qm[0]->read_register(PODSIM_GAUDI1_QMAN_PQ_CI_OFFSET), 3u);
}

TEST(Qman, APqEntryOutsideTheMapIsAnAddressError) {
  Bench b;
  b.run([&] {
    b.init_qman(0);
    b.host.write32(PODSIM_GAUDI1_QMAN_PQ_BASE_HI(kQm[0], 2),
                   static_cast<std::uint32_t>(kUnmapped >> 32));
    b.host.write32(PODSIM_GAUDI1_QMAN_PQ_PI(kQm[0], 2), 1);
  });
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(b.errors[0].kind, Kind::kAddressError);
  EXPECT_EQ(b.errors[0].address >> 32, kUnmapped >> 32);
  EXPECT_EQ(b.qm[0]->stream_stats(2).errors.value(), 1u);
  EXPECT_TRUE(b.qm[0]->idle());
}

}  // namespace
}  // namespace podsim::chip
