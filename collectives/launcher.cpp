#include "collectives/launcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "collectives/rank_notices.h"
#include "driver/client.h"
#include "driver/host_drivers.h"
#include "driver/queue_map.h"
#include "hw/chip/chip.h"
#include "hw/chip/nic_doorbell.h"
#include "hw/chip/spec/packet_codec.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/dma/dma_regs.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::collectives {
namespace {

using chip::spec::Packet;

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kWaitUs = 3600ull * 1000000;  // a collective's CS ends by its timeout
constexpr int kCompletionEngine = 1;                  // DMA 1: host-facing
// Programs run on the internal DMA QMANs: their buffers lie in SRAM, where the host-facing
// QMANs' (DMA 0 and 1) would be fetched across PCIe, chunk by chunk, as the program runs.
constexpr int kFirstProgramEngine = 2;
constexpr std::uint64_t kGateBytes = 256;  // the gate buffer at the region's start

// A queue's gate: it waits until the launch's upload has landed (fence counter 1).
Packet gate_fence() {
  Packet fence("FENCE");
  fence.set("id", 1).set("target_val", 1).set("dec_val", 1);
  return fence;
}

std::vector<std::uint8_t> gate_buffer() { return chip::spec::PacketCodec().encode({gate_fence()}); }

Packet msg_long(std::uint64_t address, std::uint32_t value) {
  Packet p("MSG_LONG");
  p.set("addr", address).set("value", value);
  return p;
}

// Register writes encoded as they are added: a chip's set-up writes a few thousand, and a pod's
// 128 chips set up at once.
class RegisterWrites {
 public:
  RegisterWrites() : addr_(msg_.index_of("addr")), value_(msg_.index_of("value")) {}
  void write(std::uint64_t address, std::uint32_t value) {
    codec_.encode(msg_.set(addr_, address).set(value_, value), bytes_);
  }
  void write64(std::uint64_t lo_register, std::uint64_t hi_register, std::uint64_t value) {
    write(lo_register, static_cast<std::uint32_t>(value));
    write(hi_register, static_cast<std::uint32_t>(value >> 32));
  }
  // A monitor's payload: one onto `fence`.
  void payload(std::uint64_t manager, std::uint32_t monitor, std::uint64_t fence) {
    write64(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRL(manager, monitor),
            PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_ADDRH(manager, monitor), fence);
    write(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_PAY_DATA(manager, monitor), 1);
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  const chip::spec::PacketCodec codec_{};
  Packet msg_{"MSG_LONG"};
  std::size_t addr_, value_;
  std::vector<std::uint8_t> bytes_;
};

driver::EngineRef queue_engine(int queue, int dma_queues) {
  return queue < dma_queues
             ? driver::EngineRef{driver::EngineKind::kDma, kFirstProgramEngine + queue}
             : driver::EngineRef{driver::EngineKind::kTpc, queue - dma_queues};
}

int program_dma_queues(const chip::Chip& c) { return c.dma_engines() - kFirstProgramEngine; }

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

Launcher::Launcher(system::SystemModel& model)
    : model_(model),
      drivers_(model.attached<driver::HostDrivers>()),
      chips_(static_cast<std::size_t>(model.chips())) {}

// The TPCs the driver serves (a gaudi3's first 25, under Gaudi2's ids), as many as monitors allow.
int Launcher::tpc_queues(int chip) const {
  const chip::Chip& c = model_.chip(chip);
  const int served = driver::DeviceProperties::of(c.config()).tpc_cores;
  return std::max(0, std::min(served, static_cast<int>(kMonitorsPerSlot) - 1 - c.dma_engines()));
}

int Launcher::queues(int chip) const {
  return program_dma_queues(model_.chip(chip)) + tpc_queues(chip);
}

ChipGeometry Launcher::geometry(int chip, bool reduce_on_tpcs) const {
  chip::Chip& c = model_.chip(chip);
  if (c.sram() == nullptr) {
    throw std::invalid_argument(fmt::format(
        "{}: collectives keep their command buffers in SRAM, and chip.sram.size is 0", c.name()));
  }
  if (program_dma_queues(c) <= 0) {
    throw std::invalid_argument(fmt::format(
        "{}: collectives run on the internal DMA QMANs (DMA 2 on) and are launched and completed "
        "through the host-facing DMA 0 and 1, and chip.dma.engines is {}",
        c.name(), c.dma_engines()));
  }
  ChipGeometry g;
  g.queues = program_dma_queues(c);
  g.engines = c.collective_engines();
  const dma::DmaConfig& engine = c.config().dma.engine;
  // A slice smaller than what one engine keeps in flight would not reach its streaming rate.
  g.min_slice = engine.burst.bytes * static_cast<std::uint64_t>(engine.outstanding);
  g.max_buffer = static_cast<std::uint32_t>(c.config().qman.max_cb_size.bytes);
  g.generation = c.config().tpc.core.generation;
  if (reduce_on_tpcs) {
    g.tpcs = tpc_queues(chip);
    if (g.tpcs == 0) {
      throw std::invalid_argument(fmt::format(
          "{}: reductions on TPCs asked for, and chip.tpc.cores is 0 (reduce on DMA engines)",
          c.name()));
    }
  }
  return g;
}

const chip::ResourceShare& Launcher::share(int chip) const {
  return model_.chip(chip).config().resources.collectives;
}

// The collectives' part of a chip's SRAM, [begin, end).
std::pair<std::uint64_t, std::uint64_t> Launcher::region(int chip) const {
  const chip::ChipConfig& config = model_.chip(chip).config();
  const chip::ResourceShare& s = config.resources.collectives;
  const auto at = [&](double fraction) {
    const auto bytes =
        static_cast<std::uint64_t>(fraction * static_cast<double>(config.sram.size.bytes));
    return config.address_map.sram.value + bytes / 256 * 256;
  };
  return {at(s.sram_from), at(s.sram_to)};
}

bool Launcher::fits(const CommandCompiler& code, const std::vector<int>& chips) const {
  for (int r = 0; r < code.ranks(); ++r) {
    const int chip = chips[static_cast<std::size_t>(r)];
    const auto [begin, end] = region(chip);
    if (code.sobs(r) > share(chip).sobs || code.arena_bytes(r) + kGateBytes > end - begin)
      return false;
  }
  return true;
}

Launcher::ChipState& Launcher::state(int chip) {
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  if (!s.laid_out) {
    const auto [begin, end] = region(chip);
    s.region = begin;
    s.region_bytes = end - begin;
    s.sobs = core::RangeAllocator(share(chip).first_sob, share(chip).sobs);
    s.gate = s.region;
    s.arena = core::RangeAllocator(s.region + kGateBytes, s.region_bytes - kGateBytes);
    s.laid_out = true;
  }
  return s;
}

void Launcher::launch(std::vector<int> chips, std::shared_ptr<const CommandCompiler> code,
                      RankDone rank_done, core::TimePs notice_ps) {
  if (!fits(*code, chips)) {
    throw std::invalid_argument(
        "the collective's command buffers or sync objects do not fit a chip (half its SRAM, "
        "5120 sync objects): use larger chunks");
  }
  auto run = std::make_unique<Running>();
  run->chips = std::move(chips);
  run->code = std::move(code);
  run->rank_done = std::move(rank_done);
  run->notice_ps = notice_ps;
  Running* raw = run.get();  // alive until its last rank's notice has been handled
  run->channel = open_rank_channel(
      model_.notices(),
      [this, raw](int rank, bool ok, core::TimePs end) { finish(*raw, rank, ok, end); });
  pending_.push_back(std::move(run));
  start_waiting();
}

// Every waiting collective whose chips all have room starts, in the order they were launched:
// one that waits for a busy chip holds back none on other chips.
void Launcher::start_waiting() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!try_start(**it)) {
      ++it;
      continue;
    }
    running_.push_back(std::move(*it));
    it = pending_.erase(it);
  }
}

bool Launcher::try_start(Running& run) {
  const int ranks = run.code->ranks();
  std::vector<int> slots;
  run.shares.assign(static_cast<std::size_t>(ranks), {});
  auto undo = [&](int upto) {
    for (int r = 0; r < upto; ++r) {
      ChipState& s = state(run.chips[static_cast<std::size_t>(r)]);
      const Share& share = run.shares[static_cast<std::size_t>(r)];
      s.sobs.release(share.first_sob, share.sobs);
      s.arena.release(share.arena, share.arena_bytes);
    }
    return false;
  };
  for (int r = 0; r < ranks; ++r) {
    ChipState& s = state(run.chips[static_cast<std::size_t>(r)]);
    // A free stream of the share.
    const chip::ResourceShare& mine = share(run.chips[static_cast<std::size_t>(r)]);
    int free = -1;
    for (int i = 0; i < mine.stream_count() && free < 0; ++i)
      if (s.running[static_cast<std::size_t>(mine.stream(i))] == nullptr) free = mine.stream(i);
    if (free < 0) return undo(r);
    Share& share = run.shares[static_cast<std::size_t>(r)];
    share.sobs = run.code->sobs(r);
    share.arena_bytes = std::max<std::uint64_t>(run.code->arena_bytes(r), 1);
    const auto sob = s.sobs.allocate(share.sobs);
    const auto arena = sob ? s.arena.allocate(share.arena_bytes, 256) : std::nullopt;
    if (!arena) {
      if (sob) s.sobs.release(*sob, share.sobs);
      return undo(r);
    }
    share.first_sob = static_cast<std::uint32_t>(*sob);
    share.arena = *arena;
    slots.push_back(free);
  }
  start(run, slots);
  return true;
}

void Launcher::start(Running& run, const std::vector<int>& slots) {
  const int ranks = run.code->ranks();
  run.slots = slots;
  run.placements.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    ChipState& s = chips_[static_cast<std::size_t>(run.chips[i])];
    s.running[static_cast<std::size_t>(slots[i])] = &run;
    run.placements[i] = {run.shares[i].first_sob,
                         run.shares[i].arena,
                         s.region,
                         s.region,
                         slots[i],
                         share(run.chips[i]).first_monitor +
                             static_cast<std::uint32_t>(slots[i]) * kMonitorsPerSlot};
  }
  run.remaining = ranks;
  for (int r = 0; r < ranks; ++r) {
    const int chip = run.chips[static_cast<std::size_t>(r)];
    if (!model_.simulates(chip)) continue;
    drivers_.cpu(chip).run([this, &run, r](host::HostCpu&) { run_rank(run, r); });
  }
}

void Launcher::run_rank(Running& run, int rank) {
  const int chip = run.chips[static_cast<std::size_t>(rank)];
  bool ok = false;
  try {
    driver::File& file = ready(chip);
    const ChipImage image = run.code->encode(rank, run.placements);
    ok = execute(run, rank, file, image);
  } catch (const std::exception& e) {
    if (failures_.size() < kKeptFailures) {
      failures_.push_back(fmt::format("rank {} on chip {}: {}", rank, chip, e.what()));
    }
    // A rank that cannot run (a failed ioctl, a CS that timed out) ends not ok; its peers, which
    // may wait for it, are ended by their own CSs' timeouts. The chip's objects may be left
    // counted: it is set up (and cleared) again before its next collective.
    chips_[static_cast<std::size_t>(chip)].ready = false;
  }
  post_rank_end(model_.notices(), run.channel, chip, rank, ok, run.notice_ps);
}

driver::File& Launcher::ready(int chip) {
  driver::File& file = drivers_.file(chip);
  ChipState& s = state(chip);
  while (s.setting_up) sc_core::wait(s.set_up_done);
  if (!s.ready) set_up(chip, s, file);
  return file;
}

void Launcher::open(const std::vector<int>& chips) {
  int remaining = static_cast<int>(chips.size());
  std::string error;
  sc_core::sc_event opened;
  for (int chip : chips) {
    drivers_.cpu(chip).run([&, chip](host::HostCpu&) {
      try {
        ready(chip);
      } catch (const std::exception& e) {
        if (error.empty()) error = fmt::format("chip {}: {}", chip, e.what());
      }
      if (--remaining == 0) core::notify_now(opened);
    });
  }
  while (remaining > 0) sc_core::wait(opened);
  if (!error.empty()) throw std::runtime_error("collectives: opening the devices: " + error);
}

// The set-up CS's commands: the engines' descriptor and WQE bases at the region, every slot's
// queue monitors' payloads (the done monitor's: the completion job's fence), the gate buffer,
// and after a failure the collectives' objects cleared.
std::vector<std::uint8_t> Launcher::set_up_commands(int chip, const ChipState& s,
                                                    bool again) const {
  const chip::Chip& c = model_.chip(chip);
  const int dma_queues = program_dma_queues(c), all_queues = queues(chip);
  RegisterWrites writes;
  for (int e = 0; e < c.dma_engines(); ++e) {
    const std::uint64_t core = chip::Chip::dma_core_base(e);
    writes.write64(core + dma::regs::kExtDescBaseLo, core + dma::regs::kExtDescBaseHi, s.region);
  }
  const std::uint64_t doorbell = PODSIM_GAUDI1_NIC_DOORBELL_BASE;
  writes.write64(doorbell + chip::NicDoorbell::kWqeBaseLo, doorbell + chip::NicDoorbell::kWqeBaseHi,
                 s.region);
  const std::uint64_t completion_qman =
      driver::qman_base({driver::EngineKind::kDma, kCompletionEngine});
  const chip::ResourceShare& mine = share(chip);
  for (int m = 0; m < chip::kSyncManagers; ++m) {
    if ((mine.monitor_managers >> m & 1) == 0) continue;
    const std::uint64_t manager = chip::Chip::sync_manager_base(m);
    for (int i = 0; i < mine.stream_count(); ++i) {
      const int slot = mine.stream(i);
      const std::uint32_t first =
          mine.first_monitor + static_cast<std::uint32_t>(slot) * kMonitorsPerSlot;
      for (int h = 0; h < all_queues; ++h) {
        writes.payload(manager, first + static_cast<std::uint32_t>(h),
                       PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(
                           driver::qman_base(queue_engine(h, dma_queues)), slot));
      }
      writes.payload(manager, first + kMonitorsPerSlot - 1,
                     PODSIM_GAUDI1_QMAN_CP_FENCE0_RDATA(completion_qman, slot));
    }
  }
  // Every object starts at zero (the context's opening cleared them); each collective's queues
  // leave their rank's at zero again, but one that failed may have left some counted.
  if (again) {
    const std::uint32_t zero = chip::spec::encode_sob_write({0, false, false});
    for (std::uint32_t g = mine.first_sob; g < mine.first_sob + mine.sobs; ++g)
      writes.write(chip::Chip::sob_address(g), zero);
  }
  const std::vector<std::uint8_t> gate = gate_buffer();
  for (std::size_t w = 0; w < gate.size(); w += 4) {
    std::uint32_t word = 0;
    std::memcpy(&word, gate.data() + w, 4);
    writes.write(s.gate + w, word);
  }
  return writes.bytes();
}

// What the application does once per device (and after a failure): its set-up CS, and the
// region's host mirror mapped for the uploads.
void Launcher::set_up(int chip, ChipState& s, driver::File& file) {
  s.setting_up = true;
  const bool again = std::exchange(s.set_up_before, true);
  s.gate_bytes = static_cast<std::uint32_t>(gate_buffer().size());
  s.resident.clear();  // a chip set up again may have been reset
  driver::Client client(file, fmt::format("collectives: chip {}", chip));
  const chip::Chip& c = model_.chip(chip);
  if (s.mirror_va == 0) {
    const driver::HostDrivers::Region app = drivers_.collectives_memory(chip);
    if (round_up(s.region_bytes, kPage) > app.size) {
      throw std::runtime_error(fmt::format(
          "collectives: chip {}: an arena of {} bytes has no room for its mirror in the {} bytes "
          "of host memory the collectives have",
          chip, s.region_bytes, app.size));
    }
    s.mirror = app.base;
    s.mirror_va = client.map_host(s.mirror, round_up(s.region_bytes, kPage));
  }
  driver::Client::Cb buffer;
  {
    const std::vector<std::uint8_t> cb = set_up_commands(chip, s, again);
    buffer = client.create_cb(static_cast<std::uint32_t>(cb.size()));
    drivers_.memory(chip).backing().write(buffer.address, cb.data(), cb.size());
  }
  const driver::QueueMap& map = driver::QueueMap::of(c.config().pcie.endpoint.device_id);
  const std::uint64_t seq = client.submit({driver::Client::chunk(
      map.queue_id({driver::EngineKind::kDma, 0}, 0), buffer.handle, buffer.size)});
  const std::uint32_t status = client.wait(seq, kWaitUs);
  client.destroy_cb(buffer);
  s.setting_up = false;
  core::notify_now(s.set_up_done);
  if (status != HL_WAIT_CS_STATUS_COMPLETED) {
    throw std::runtime_error(fmt::format("collectives: chip {}: the set-up CS failed", chip));
  }
  s.ready = true;
}

// Whether `bytes` already lie at `arena`; if not, they will: the images they overlap are
// forgotten and they are remembered.
bool Launcher::resident(int chip, std::uint64_t arena, const std::vector<std::uint8_t>& bytes) {
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  const std::uint64_t hash = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  const auto found = s.resident.find(arena);
  if (found != s.resident.end() && found->second.bytes == bytes.size() &&
      found->second.hash == hash) {
    return true;
  }
  const std::uint64_t end = arena + bytes.size();
  auto it = s.resident.lower_bound(arena);
  if (it != s.resident.begin() && std::prev(it)->first + std::prev(it)->second.bytes > arena) {
    --it;
  }
  while (it != s.resident.end() && it->first < end) it = s.resident.erase(it);
  s.resident.emplace(arena, ChipState::Resident{bytes.size(), hash});
  return false;
}

// One CS: on DMA 0 the upload of the rank's images (LIN_DMA from the host mirror), its done
// monitor armed and every other queue's gate opened (fence counter 1); each other queue's
// buffers behind its gate (they end by clearing the rank's objects: command_compiler.h); on DMA 1
// last, the completion job, which fences until the done object says so and then clears it, so
// peers need not wait for each other to start. True when it completed.
bool Launcher::execute(Running& run, int rank, driver::File& file, const ChipImage& image) {
  const auto i = static_cast<std::size_t>(rank);
  const int chip = run.chips[i];
  ChipState& s = chips_[static_cast<std::size_t>(chip)];
  const ChipPlacement& at = run.placements[i];
  driver::Client client(file, fmt::format("collectives: chip {}", chip));
  const driver::QueueMap& map =
      driver::QueueMap::of(model_.chip(chip).config().pcie.endpoint.device_id);
  const chip::spec::PacketCodec codec;
  const int dma_queues = run.code->dma_queues(rank), queues = run.code->queues(rank);
  std::vector<driver::Client::Cb> copies;
  const auto host_cb = [&](const std::uint8_t* bytes, std::size_t size) {
    copies.push_back(client.create_cb(static_cast<std::uint32_t>(size)));
    drivers_.memory(chip).backing().write(copies.back().address, bytes, size);
    return copies.back();
  };
  const auto queue_of = [&](int h) { return map.queue_id(queue_engine(h, dma_queues), at.slot); };

  std::vector<Packet> upload;
  std::uint64_t mirrored = 0;  // the upload's source in host memory, if there is one
  if (!image.bytes.empty() && !resident(chip, at.arena, image.bytes)) {
    const std::uint64_t offset = at.arena - s.region;
    mirrored = s.mirror + offset;
    drivers_.memory(chip).backing().write(mirrored, image.bytes.data(), image.bytes.size());
    Packet copy("LIN_DMA");
    copy.set("tsize", image.bytes.size())
        .set("lin", 1)
        .set("src_addr", s.mirror_va + offset)
        .set("dst_addr", at.arena);
    copy.barriers(false, true, false);
    upload.push_back(copy);
  }
  const std::uint32_t done = at.first_sob + run.code->done_sob(rank);
  const auto arm =
      chip::spec::MonitorArm::single(chip::Chip::sob_index(done), run.code->done_target(rank),
                                     chip::spec::MonitorOp::kGreaterOrEqual);
  upload.push_back(msg_long(PODSIM_GAUDI1_SYNC_MNGR_OBJS_MON_ARM(chip::Chip::sync_manager_of(done),
                                                                 at.monitor + kMonitorsPerSlot - 1),
                            chip::spec::encode_monitor_arm(arm)));
  upload.back().barriers(true, true, true);  // after the upload has landed
  for (int h = 0; h < queues; ++h) {
    upload.push_back(msg_long(
        PODSIM_GAUDI1_QMAN_CP_FENCE1_RDATA(driver::qman_base(queue_engine(h, dma_queues)), at.slot),
        1));
  }
  std::vector<hl_cs_chunk> chunks;
  const std::vector<std::uint8_t> upload_bytes = codec.encode(upload);
  const driver::Client::Cb upload_cb = host_cb(upload_bytes.data(), upload_bytes.size());
  chunks.push_back(driver::Client::chunk(map.queue_id({driver::EngineKind::kDma, 0}, at.slot),
                                         upload_cb.handle, upload_cb.size));
  for (int h = 0; h < queues; ++h) {
    const std::uint32_t queue = queue_of(h);
    chunks.push_back(driver::Client::chunk(queue, s.gate, s.gate_bytes));
    if (static_cast<std::size_t>(h) >= image.buffers.size()) continue;
    for (const auto& [address, bytes] : image.buffers[static_cast<std::size_t>(h)]) {
      chunks.push_back(driver::Client::chunk(queue, address, bytes));
    }
  }
  Packet fence("FENCE");
  fence.set("id", 0).set("target_val", 1).set("dec_val", 1);
  const std::vector<std::uint8_t> completion_bytes =
      codec.encode({fence, msg_long(chip::Chip::sob_address(done),
                                    chip::spec::encode_sob_write({0, false, false}))});
  const driver::Client::Cb cb = host_cb(completion_bytes.data(), completion_bytes.size());
  chunks.push_back(driver::Client::chunk(
      map.queue_id({driver::EngineKind::kDma, kCompletionEngine}, at.slot), cb.handle, cb.size));
  const std::uint64_t seq = client.submit(chunks);
  const std::uint32_t status = client.wait(seq, kWaitUs);
  for (const driver::Client::Cb& c : copies) client.destroy_cb(c);
  // The uploaded copy is no longer needed: its memory goes back (the rank's image stays on the
  // chip, and its hash says so).
  if (mirrored != 0) drivers_.memory(chip).backing().discard(mirrored, image.bytes.size());
  return status == HL_WAIT_CS_STATUS_COMPLETED;
}

// The rank's share goes back; the last rank ends the collective.
void Launcher::finish(Running& run, int rank, bool ok, core::TimePs end) {
  const auto i = static_cast<std::size_t>(rank);
  ChipState& s = chips_[static_cast<std::size_t>(run.chips[i])];
  const Share& share = run.shares[i];
  s.running[static_cast<std::size_t>(run.slots[i])] = nullptr;
  s.sobs.release(share.first_sob, share.sobs);
  s.arena.release(share.arena, share.arena_bytes);
  const bool last = --run.remaining == 0;
  auto rank_done = run.rank_done;
  std::unique_ptr<Running> finished;  // kept until rank_done has run
  if (last) {
    auto it = std::find_if(running_.begin(), running_.end(),
                           [&run](const std::unique_ptr<Running>& p) { return p.get() == &run; });
    finished = std::move(*it);
    running_.erase(it);
    model_.notices().close(run.channel);
  }
  start_waiting();
  if (rank_done) rank_done(rank, ok, end);
}

}  // namespace podsim::collectives
