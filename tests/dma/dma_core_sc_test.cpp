#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "core/event_queue.h"
#include "core/kernel.h"
#include "core/memory_target.h"
#include "core/numeric.h"
#include "hw/chip/noc.h"
#include "hw/dma/dma_core.h"
#include "hw/dma/dma_descriptor.h"
#include "hw/dma/dma_regs.h"
#include "tests/support/chrome_trace_check.h"
#include "tests/support/test_support.h"

namespace podsim::dma {
namespace {

using core::TimePs;

// Where the bench's memories sit, as on Gaudi1: HBM from 0, SRAM, host memory through PCIe.
constexpr std::uint64_t kHbm = PODSIM_GAUDI1_REGION_DRAM_BASE;
constexpr std::uint64_t kSram = PODSIM_GAUDI1_REGION_SRAM_BASE;
constexpr std::uint64_t kHost = 0x80'0000'0000;
constexpr std::uint64_t kRegs = PODSIM_GAUDI1_DMA0_CORE_BASE;
constexpr std::uint64_t kMemorySize = 64 << 20;
constexpr std::uint64_t kUnmapped = 0x40'0000'0000;

// Rates chosen so that every byte costs a whole number of picoseconds: HBM 100 GB/s (10 ps/B),
// SRAM 200 GB/s (5 ps/B), host 25 GB/s (40 ps/B), the engine 50 GB/s (20 ps/B).
constexpr double kHbmGbps = 800, kSramGbps = 1600, kHostGbps = 200, kEngineGbps = 400;
constexpr TimePs kHbmLatency = 500'000, kSramLatency = 500'000, kHostLatency = 2'000'000;

core::MemoryTargetConfig memory(double gbps, TimePs latency, bool functional) {
  core::MemoryTargetConfig config;
  config.size = core::ByteSize{kMemorySize};
  config.bandwidth = core::Bandwidth{gbps * 1e9};
  config.latency = core::Duration{static_cast<std::int64_t>(latency)};
  config.functional = functional;
  return config;
}

DmaConfig engine(int outstanding = 64) {
  DmaConfig config;
  config.bandwidth = core::Bandwidth{kEngineGbps * 1e9};
  config.burst = core::ByteSize{2048};
  config.outstanding = outstanding;
  return config;
}

chip::AddressMap address_map() {
  chip::AddressMap map;
  map.add("hbm", kHbm, kMemorySize, 0);
  map.add("sram", kSram, kMemorySize, 1);
  map.add("host", kHost, kMemorySize, 2);
  map.add("dma0", kRegs, regs::kBlockSize, 3);
  return map;
}

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) {
    bytes[i] = static_cast<std::uint8_t>((i * 131 + seed * 17 + (i >> 9)) & 0xFF);
  }
  return bytes;
}

// A DMA engine on a NoC with three memories, and a thread that runs the test's body: it plays
// the host or queue manager, submitting jobs and writing the engine's registers.
class Bench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Bench);
  using Body = std::function<void(Bench&)>;

  tlm_utils::simple_initiator_socket<Bench> cpu_socket;
  core::MemoryTarget hbm, sram, host;
  chip::Noc noc;
  DmaCore dma;
  std::vector<core::ErrorEvent> errors;

  Bench(sc_core::sc_module_name name, Body body, bool functional = true,
        const DmaConfig& config = engine())
      : sc_module(name),
        cpu_socket("cpu_socket"),
        hbm("hbm", memory(kHbmGbps, kHbmLatency, functional)),
        sram("sram", memory(kSramGbps, kSramLatency, functional)),
        host("host", memory(kHostGbps, kHostLatency, functional)),
        noc("noc", chip::NocConfig{core::Duration{0}}, address_map()),  // time the engine alone
        dma("dma", config, functional),
        body_(std::move(body)) {
    noc.initiator_socket.bind(hbm.target_socket);
    noc.initiator_socket.bind(sram.target_socket);
    noc.initiator_socket.bind(host.target_socket);
    noc.initiator_socket.bind(dma.register_socket);
    dma.memory_socket.bind(noc.target_socket);
    cpu_socket.bind(noc.target_socket);
    dma.set_error_sink([this](const core::ErrorEvent& e) { errors.push_back(e); });
    SC_THREAD(main);
  }

  // Runs one job to its end; `end` gets the time it ended.
  bool run(const DmaJob& job, TimePs* end = nullptr) {
    bool ok = false;
    sc_core::sc_event finished;
    dma.submit(job, [&](bool result) {
      ok = result;
      core::notify_now(finished);
    });
    wait(finished);
    if (end) *end = core::now_ps();
    return ok;
  }

  void wait_idle() {
    if (!dma.busy()) return;
    sc_core::sc_event idle;
    dma.when_idle([&] { core::notify_now(idle); });
    wait(idle);
  }

  void load(std::uint64_t address, std::vector<std::uint8_t> bytes) {
    ASSERT_EQ(noc.debug(tlm::TLM_WRITE_COMMAND, address, bytes.data(),
                        static_cast<unsigned>(bytes.size())),
              bytes.size());
  }
  std::vector<std::uint8_t> dump(std::uint64_t address, std::size_t n) {
    std::vector<std::uint8_t> bytes(n);
    EXPECT_EQ(noc.debug(tlm::TLM_READ_COMMAND, address, bytes.data(), static_cast<unsigned>(n)), n);
    return bytes;
  }

  tlm::tlm_response_status write_reg(std::uint64_t offset, std::uint32_t value) {
    return reg_access(tlm::TLM_WRITE_COMMAND, offset, value);
  }
  std::uint32_t read_reg(std::uint64_t offset) {
    std::uint32_t value = 0;
    EXPECT_EQ(reg_access(tlm::TLM_READ_COMMAND, offset, value), tlm::TLM_OK_RESPONSE);
    return value;
  }
  void write_reg64(std::uint64_t lo, std::uint64_t hi, std::uint64_t value) {
    write_reg(lo, static_cast<std::uint32_t>(value));
    write_reg(hi, static_cast<std::uint32_t>(value >> 32));
  }

 private:
  tlm::tlm_response_status reg_access(tlm::tlm_command command, std::uint64_t offset,
                                      std::uint32_t& value) {
    tlm::tlm_generic_payload trans;
    trans.set_command(command);
    trans.set_address(kRegs + offset);
    trans.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    trans.set_data_length(4);
    trans.set_streaming_width(4);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    cpu_socket->b_transport(trans, delay);
    return trans.get_response_status();
  }

  void main() { body_(*this); }
  Body body_;
};

void simulate() { core::run_to_completion(); }

double gbytes_per_second(std::uint64_t bytes, TimePs ps) {
  return static_cast<double>(bytes) / (static_cast<double>(ps) * 1e-12) / 1e9;
}

TEST(DmaCore, LinearCopiesAreByteExactAcrossMemories) {
  const auto data = pattern(100'003, 1);
  bool ran = false;
  Bench bench("bench", [&](Bench& b) {
    b.load(kHost + 5, data);
    EXPECT_TRUE(b.run(DmaJob::copy(kHost + 5, kHbm + 0x1001, data.size())));
    EXPECT_TRUE(b.run(DmaJob::copy(kHbm + 0x1001, kSram + 3, data.size())));
    EXPECT_EQ(b.dump(kSram + 3, data.size()), data);
    ran = true;
  });
  simulate();
  EXPECT_TRUE(ran);
  EXPECT_EQ(bench.dma.stats().jobs.value(), 2u);
  EXPECT_EQ(bench.dma.stats().bytes_read.value(), 2 * data.size());
  EXPECT_EQ(bench.dma.stats().bytes_written.value(), 2 * data.size());
  EXPECT_TRUE(bench.errors.empty());
}

TEST(DmaCore, MemsetRepeatsTheSixtyFourBitValueOverAnUnalignedLength) {
  constexpr std::uint64_t kValue = 0x0123'4567'89AB'CDEF;
  constexpr std::size_t kBytes = 5001;
  Bench bench("bench", [&](Bench& b) {
    b.load(kHbm + 0x100, std::vector<std::uint8_t>(kBytes + 16, 0xEE));
    EXPECT_TRUE(b.run(DmaJob::memset(kHbm + 0x103, kValue, kBytes)));
    const auto got = b.dump(kHbm + 0x100, kBytes + 16);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool inside = i >= 3 && i < 3 + kBytes;
      const auto expected =
          inside ? static_cast<std::uint8_t>(kValue >> (8 * ((i - 3) % 8))) : std::uint8_t{0xEE};
      ASSERT_EQ(got[i], expected) << "byte " << i;
    }
  });
  simulate();
  EXPECT_EQ(bench.dma.stats().bytes_read.value(), 0u);
  EXPECT_EQ(bench.dma.stats().bytes_written.value(), kBytes);
}

// The destination as a CPU computes it: every byte of the shape from source to destination.
std::vector<std::uint8_t> reference_copy(const DmaShape& s, const std::vector<std::uint8_t>& src,
                                         std::vector<std::uint8_t> dst) {
  std::uint64_t size[kMaxDims] = {1, 1, 1, 1, 1};
  for (int d = 0; d < s.dims; ++d) size[d] = s.size[d];
  for (std::uint64_t i4 = 0; i4 < size[4]; ++i4)
    for (std::uint64_t i3 = 0; i3 < size[3]; ++i3)
      for (std::uint64_t i2 = 0; i2 < size[2]; ++i2)
        for (std::uint64_t i1 = 0; i1 < size[1]; ++i1) {
          std::uint64_t so = 0, d_o = 0;
          const std::uint64_t index[kMaxDims] = {0, i1, i2, i3, i4};
          for (int d = 1; d < s.dims; ++d) {
            so += index[d] * s.src_stride[d];
            d_o += index[d] * s.dst_stride[d];
          }
          std::memcpy(dst.data() + d_o, src.data() + so, size[0]);
        }
  return dst;
}

void expect_strided_copy(const DmaShape& shape, std::uint64_t src, std::uint64_t dst) {
  const std::size_t src_bytes = *extent(shape, shape.src_stride);
  const std::size_t dst_bytes = *extent(shape, shape.dst_stride);
  const auto input = pattern(src_bytes, 7);
  const std::vector<std::uint8_t> before(dst_bytes, 0x5A);
  Bench bench("bench", [&](Bench& b) {
    b.load(src, input);
    b.load(dst, before);
    DmaJob job = DmaJob::copy(src, dst, 0);
    job.shape = shape;
    EXPECT_TRUE(b.run(job));
    EXPECT_EQ(b.dump(dst, dst_bytes), reference_copy(shape, input, before));
  });
  simulate();
  EXPECT_EQ(bench.dma.stats().bytes_written.value(), shape.total_bytes());
}

TEST(DmaCore, TwoDimensionalCopyGathersAndScattersRows) {
  DmaShape shape;
  shape.dims = 2;
  shape.size = {48, 100};
  shape.src_stride[1] = 64;  // rows with gaps in HBM
  shape.dst_stride[1] = 80;  // scattered with wider gaps in SRAM; the gaps keep their bytes
  expect_strided_copy(shape, kHbm + 0x40, kSram + 0x1000);
}

TEST(DmaCore, FiveDimensionalCopyMatchesTheCpuReference) {
  DmaShape shape;
  shape.dims = 5;
  shape.size = {40, 5, 4, 3, 3};
  shape.src_stride = {0, 48, 260, 0, 1200};  // dimension 3 repeats the same rows
  shape.dst_stride = {0, 40, 200, 800, 2400};
  expect_strided_copy(shape, kHost + 0x10, kHbm + 0x2000);
}

// Inputs that exercise rounding in the 16-bit formats and signs in all.
std::vector<std::uint8_t> operand(core::DataType type, std::size_t n, int seed) {
  std::vector<std::uint8_t> bytes(n * core::size_of(type));
  for (std::size_t i = 0; i < n; ++i) {
    const double whole = static_cast<double>(static_cast<int>((i * 37 + seed * 11) % 201) - 100);
    const double value = type == core::DataType::kInt32 ? whole * 1000 : whole + 0.3 * seed;
    core::set_element(type, bytes.data(), i, value);
  }
  return bytes;
}

TEST(DmaCore, ReductionsMatchReduceIntoForEveryTypeAndOperation) {
  constexpr std::size_t kElements = 3001;
  int checked = 0;
  Bench bench("bench", [&](Bench& b) {
    for (auto type : {core::DataType::kFp32, core::DataType::kBf16, core::DataType::kFp16,
                      core::DataType::kInt32}) {
      for (auto op : {core::ReduceOp::kSum, core::ReduceOp::kMin, core::ReduceOp::kMax}) {
        const auto a = operand(type, kElements, 1), c = operand(type, kElements, 2);
        auto expected = a;
        core::reduce_into(type, op, expected.data(), c.data(), kElements);
        b.load(kHbm + 0x10, a);
        b.load(kSram + 0x20, c);
        EXPECT_TRUE(
            b.run(DmaJob::reduce(kHbm + 0x10, kSram + 0x20, kHost + 0x30, a.size(), type, op)));
        EXPECT_EQ(b.dump(kHost + 0x30, a.size()), expected)
            << core::to_string(type) << " " << core::to_string(op);
        ++checked;
      }
    }
  });
  simulate();
  EXPECT_EQ(checked, 12);
}

TEST(DmaCore, RegisterProgrammedTransferWritesItsCompletion) {
  const auto data = pattern(10'000, 3);
  constexpr std::uint64_t kCompletion = kHbm + 0x3F'0000;
  Bench bench("bench", [&](Bench& b) {
    b.load(kHost + 0x100, data);
    b.write_reg64(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET,
                  PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET, kHost + 0x100);
    b.write_reg64(PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET,
                  PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET, kSram + 0x200);
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, static_cast<std::uint32_t>(data.size()));
    b.write_reg64(PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_LO_OFFSET,
                  PODSIM_GAUDI1_DMA_CORE_WR_COMP_ADDR_HI_OFFSET, kCompletion);
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_WR_COMP_WDATA_OFFSET, 0xC0FF'EE01);
    EXPECT_EQ(b.write_reg(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET,
                          podsim_gaudi1_make_dma_commit(1, 0, 0, 1, 0, 0, 0, 0)),
              tlm::TLM_OK_RESPONSE);
    EXPECT_TRUE(b.dma.busy());
    EXPECT_TRUE(b.read_reg(PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET) & PODSIM_GAUDI1_DMA_STS0_BUSY_MASK);
    b.wait_idle();
    EXPECT_EQ(b.read_reg(PODSIM_GAUDI1_DMA_CORE_STS0_OFFSET), 0u);
    EXPECT_EQ(b.dump(kSram + 0x200, data.size()), data);
    const auto word = b.dump(kCompletion, 4);
    EXPECT_EQ(word, (std::vector<std::uint8_t>{0x01, 0xEE, 0xFF, 0xC0}));
    // Outside the register block's registers: an address error, as the NoC gives for a hole,
    // and the engine shell's error event.
    EXPECT_EQ(b.write_reg(0x1000, 1), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  simulate();
  EXPECT_EQ(bench.dma.stats().jobs.value(), 1u);
  ASSERT_EQ(bench.errors.size(), 1u);
  EXPECT_EQ(bench.errors[0].kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_EQ(bench.errors[0].address, 0x1000u);
  EXPECT_NE(bench.errors[0].detail.find("not a register"), std::string::npos)
      << bench.errors[0].detail;
}

TEST(DmaCore, ExtensionRegistersRunAStridedReduction) {
  constexpr std::size_t kRow = 64, kRows = 20;  // 16 fp32 elements per row
  const auto a = operand(core::DataType::kFp32, kRow / 4 * kRows * 2, 1);
  const auto c = operand(core::DataType::kFp32, kRow / 4 * kRows * 2, 2);
  Bench bench("bench", [&](Bench& b) {
    b.load(kHbm, a);
    b.load(kSram, c);
    b.write_reg64(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET,
                  PODSIM_GAUDI1_DMA_CORE_SRC_BASE_HI_OFFSET, kHbm);
    b.write_reg64(regs::kExtSrc2BaseLo, regs::kExtSrc2BaseHi, kSram);
    b.write_reg64(PODSIM_GAUDI1_DMA_CORE_DST_BASE_LO_OFFSET,
                  PODSIM_GAUDI1_DMA_CORE_DST_BASE_HI_OFFSET, kHost);
    b.write_reg(regs::ext_size(0), kRow);
    b.write_reg(regs::ext_size(1), kRows);
    b.write_reg64(regs::ext_src_stride(1), regs::ext_src_stride(1) + 4,
                  2 * kRow);                                                    // every other row
    b.write_reg64(regs::ext_dst_stride(1), regs::ext_dst_stride(1) + 4, kRow);  // packed
    b.write_reg(regs::kExtCtrl, regs::ext_ctrl(regs::kOpReduce, 0, 0, 2));
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET,
                podsim_gaudi1_make_dma_commit(0, 0, 0, 0, 0, 0, 0, 0));
    b.wait_idle();
    const auto got = b.dump(kHost, kRow * kRows);
    for (std::size_t row = 0; row < kRows; ++row) {
      std::vector<std::uint8_t> expected(a.begin() + 2 * row * kRow,
                                         a.begin() + (2 * row + 1) * kRow);
      core::reduce_into(core::DataType::kFp32, core::ReduceOp::kSum, expected.data(),
                        c.data() + 2 * row * kRow, kRow / 4);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got.begin() + row * kRow))
          << "row " << row;
    }
  });
  simulate();
  EXPECT_TRUE(bench.errors.empty());
}

// A descriptor posted with one doorbell write runs its job and its completion, and leaves the
// programmed registers alone; one that is not a job reports an error and starts nothing.
TEST(DmaCore, PostedDescriptorRunsItsJobWithoutTouchingTheRegisters) {
  const auto data = pattern(5'000, 9);
  constexpr std::uint64_t kDescriptors = kSram + 0x10'0000;
  constexpr std::uint64_t kCompletion = kHbm + 0x3F'0000;
  Bench bench("bench", [&](Bench& b) {
    b.load(kHbm + 0x40, data);
    DmaJob job = DmaJob::copy(kHbm + 0x40, kHost + 0x80, data.size());
    job.completion = {true, kCompletion, 0xD0E5};
    std::vector<std::uint8_t> descriptor(kDescriptorBytes);
    encode_descriptor(register_writes(job), descriptor.data());
    b.load(kDescriptors + 3 * kDescriptorBytes, descriptor);
    std::vector<std::uint8_t> junk(kDescriptorBytes, 0);
    junk[0] = 1;  // one write, to SRC_BASE_LO: no COMMIT
    junk[8] = PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET;
    b.load(kDescriptors + 4 * kDescriptorBytes, junk);
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET, 0x1234);  // a QMAN's half-done work
    b.write_reg64(regs::kExtDescBaseLo, regs::kExtDescBaseHi, kDescriptors);
    EXPECT_EQ(b.write_reg(regs::kExtDescPost, 3), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.write_reg(regs::kExtDescPost, 4), tlm::TLM_OK_RESPONSE);
    b.wait_idle();
    EXPECT_EQ(b.dump(kHost + 0x80, data.size()), data);
    EXPECT_EQ(b.dump(kCompletion, 2), (std::vector<std::uint8_t>{0xE5, 0xD0}));
    EXPECT_EQ(b.read_reg(PODSIM_GAUDI1_DMA_CORE_SRC_BASE_LO_OFFSET), 0x1234u);
  });
  simulate();
  EXPECT_EQ(bench.dma.stats().jobs.value(), 1u);
  ASSERT_EQ(bench.errors.size(), 1u);
  EXPECT_EQ(bench.errors[0].kind, core::ErrorEvent::Kind::kMalformed);
  EXPECT_THAT(bench.errors[0].detail, ::testing::HasSubstr("does not end in a COMMIT"));
}

TEST(DmaCore, MalformedCommitIsReportedAndStartsNothing) {
  Bench bench("bench", [&](Bench& b) {
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_DST_TSIZE_0_OFFSET, 64);
    b.write_reg(PODSIM_GAUDI1_DMA_CORE_COMMIT_OFFSET,
                podsim_gaudi1_make_dma_commit(0, 1, 0, 1, 0, 0, 0, 0));  // transpose
    EXPECT_FALSE(b.dma.busy());
  });
  simulate();
  ASSERT_EQ(bench.errors.size(), 1u);
  EXPECT_EQ(bench.errors[0].kind, core::ErrorEvent::Kind::kMalformed);
  EXPECT_THAT(bench.errors[0].detail, ::testing::HasSubstr("transpose"));
  EXPECT_EQ(bench.dma.stats().jobs.value(), 0u);
}

TEST(DmaCore, WhenIdleFiresAtTheEndOfTheLastJob) {
  TimePs second_done = 0, idle_at = 0;
  Bench bench("bench", [&](Bench& b) {
    bool ran_at_once = false;
    b.dma.when_idle([&] { ran_at_once = true; });
    EXPECT_TRUE(ran_at_once);
    b.dma.submit(DmaJob::copy(kHbm, kSram, 64 << 10), nullptr);
    b.dma.submit(DmaJob::memset(kHost, 7, 32 << 10), [&](bool ok) {
      EXPECT_TRUE(ok);
      EXPECT_TRUE(b.dma.busy());  // still, while its done callback runs
      second_done = core::now_ps();
    });
    EXPECT_TRUE(b.dma.busy());
    EXPECT_EQ(b.dma.queued(), 1u);
    sc_core::sc_event idle;
    b.dma.when_idle([&] {
      EXPECT_FALSE(b.dma.busy());
      idle_at = core::now_ps();
      core::notify_now(idle);
    });
    sc_core::wait(idle);
    EXPECT_EQ(sc_core::sc_time_stamp().value(), idle_at);
  });
  simulate();
  EXPECT_GT(second_done, 0u);
  EXPECT_EQ(idle_at, second_done);
  EXPECT_EQ(bench.dma.stats().jobs.value(), 2u);
}

TEST(DmaCore, RejectedAccessFailsTheJobReportsItAndTheNextJobRuns) {
  const auto data = pattern(4096, 5);
  std::vector<bool> results;
  Bench bench("bench", [&](Bench& b) {
    b.load(kHbm, data);
    const auto record = [&](bool ok) { results.push_back(ok); };
    b.dma.submit(DmaJob::copy(kUnmapped, kSram, 4096), record);
    // Runs off the end of HBM after its first bursts.
    b.dma.submit(DmaJob::copy(kHbm + kMemorySize - 3000, kSram, 8192), record);
    b.dma.submit(DmaJob::copy(kHbm, kSram + 0x10000, data.size()), record);
    b.wait_idle();
    EXPECT_EQ(b.dump(kSram + 0x10000, data.size()), data);
  });
  simulate();
  EXPECT_EQ(results, (std::vector<bool>{false, false, true}));
  ASSERT_EQ(bench.errors.size(), 2u);
  EXPECT_EQ(bench.errors[0].kind, core::ErrorEvent::Kind::kAddressError);
  EXPECT_EQ(bench.errors[0].address, kUnmapped);
  EXPECT_EQ(bench.errors[0].block, "bench.dma");
  EXPECT_THAT(bench.errors[0].detail, ::testing::HasSubstr("read of 2048 bytes"));
  EXPECT_EQ(bench.errors[1].address, kHbm + kMemorySize - 3000 + 2048);
  EXPECT_EQ(bench.dma.stats().jobs.value(), 3u);
  EXPECT_EQ(bench.dma.stats().failed.value(), 2u);
  EXPECT_EQ(bench.noc.stats().address_errors.value(), 2u);
}

// One engine alone: the engine's bandwidth (50 GB/s) is below SRAM's and HBM's, and 64 bursts of
// 2 KiB in flight cover the 1 us a burst spends in memory latency.
TEST(DmaCore, LargeCopyStreamsAtTheEngineBandwidthDespiteLatency) {
  constexpr std::uint64_t kBytes = 8 << 20;
  TimePs took = 0;
  Bench bench("bench", [&](Bench& b) {
    TimePs end = 0;
    const TimePs start = core::now_ps();
    EXPECT_TRUE(b.run(DmaJob::copy(kSram, kHbm, kBytes), &end));
    took = end - start;
  });
  simulate();
  const double rate = gbytes_per_second(kBytes, took);
  RecordProperty("gbytes_per_second", std::to_string(rate));
  EXPECT_NEAR(rate, kEngineGbps / 8, 0.01 * kEngineGbps / 8) << took << " ps";
}

// The host path (25 GB/s, 2 us latency) is the slower one: the engine streams at its rate.
TEST(DmaCore, LargeCopyStreamsAtThePathBandwidthWhenThePathIsSlower) {
  constexpr std::uint64_t kBytes = 8 << 20;
  TimePs took = 0;
  Bench bench("bench", [&](Bench& b) {
    TimePs end = 0;
    EXPECT_TRUE(b.run(DmaJob::copy(kHost, kHbm, kBytes), &end));
    took = end;
  });
  simulate();
  const double rate = gbytes_per_second(kBytes, took);
  RecordProperty("gbytes_per_second", std::to_string(rate));
  EXPECT_NEAR(rate, kHostGbps / 8, 0.02 * kHostGbps / 8) << took << " ps";
}

// With one burst in flight every burst waits out both latencies: the window is what overlaps them.
TEST(DmaCore, OneBurstInFlightPaysTheLatencyOfEveryBurst) {
  constexpr std::uint64_t kBytes = 256 << 10, kBursts = kBytes / 2048;
  TimePs took = 0;
  Bench bench(
      "bench", [&](Bench& b) { EXPECT_TRUE(b.run(DmaJob::copy(kSram, kHbm, kBytes), &took)); },
      true, engine(1));
  simulate();
  const TimePs per_burst = 2048 * 5 + kSramLatency + 2048 * 10 + kHbmLatency;
  EXPECT_EQ(took, kBursts * per_burst);
}

// The same jobs in a functional system and in a timing-only one, side by side.
TEST(DmaCore, TimingOnlyTakesTheSameTimeAsFunctional) {
  const auto jobs = [] {
    std::vector<DmaJob> list{DmaJob::copy(kHost, kHbm, 1 << 20),
                             DmaJob::memset(kSram + 1, 0xABCD, 100'001),
                             DmaJob::reduce(kHbm, kSram, kHost + 0x1000, 96 << 10,
                                            core::DataType::kBf16, core::ReduceOp::kMax)};
    DmaJob strided = DmaJob::copy(kHbm + 8, kSram + 0x10'0000, 0);
    strided.shape.dims = 3;
    strided.shape.size = {100, 30, 7};
    strided.shape.src_stride = {0, 128, 4000};
    strided.shape.dst_stride = {0, 100, 3000};
    list.push_back(strided);
    return list;
  }();
  std::vector<TimePs> functional_ends, timing_ends;
  const auto body = [&](std::vector<TimePs>& ends) {
    return [&](Bench& b) {
      for (const auto& job : jobs) {
        TimePs end = 0;
        EXPECT_TRUE(b.run(job, &end));
        ends.push_back(end);
      }
    };
  };
  Bench functional("functional", body(functional_ends), true);
  Bench timing("timing", body(timing_ends), false);
  simulate();
  ASSERT_EQ(functional_ends.size(), jobs.size());
  EXPECT_EQ(timing_ends, functional_ends);
  EXPECT_EQ(timing.dma.stats().bytes_read.value(), functional.dma.stats().bytes_read.value());
}

TEST(DmaCore, EachJobIsOneSpanInTheTrace) {
  test::TempDir dir;
  const auto file = dir / "dma.json";
  core::trace_writer().open(file.string());
  Bench bench("bench", [&](Bench& b) {
    EXPECT_TRUE(b.run(DmaJob::copy(kHbm, kSram, 4096)));
    EXPECT_FALSE(b.run(DmaJob::copy(kUnmapped, kSram, 4096)));
    EXPECT_TRUE(b.run(DmaJob::memset(kHbm, 1, 100)));
  });
  simulate();
  core::trace_writer().close();
  const auto trace = nlohmann::json::parse(test::read_text(file));
  EXPECT_THAT(test::check_chrome_trace(trace), ::testing::IsEmpty());
  std::vector<std::string> spans;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X")
      spans.push_back(event["name"].get<std::string>() +
                      (event["args"]["ok"].get<bool>() ? "" : " failed"));
  }
  EXPECT_EQ(spans, (std::vector<std::string>{"copy", "copy failed", "memset"}));
}

}  // namespace
}  // namespace podsim::dma
