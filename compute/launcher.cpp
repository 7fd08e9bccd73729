#include "compute/launcher.h"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/chip/qman_ring.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/tpc_registers.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::compute {
namespace {

constexpr std::uint64_t kPqEntryBytes = PODSIM_GAUDI1_PQ_ENTRY_SIZE;
constexpr std::uint32_t kDoneMonitor = Launcher::kFirstMonitor + 64;
constexpr std::uint64_t kCbAlign = 64;

void write64(chip::Chip& c, std::uint64_t lo_register, std::uint64_t hi_register,
             std::uint64_t value) {
  c.write_register(lo_register, static_cast<std::uint32_t>(value));
  c.write_register(hi_register, static_cast<std::uint32_t>(value >> 32));
}

std::uint64_t manager() { return chip::Chip::sync_manager_of(Launcher::kFirstSob); }

class CommandBuffer {
 public:
  void registers(const std::vector<tpc::RegisterRun>& runs) {
    for (const tpc::RegisterRun& r : runs) {
      if (r.values.size() % 2 == 0) {
        chip::spec::Packet bulk("WREG_BULK");
        std::vector<std::uint64_t> pairs;
        for (std::size_t i = 0; i < r.values.size(); i += 2) {
          pairs.push_back(static_cast<std::uint64_t>(r.values[i + 1]) << 32 | r.values[i]);
        }
        bulk.set("reg_offset", r.offset).set_tail(std::move(pairs));
        codec_.encode(bulk, bytes_);
      } else {
        for (std::size_t i = 0; i < r.values.size(); ++i)
          wreg(r.offset + 4 * static_cast<std::uint32_t>(i), r.values[i]);
      }
    }
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

std::uint64_t Launcher::pq(int chip, int tpc) const {
  chip::Chip& c = model_.chip(chip);
  return c.config().address_map.sram.value +
         static_cast<std::uint64_t>(tpc) * (1u << kPqLog2) * kPqEntryBytes;
}

Launcher::ChipState& Launcher::state(int chip) {
  ChipState& s = chips_.at(static_cast<std::size_t>(chip));
  if (!s.ready) set_up(chip, s);
  return s;
}

// What a driver does once: a PQ ring for stream 0 of every TPC QMAN, the monitors' payloads
// (a TPC QMAN's fence counter; the MSI doorbell for the done monitor), the QMANs enabled.
void Launcher::set_up(int chip, ChipState& s) {
  chip::Chip& c = model_.chip(chip);
  if (c.tpc_cores() == 0)
    throw std::invalid_argument(
        fmt::format("{}: chip.tpc.cores is 0: there is no TPC to run a kernel on", c.name()));
  if (c.sram() == nullptr)
    throw std::invalid_argument(
        fmt::format("{}: kernels run from SRAM, and chip.sram.size is 0", c.name()));
  const std::uint64_t sram = c.config().sram.size.bytes;
  const std::uint64_t rings =
      static_cast<std::uint64_t>(c.tpc_cores()) * (1u << kPqLog2) * kPqEntryBytes;
  s.arena = core::RangeAllocator(c.config().address_map.sram.value + rings, sram / 2 - rings);
  s.pi.assign(static_cast<std::size_t>(c.tpc_cores()), 0);
  const auto payload = [&](std::uint32_t monitor, std::uint64_t address) {
    write64(c, PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(manager(), monitor),
            PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(manager(), monitor), address);
    c.write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(manager(), monitor), 1);
  };
  for (int t = 0; t < c.tpc_cores(); ++t) {
    const std::uint64_t qman = chip::Chip::tpc_qman_base(t);
    write64(c, PODSIM_GAUDI1_QMAN_PQ_BASE_LO(qman, 0), PODSIM_GAUDI1_QMAN_PQ_BASE_HI(qman, 0),
            pq(chip, t));
    c.write_register(PODSIM_GAUDI1_QMAN_PQ_SIZE(qman, 0), kPqLog2);
    c.write_register(PODSIM_GAUDI1_QMAN_GLBL_CFG0(qman),
                     podsim_gaudi1_make_qman_glbl_cfg0(0xF, 0x1F, 0x1F));
    payload(kFirstMonitor + static_cast<std::uint32_t>(t),
            PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(qman, 0));
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

Launcher::Run Launcher::compile(int chip, ChipState& s, const tpc::KernelPlan& plan,
                                const std::vector<std::uint64_t>& addresses, int cores) {
  chip::Chip& c = model_.chip(chip);
  if (cores < 0 || cores > c.tpc_cores()) {
    throw std::invalid_argument(
        fmt::format("{} TPCs asked of {}, which has {}", cores, c.name(), c.tpc_cores()));
  }
  const int n = cores == 0 ? c.tpc_cores() : cores;
  if (plan.launches.size() > kSobs)
    throw std::invalid_argument("a plan of more launches than sync objects");
  std::vector<CommandBuffer> cbs(static_cast<std::size_t>(n));
  Run r;
  r.launches = static_cast<std::uint32_t>(plan.launches.size());
  std::uint32_t previous = 0;
  for (std::uint32_t k = 0; k < r.launches; ++k) {
    const tpc::LaunchSpec& launch = plan.launches[k];
    const std::uint64_t binary = binary_address(chip, s, launch.binary);
    const std::vector<tpc::Slice> slices = tpc::partition(launch.index_space, n);
    for (int t = 0; t < n && t < static_cast<int>(slices.size()); ++t) {
      CommandBuffer& cb = cbs[static_cast<std::size_t>(t)];
      if (k > 0)
        cb.wait(kFirstMonitor + static_cast<std::uint32_t>(t), kFirstSob + k - 1, previous);
      tpc::KernelRegisters regs;
      regs.state = tpc::launch_state(launch, addresses, slices[static_cast<std::size_t>(t)]);
      regs.access_scale = launch.access_scale;
      regs.binary = binary;
      regs.sync_object = chip::Chip::sob_address(kFirstSob + k);
      regs.sync_message = chip::spec::encode_sob_write({1, true, false});
      regs.kernel_id = k;
      cb.registers(tpc::register_image(regs));
      cb.wreg(PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET, 1);
    }
    previous = static_cast<std::uint32_t>(slices.size());
  }
  r.last_count = previous;
  for (const CommandBuffer& cb : cbs) {
    r.arena_bytes += (cb.bytes().size() + kCbAlign - 1) / kCbAlign * kCbAlign;
  }
  const auto arena = s.arena.allocate(r.arena_bytes, kCbAlign);
  if (!arena) throw std::invalid_argument("the run's command buffers do not fit the chip's SRAM");
  r.arena = *arena;
  std::uint64_t at = r.arena;
  for (const CommandBuffer& cb : cbs) {
    if (!cb.bytes().empty()) c.debug_write(at, cb.bytes().data(), cb.bytes().size());
    r.buffers.emplace_back(at, static_cast<std::uint32_t>(cb.bytes().size()));
    at += (cb.bytes().size() + kCbAlign - 1) / kCbAlign * kCbAlign;
  }
  return r;
}

void Launcher::run(int chip, const tpc::KernelPlan& plan,
                   const std::vector<std::uint64_t>& addresses, int cores,
                   std::function<void(bool)> done) {
  ChipState& s = state(chip);
  if (addresses.size() != plan.buffers.size()) {
    throw std::invalid_argument(fmt::format("{} buffer addresses for a plan of {} buffers",
                                            addresses.size(), plan.buffers.size()));
  }
  Run r = compile(chip, s, plan, addresses, cores);
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
  for (std::uint32_t k = 0; k < r.launches; ++k)
    c.write_register(chip::Chip::sob_address(kFirstSob + k), zero);
  c.write_register(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(manager(), kDoneMonitor),
                   chip::spec::encode_monitor_arm(chip::spec::MonitorArm::single(
                       chip::Chip::sob_index(kFirstSob + r.launches - 1), r.last_count,
                       chip::spec::MonitorOp::kGreaterOrEqual)));
  for (std::size_t t = 0; t < r.buffers.size(); ++t) {
    const auto [address, length] = r.buffers[t];
    if (length == 0) continue;
    chip::PqEntry entry;
    entry.address = address;
    entry.length = length;
    std::uint8_t raw[kPqEntryBytes];
    chip::encode_pq_entry(entry, raw);
    std::uint32_t& pi = s.pi[t];
    c.debug_write(pq(chip, static_cast<int>(t)) + kPqEntryBytes * chip::pq_slot(pi, kPqLog2), raw,
                  sizeof raw);
    pi = chip::pq_next(pi, kPqLog2);
    c.write_register(PODSIM_GAUDI1_QMAN_PQ_PI(chip::Chip::tpc_qman_base(static_cast<int>(t)), 0),
                     pi);
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
