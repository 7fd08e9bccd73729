#include "compute/launcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/mme/mme_registers.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/tpc_registers.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::compute {
namespace {

constexpr std::uint64_t kPqEntryBytes = PODSIM_GAUDI1_PQ_ENTRY_SIZE;
constexpr std::uint64_t kCbAlign = 64;

void write64(chip::Chip& c, std::uint64_t lo_register, std::uint64_t hi_register,
             std::uint64_t value) {
  c.write_register(lo_register, static_cast<std::uint32_t>(value));
  c.write_register(hi_register, static_cast<std::uint32_t>(value >> 32));
}

std::uint64_t manager() { return chip::Chip::sync_manager_of(Launcher::kFirstSob); }

class CommandBuffer {
 public:
  void registers(const std::vector<core::RegisterRun>& runs) {
    codec_.encode_registers(runs, bytes_);
  }
  void wreg(std::uint32_t offset, std::uint32_t value) {
    chip::spec::Packet p("WREG_32");
    p.set("reg_offset", offset).set("value", value);
    codec_.encode(p, bytes_);
  }
  // Waits until sync object `sob` reaches `count`: the QMAN arms its monitor on it (whose payload
  // adds one to its fence counter 0) and fences on that counter.
  void wait(std::uint32_t monitor, std::uint32_t sob, std::uint32_t count) {
    chip::spec::Packet msg("MSG_LONG"), fence("FENCE");
    msg.set("addr", PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(manager(), monitor));
    msg.set("value",
            chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                chip::Chip::sob_index(sob), count, chip::spec::MonitorOp::kGreaterOrEqual)));
    fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
    codec_.encode(msg, bytes_);
    codec_.encode(fence, bytes_);
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  chip::spec::PacketCodec codec_;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace

Launcher::Launcher(system::SystemModel& model)
    : model_(model), chips_(static_cast<std::size_t>(model.chips())) {}

std::uint64_t Launcher::stage_sob(std::uint32_t stage) {
  return chip::Chip::sob_address(kFirstSob + stage);
}
std::uint32_t Launcher::stage_message() { return chip::spec::encode_sob_write({1, true, false}); }

std::uint64_t Launcher::pq(int chip, int queue) const {
  chip::Chip& c = model_.chip(chip);
  return c.config().address_map.sram.value +
         static_cast<std::uint64_t>(queue) * (1u << kPqLog2) * kPqEntryBytes;
}

std::uint64_t Launcher::qman_base(int queue) const {
  return queue < kMaxTpcs ? chip::Chip::tpc_qman_base(queue)
                          : chip::Chip::mme_qman_base(queue - kMaxTpcs);
}

bool Launcher::present(chip::Chip& c, int queue) const {
  return queue < kMaxTpcs ? queue < c.tpc_cores() : queue - kMaxTpcs < c.mme_engines();
}

Launcher::ChipState& Launcher::state(int chip) {
  ChipState& s = chips_.at(static_cast<std::size_t>(chip));
  if (!s.ready) set_up(chip, s);
  return s;
}

// What a driver does once: a PQ ring for stream 0 of every engine QMAN, the monitors' payloads
// (a QMAN's fence counter; the MSI doorbell for the done monitor), the QMANs enabled.
void Launcher::set_up(int chip, ChipState& s) {
  chip::Chip& c = model_.chip(chip);
  static_assert(chip::MmeConfig::kMaxEngines <= kMaxQueues - kMaxTpcs);
  if (c.sram() == nullptr)
    throw std::invalid_argument(fmt::format(
        "{}: command buffers and kernels live in SRAM, and chip.sram.size is 0", c.name()));
  const std::uint64_t sram = c.config().sram.size.bytes;
  const std::uint64_t rings =
      static_cast<std::uint64_t>(kMaxQueues) * (1u << kPqLog2) * kPqEntryBytes;
  if (rings >= sram / 2)
    throw std::invalid_argument(
        fmt::format("{}: chip.sram.size is too small for the command rings", c.name()));
  s.arena = core::RangeAllocator(c.config().address_map.sram.value + rings, sram / 2 - rings);
  s.pi.assign(kMaxQueues, 0);
  const auto payload = [&](std::uint32_t monitor, std::uint64_t address) {
    write64(c, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(manager(), monitor),
            PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(manager(), monitor), address);
    c.write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(manager(), monitor), 1);
  };
  for (int q = 0; q < kMaxQueues; ++q) {
    if (!present(c, q)) continue;
    const std::uint64_t qman = qman_base(q);
    write64(c, PODSIM_GAUDI1_QMAN_PQ_BASE_LO(qman, kStream),
            PODSIM_GAUDI1_QMAN_PQ_BASE_HI(qman, kStream), pq(chip, q));
    c.write_register(PODSIM_GAUDI1_QMAN_PQ_SIZE(qman, kStream), kPqLog2);
    c.write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG0(qman),
                     podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
    payload(kFirstMonitor + static_cast<std::uint32_t>(q),
            PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(qman, kStream));
  }
  payload(kDoneMonitor, PODSIM_GAUDI1_PCIE_MSI_BASE + 4ull * kVector);
  c.msi().listen([this, chip](int vector) { on_interrupt(chip, vector); });
  s.ready = true;
}

// A kernel binary goes to SRAM once per chip, where every core fetches it.
std::uint64_t Launcher::binary_address(int chip, ChipState& s, const std::string& key) {
  auto it = s.binaries.find(key);
  if (it != s.binaries.end()) return it->second;
  const std::vector<std::uint8_t> binary = tpc::kernel_binary(key);
  const auto at = s.arena.allocate(binary.size(), 256);
  if (!at)
    throw std::invalid_argument(fmt::format("kernel binary {} does not fit the chip's SRAM", key));
  model_.chip(chip).debug_write(*at, binary.data(), binary.size());
  s.binaries.emplace(key, *at);
  return *at;
}

std::vector<Launcher::Stage> Launcher::kernel_stages(int chip, ChipState& s,
                                                     const tpc::KernelPlan& plan,
                                                     const std::vector<std::uint64_t>& addresses,
                                                     int cores) {
  chip::Chip& c = model_.chip(chip);
  if (c.tpc_cores() == 0)
    throw std::invalid_argument(
        fmt::format("{}: chip.tpc.cores is 0: there is no TPC to run a kernel on", c.name()));
  if (cores < 0 || cores > c.tpc_cores()) {
    throw std::invalid_argument(
        fmt::format("{} TPCs asked of {}, which has {}", cores, c.name(), c.tpc_cores()));
  }
  if (addresses.size() != plan.buffers.size()) {
    throw std::invalid_argument(fmt::format("{} buffer addresses for a plan of {} buffers",
                                            addresses.size(), plan.buffers.size()));
  }
  const int n = cores == 0 ? c.tpc_cores() : cores;
  std::vector<Stage> stages;
  for (std::uint32_t k = 0; k < plan.launches.size(); ++k) {
    const tpc::LaunchSpec& launch = plan.launches[k];
    const std::uint64_t binary = binary_address(chip, s, launch.binary);
    const std::vector<tpc::Slice> slices = tpc::partition(launch.index_space, n);
    Stage stage;
    for (int t = 0; t < n && t < static_cast<int>(slices.size()); ++t) {
      tpc::KernelRegisters regs;
      regs.state = tpc::launch_state(launch, addresses, slices[static_cast<std::size_t>(t)]);
      regs.access_scale = launch.access_scale;
      regs.binary = binary;
      regs.sync_object = stage_sob(k);
      regs.sync_message = stage_message();
      regs.kernel_id = k;
      stage.push_back(Work{queue(Engine::kTpc, t), tpc::register_image(regs),
                           PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET});
    }
    stages.push_back(std::move(stage));
  }
  return stages;
}

Launcher::Run Launcher::compile(int chip, ChipState& s, const std::vector<Stage>& stages) {
  chip::Chip& c = model_.chip(chip);
  if (stages.empty()) throw std::invalid_argument("a run with nothing to do");
  if (stages.size() > kSobs)
    throw std::invalid_argument(
        fmt::format("a run of {} stages (at most {})", stages.size(), kSobs));
  std::map<int, CommandBuffer> cbs;
  Run r;
  r.stages = static_cast<std::uint32_t>(stages.size());
  std::uint32_t previous = 0;
  for (std::uint32_t k = 0; k < r.stages; ++k) {
    for (const Work& w : stages[k]) {
      CommandBuffer& cb = cbs[w.queue];
      if (k > 0)
        cb.wait(kFirstMonitor + static_cast<std::uint32_t>(w.queue), kFirstSob + k - 1, previous);
      cb.registers(w.registers);
      cb.wreg(w.execute, 1);
    }
    previous = static_cast<std::uint32_t>(stages[k].size());
  }
  r.last_count = previous;
  for (const auto& [q, cb] : cbs)
    r.arena_bytes += (cb.bytes().size() + kCbAlign - 1) / kCbAlign * kCbAlign;
  const auto arena = s.arena.allocate(r.arena_bytes, kCbAlign);
  if (!arena) throw std::invalid_argument("the run's command buffers do not fit the chip's SRAM");
  r.arena = *arena;
  std::uint64_t at = r.arena;
  for (const auto& [q, cb] : cbs) {
    c.debug_write(at, cb.bytes().data(), cb.bytes().size());
    r.buffers.push_back(Run::Buffer{q, at, static_cast<std::uint32_t>(cb.bytes().size())});
    at += (cb.bytes().size() + kCbAlign - 1) / kCbAlign * kCbAlign;
  }
  return r;
}

void Launcher::run(int chip, const tpc::KernelPlan& plan,
                   const std::vector<std::uint64_t>& addresses, int cores,
                   std::function<void(bool)> done) {
  ChipState& s = state(chip);
  submit(chip, s, compile(chip, s, kernel_stages(chip, s, plan, addresses, cores)),
         std::move(done));
}

// The rows of the operation's (implicit) GEMM dealt out to the engines in whole array tiles.
void Launcher::run(int chip, const mme::MmeOperation& op, int engines,
                   std::function<void(bool)> done) {
  chip::Chip& c = model_.chip(chip);
  if (c.mme_engines() == 0)
    throw std::invalid_argument(
        fmt::format("{}: chip.mme.engines is 0: there is no MME", c.name()));
  if (engines < 0 || engines > c.mme_engines()) {
    throw std::invalid_argument(
        fmt::format("{} MMEs asked of {}, which has {}", engines, c.name(), c.mme_engines()));
  }
  if (auto problem = op.problem()) throw std::invalid_argument(*problem);
  const int n = engines == 0 ? c.mme_engines() : engines;
  const std::uint64_t begin = op.m_start;
  const std::uint64_t end = op.m_count ? begin + op.m_count : mme::GemmView(op).m();
  const std::uint64_t rows = static_cast<std::uint64_t>(c.config().mme.engine.rows);
  const std::uint64_t share = (end - begin + rows * n - 1) / (rows * n) * rows;
  Stage stage;
  for (int e = 0; e < n && begin + share * e < end; ++e) {
    mme::OperationRegisters regs;
    regs.op = op;
    regs.op.m_start = static_cast<std::uint32_t>(begin + share * e);
    regs.op.m_count = static_cast<std::uint32_t>(std::min(share, end - regs.op.m_start));
    regs.sync_object = stage_sob(0);
    regs.sync_message = stage_message();
    stage.push_back(Work{queue(Engine::kMme, e), mme::register_image(regs),
                         PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET});
  }
  ChipState& s = state(chip);
  submit(chip, s, compile(chip, s, {stage}), std::move(done));
}

void Launcher::submit(int chip, ChipState& s, Run r, std::function<void(bool)> done) {
  r.done = std::move(done);
  s.waiting.push_back(std::move(r));
  if (!s.running) start(chip, s);
}

void Launcher::start(int chip, ChipState& s) {
  if (s.waiting.empty()) return;
  s.running = true;
  Run& r = s.waiting.front();
  chip::Chip& c = model_.chip(chip);
  r.errors_before = c.error_count();
  const std::uint32_t zero = chip::spec::encode_sob_write({0, false, false});
  for (std::uint32_t k = 0; k < r.stages; ++k) c.write_register(stage_sob(k), zero);
  c.write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(manager(), kDoneMonitor),
                   chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                       chip::Chip::sob_index(kFirstSob + r.stages - 1), r.last_count,
                       chip::spec::MonitorOp::kGreaterOrEqual)));
  for (const Run::Buffer& b : r.buffers) {
    chip::PqEntry entry;
    entry.address = b.address;
    entry.length = b.length;
    std::uint8_t raw[kPqEntryBytes];
    chip::encode_pq_entry(entry, raw);
    std::uint32_t& pi = s.pi[static_cast<std::size_t>(b.queue)];
    c.debug_write(pq(chip, b.queue) + kPqEntryBytes * chip::pq_slot(pi, kPqLog2), raw, sizeof raw);
    pi = chip::pq_next(pi, kPqLog2);
    c.write_register(PODSIM_GAUDI1_QMAN_PQ_PI(qman_base(b.queue), kStream), pi);
  }
}

void Launcher::on_interrupt(int chip, int vector) {
  if (vector != kVector) return;
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  if (!s.running || s.waiting.empty()) return;
  Run r = std::move(s.waiting.front());
  s.waiting.pop_front();
  s.arena.release(r.arena, r.arena_bytes);
  s.running = false;
  const bool ok = model_.chip(chip).error_count() == r.errors_before;
  start(chip, s);
  if (r.done) r.done(ok);
}

}  // namespace podsim::compute
