#include "hw/tpc/tpc_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "core/bulk_transfer.h"
#include "core/config_binding.h"
#include "core/kernel.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::tpc {
namespace {

constexpr std::uint64_t kTensorStride = PODSIM_GAUDI1_TPC_CFG_TENSOR_BASE_ADDR_LOW_STRIDE;
constexpr std::size_t kMaxHazardsReported = 8;

std::uint64_t tensor_register(std::uint64_t first, int tensor) {
  return first + kTensorStride * static_cast<std::uint64_t>(tensor);
}

// Decoded kernels, shared by every core of the process: a system runs the same binary on
// thousands of cores.
std::shared_ptr<const Program> decoded_program(const std::vector<std::uint8_t>& binary) {
  static std::unordered_map<std::string, std::shared_ptr<const Program>> cache;
  const std::string key(binary.begin(), binary.end());
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto program = std::make_shared<const Program>(binary);
  cache.emplace(key, program);
  return program;
}

PipelineTiming timing_of(const TpcCoreConfig& c) {
  PipelineTiming t;
  t.cycle = static_cast<core::TimePs>(c.clock.period().ps);
  t.load_queue = c.load_queue;
  t.store_queue = c.store_queue;
  t.drain = Executor::kMaxLatency;
  return t;
}

AccessConfig access_of(const TpcCoreConfig& c, bool functional) {
  AccessConfig a;
  a.read_burst = static_cast<std::uint32_t>(c.read_burst.bytes);
  a.prefetch = c.prefetch;
  a.write_burst = static_cast<std::uint32_t>(c.write_burst.bytes);
  a.functional = functional;
  return a;
}

ExecutorConfig executor_of(const TpcCoreConfig& c, bool functional) {
  ExecutorConfig e;
  e.generation = c.generation;
  e.vector_data = functional;
  e.vlm_bytes = static_cast<std::uint32_t>(c.vlm.bytes);
  e.slm_bytes = static_cast<std::uint32_t>(c.slm.bytes);
  e.check_hazards = c.check_hazards;
  return e;
}

}  // namespace

void TpcCoreConfig::check(core::ConfigChecks& c) const {
  if (read_burst.bytes % 256 != 0)
    c.fail("read_burst", "must be a multiple of 256 bytes (a vector)");
  if (write_burst.bytes % 4 != 0) c.fail("write_burst", "must be a multiple of 4 bytes");
  if (vlm.bytes % 256 != 0) c.fail("vlm", "must be a multiple of 256 bytes (a vector)");
}

struct TpcCore::Engine {
  Engine(const TpcCoreConfig& config, bool functional, MemoryTransport& transport)
      : timer(timing_of(config)),
        unit(access_of(config, functional), transport, timer),
        executor(executor_of(config, functional), unit) {}
  PipelineTimer timer;
  AccessUnit unit;
  Executor executor;
};

// A kernel as TPC_EXECUTE found it: the registers latched, so the QMAN may write the next one.
struct TpcCore::Launch {
  LaunchState state;
  std::uint64_t binary = 0;
  std::uint64_t sync_address = 0;
  std::uint32_t sync_message = 0;
  std::uint32_t kernel_id = 0;
  std::array<Coord, kMaxTensors> scale{};
  std::shared_ptr<const Program> program;
  core::TimePs at = 0;
};

// What tile reuse keeps of an executed tile: its accesses relative to each tensor's tile origin
// and the bundles between them.
struct TpcCore::Trace {
  std::vector<AccessEvent> events;
  std::uint64_t bundles = 0;
  std::array<std::uint64_t, kSlotCount> slot_ops{};  // the tile's instructions per slot
  // Set when the recording core ends the tile: before that another core would replay a part.
  bool complete = false;
};

namespace {

// Recorded tiles, shared by the cores of the process, up to a bound on what they hold.
struct TileCache {
  static constexpr std::size_t kMaxEvents = std::size_t{1} << 25;  // 512 MiB of events
  std::unordered_map<std::string, std::shared_ptr<void>> traces;
  std::size_t events = 0;
};
TileCache& tile_cache() {
  static TileCache cache;
  return cache;
}

}  // namespace

TpcCore::TpcCore(sc_core::sc_module_name name, const TpcCoreConfig& config, bool functional)
    : EngineShell(name, kRegisterSpan),
      config_(core::validate_config(config)),
      functional_(functional),
      stats_{core::StatsGroup(this->name())
                 .counter("kernels", "1", "kernels run (failed ones included)"),
             core::StatsGroup(this->name()).counter("failed", "1", "kernels stopped by a fault"),
             core::StatsGroup(this->name())
                 .counter("bundles", "1", "bundles issued (replayed tiles included)"),
             core::StatsGroup(this->name()).counter("busy_ps", "ps", "time kernels ran"),
             core::StatsGroup(this->name())
                 .counter("load_stall_ps", "ps", "vector pipe waiting for load data"),
             core::StatsGroup(this->name())
                 .counter("store_stall_ps", "ps",
                          "vector pipe waiting for stores (queue full, fences)"),
             core::StatsGroup(this->name())
                 .counter("bytes_read", "B", "bytes read from global memory in bulk"),
             core::StatsGroup(this->name())
                 .counter("bytes_written", "B", "bytes written to global memory in bulk"),
             core::StatsGroup(this->name())
                 .counter("reused_tiles", "1", "kernels replayed from a recorded identical tile"),
             core::StatsGroup(this->name()).counter("load_ops", "1", "load-slot instructions"),
             core::StatsGroup(this->name()).counter("spu_ops", "1", "SPU-slot instructions"),
             core::StatsGroup(this->name()).counter("vpu_ops", "1", "VPU-slot instructions"),
             core::StatsGroup(this->name()).counter("store_ops", "1", "store-slot instructions")} {
  word(PODSIM_GAUDI1_TPC_CFG_SM_BASE_ADDRESS_HIGH_OFFSET) =
      static_cast<std::uint32_t>(PODSIM_GAUDI1_CFG_BASE >> 32);
  if (config_.vpu_model == VpuModel::kRtl) {
    rtl_alu_ = std::make_unique<RtlVectorAlu>("vector_alu");
    SC_HAS_PROCESS(TpcCore);
    SC_THREAD(rtl_thread);
  }
}

void TpcCore::rtl_thread() {
  for (;;) {
    wait(rtl_run_);
    replaying_ ? replay() : run();
  }
}

TpcCore::~TpcCore() = default;

std::uint32_t TpcCore::read_word(std::uint64_t offset) const {
  if (offset == PODSIM_GAUDI1_TPC_CFG_STATUS_OFFSET) {
    return podsim_gaudi1_make_tpc_status(busy() ? 1u : 0u, error_ ? 1u : 0u);
  }
  return word(offset);
}

// ---------------------------------------------------------------- registers

void TpcCore::write_word(std::uint64_t offset, std::uint32_t value, core::TimePs at) {
  if (offset == PODSIM_GAUDI1_TPC_CFG_STATUS_OFFSET) return;  // read-only
  word(offset) = value;
  if (offset == PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET && (value & 1)) {
    Launch l = latch();
    l.at = at;
    queued_.push_back(std::move(l));
    queue_job(at);
  }
}

TpcCore::Launch TpcCore::latch() const {
  const auto reg = [this](std::uint64_t offset) { return word(offset); };
  const auto reg64 = [&](std::uint64_t lo, std::uint64_t hi) {
    return static_cast<std::uint64_t>(reg(hi)) << 32 | reg(lo);
  };
  Launch l;
  for (int t = 0; t < kMaxTensors; ++t) {
    TensorDescriptor& d = l.state.tensors[static_cast<std::size_t>(t)];
    d.base = reg64(tensor_register(PODSIM_GAUDI1_TPC_CFG_TENSOR_BASE_ADDR_LOW_OFFSET, t),
                   tensor_register(PODSIM_GAUDI1_TPC_CFG_TENSOR_BASE_ADDR_HIGH_OFFSET, t));
    d.padding = reg(tensor_register(PODSIM_GAUDI1_TPC_CFG_TENSOR_PADDING_VALUE_OFFSET, t));
    const std::uint32_t config =
        reg(tensor_register(PODSIM_GAUDI1_TPC_CFG_TENSOR_CONFIG_OFFSET, t));
    d.dtype = static_cast<Dtype>((config & PODSIM_GAUDI1_TPC_TENSOR_CONFIG_DTYPE_MASK) >>
                                 PODSIM_GAUDI1_TPC_TENSOR_CONFIG_DTYPE_SHIFT);
    d.dims = static_cast<int>((config & PODSIM_GAUDI1_TPC_TENSOR_CONFIG_DIMS_MINUS_1_MASK) >>
                              PODSIM_GAUDI1_TPC_TENSOR_CONFIG_DIMS_MINUS_1_SHIFT) +
             1;
    for (int dim = 0; dim < kMaxDims; ++dim) {
      const std::uint64_t size =
          tensor_register(PODSIM_GAUDI1_TPC_CFG_TENSOR_DIM_0_SIZE_OFFSET, t) +
          8u * static_cast<unsigned>(dim);
      d.size[static_cast<std::size_t>(dim)] = reg(size);
      d.stride[static_cast<std::size_t>(dim)] = reg(size + 4);
      l.scale[static_cast<std::size_t>(t)][static_cast<std::size_t>(dim)] =
          static_cast<std::int32_t>(reg(PODSIM_GAUDI1_TPC_CFG_ACCESS_SCALE_OFFSET +
                                        4u * static_cast<unsigned>(5 * t + dim)));
    }
  }
  for (int dim = 0; dim < kMaxDims; ++dim) {
    const auto base = static_cast<std::int32_t>(
        reg(PODSIM_GAUDI1_TPC_CFG_TID_BASE_DIM_OFFSET + 8u * static_cast<unsigned>(dim)));
    const auto size = static_cast<std::int32_t>(
        reg(PODSIM_GAUDI1_TPC_CFG_TID_SIZE_DIM_OFFSET + 8u * static_cast<unsigned>(dim)));
    l.state.slice_start[static_cast<std::size_t>(dim)] = base;
    l.state.slice_end[static_cast<std::size_t>(dim)] = base + size;
  }
  for (int i = 0; i < 32; ++i)
    l.state.srf[static_cast<std::size_t>(i)] =
        reg(PODSIM_GAUDI1_TPC_CFG_SRF_OFFSET + 4u * static_cast<unsigned>(i));
  l.binary = reg64(PODSIM_GAUDI1_TPC_CFG_KERNEL_BASE_ADDRESS_LOW_OFFSET,
                   PODSIM_GAUDI1_TPC_CFG_KERNEL_BASE_ADDRESS_HIGH_OFFSET);
  const std::uint32_t sync_low = reg(PODSIM_GAUDI1_TPC_CFG_SYNC_OBJECT_ADDR_OFFSET);
  l.sync_address =
      sync_low ? static_cast<std::uint64_t>(reg(PODSIM_GAUDI1_TPC_CFG_SM_BASE_ADDRESS_HIGH_OFFSET))
                         << 32 |
                     sync_low
               : 0;
  l.sync_message = reg(PODSIM_GAUDI1_TPC_CFG_SYNC_OBJECT_MESSAGE_OFFSET);
  l.kernel_id = reg(PODSIM_GAUDI1_TPC_CFG_KERNEL_ID_OFFSET);
  return l;
}

// ---------------------------------------------------------------- running a kernel

void TpcCore::on_fire(std::uint32_t tag) {
  switch (static_cast<Tag>(tag)) {
    case kStart:
      return;
    case kRun:
      if (rtl_alu_) return core::notify_now(rtl_run_);
      return replaying_ ? replay() : run();
    case kEnd:
      return finish();
  }
}

void TpcCore::start_job() {
  current_ = std::make_unique<Launch>(std::move(queued_.front()));
  queued_.pop_front();
  kernel_start_ = core::now_ps();
  error_ = false;
  core::TimePs ready = kernel_start_;
  if (!engine_) {
    engine_ = std::make_unique<Engine>(config_, functional_, static_cast<MemoryTransport&>(*this));
    engine_->executor.set_datapath(rtl_alu_.get());
  }
  if (!fetch_program(ready)) return end_kernel(false);
  engine_->timer.start(ready);
  trace_.reset();
  replaying_ = false;
  engine_->unit.set_recorder(nullptr);
  const auto key = reuse_key();
  std::array<std::uint64_t, kMaxTensors> origins{};
  for (int t = 0; key && t < kMaxTensors; ++t)
    origins[static_cast<std::size_t>(t)] = tile_origin(t);
  engine_->unit.start(current_->state.tensors, key ? &origins : nullptr);
  if (key) {
    TileCache& cache = tile_cache();
    auto it = cache.traces.find(*key);
    if (it != cache.traces.end()) {
      // A tile another core is still recording runs in full.
      if (std::static_pointer_cast<Trace>(it->second)->complete) {
        trace_ = std::static_pointer_cast<Trace>(it->second);
        replaying_ = true;
        replay_at_ = 0;
      }
    } else if (cache.events < TileCache::kMaxEvents) {
      trace_ = std::make_shared<Trace>();
      cache.traces.emplace(*key, trace_);
      engine_->unit.set_recorder(&trace_->events);
      quiet_bundles_ = 0;
    }
  }
  if (!replaying_) engine_->executor.start(current_->program, current_->state);
  core::event_queue().schedule(ready, *this, kRun);
}

// The binary through the NoC: its header, then its bundles, both timed.
bool TpcCore::fetch_program(core::TimePs& ready) {
  std::vector<std::uint8_t> binary(kBinaryHeaderBytes);
  core::TimePs at = ready;
  if (!transfer(tlm::TLM_READ_COMMAND, current_->binary, binary.data(), kBinaryHeaderBytes, at,
                at)) {
    raise(core::ErrorEvent::Kind::kAddressError, current_->binary,
          fmt::format("kernel binary at {:#x} could not be read", current_->binary));
    return false;
  }
  try {
    const std::uint32_t count = binary_bundle_count(binary.data());
    if (binary_generation(binary.data()) != config_.generation) {
      throw std::invalid_argument(
          fmt::format("scheduled for {} cores; this core is {} (its latencies differ)",
                      to_string(binary_generation(binary.data())), to_string(config_.generation)));
    }
    binary.resize(kBinaryHeaderBytes + static_cast<std::size_t>(count) * kBundleBytes);
    if (!transfer(tlm::TLM_READ_COMMAND, current_->binary + kBinaryHeaderBytes,
                  binary.data() + kBinaryHeaderBytes,
                  static_cast<std::uint32_t>(binary.size() - kBinaryHeaderBytes), at, at)) {
      raise(core::ErrorEvent::Kind::kAddressError, current_->binary,
            fmt::format("kernel binary at {:#x} ({} bundles) could not be read", current_->binary,
                        count));
      return false;
    }
    current_->program = decoded_program(binary);
  } catch (const std::invalid_argument& e) {
    raise(core::ErrorEvent::Kind::kKernelFault, current_->binary,
          fmt::format("kernel binary at {:#x}: {}", current_->binary, e.what()));
    return false;
  }
  ready = at;
  return true;
}

void TpcCore::run() {
  const core::TimePs horizon = core::now_ps() + static_cast<core::TimePs>(config_.quantum.ps);
  Executor::State state = Executor::State::kRunning;
  std::vector<AccessEvent>* events = trace_ ? &trace_->events : nullptr;
  while (state == Executor::State::kRunning && engine_->timer.now() < horizon) {
    const std::size_t before = events ? events->size() : 0;
    engine_->timer.begin_bundle();
    state = engine_->executor.step();
    engine_->timer.end_bundle();
    if (events) record_bundle(before);
  }
  if (state == Executor::State::kRunning) {
    core::event_queue().schedule(std::max(engine_->timer.now(), core::now_ps()), *this, kRun);
    return;
  }
  if (state == Executor::State::kFailed) {
    const std::uint64_t fault = engine_->unit.fault_address();
    raise(fault ? core::ErrorEvent::Kind::kAddressError : core::ErrorEvent::Kind::kKernelFault,
          fault ? fault : current_->binary, engine_->executor.error());
    if (trace_) tile_cache().traces.clear();  // a faulting tile is no model for others
    return end_kernel(false);
  }
  if (!engine_->executor.hazards().empty()) {
    std::string list;
    for (std::size_t i = 0; i < engine_->executor.hazards().size() && i < kMaxHazardsReported;
         ++i) {
      const Hazard& h = engine_->executor.hazards()[i];
      list +=
          fmt::format("{}bundle {} {} slot read {}", i ? ", " : "", h.pc, slot_name(h.slot), h.reg);
    }
    raise(core::ErrorEvent::Kind::kHazard, current_->binary,
          fmt::format("{} early reads: {}{}", engine_->executor.hazards().size(), list,
                      engine_->executor.hazards().size() > kMaxHazardsReported ? ", ..." : ""));
  }
  end_kernel(engine_->unit.finish());
}

// A bundle with memory access ends its events; runs of bundles without are counted.
void TpcCore::record_bundle(std::size_t events_before) {
  std::vector<AccessEvent>& events = trace_->events;
  if (events.size() == events_before) {
    ++quiet_bundles_;
    return;
  }
  if (quiet_bundles_ > 0) {
    events.insert(events.begin() + static_cast<std::ptrdiff_t>(events_before),
                  AccessEvent{AccessEvent::kBundles, 0, 0, quiet_bundles_});
    quiet_bundles_ = 0;
  }
  events.push_back(AccessEvent{AccessEvent::kBundleEnd, 0, 0, 0});
}

void TpcCore::replay() {
  const core::TimePs horizon = core::now_ps() + static_cast<core::TimePs>(config_.quantum.ps);
  const std::vector<AccessEvent>& events = trace_->events;
  bool in_bundle = false;
  while (replay_at_ < events.size() && engine_->timer.now() < horizon) {
    const AccessEvent& e = events[replay_at_++];
    if (e.kind == AccessEvent::kBundles) {
      engine_->timer.skip_bundles(e.value);
    } else if (e.kind == AccessEvent::kBundleEnd) {
      engine_->timer.end_bundle();
      in_bundle = false;
    } else {
      if (!in_bundle) engine_->timer.begin_bundle();
      in_bundle = true;
      engine_->unit.replay(e);
    }
  }
  if (replay_at_ < events.size()) {
    core::event_queue().schedule(std::max(engine_->timer.now(), core::now_ps()), *this, kRun);
    return;
  }
  engine_->timer.skip_bundles(trace_->bundles);
  stats_.reused_tiles.add();
  end_kernel(engine_->unit.finish());
}

void TpcCore::end_kernel(bool ok) {
  if (trace_ && !replaying_) {
    // What is left: bundles without memory access at the end of the tile. A tile that failed
    // stays incomplete, never replayed.
    trace_->bundles = quiet_bundles_;
    trace_->slot_ops = engine_->executor.slot_ops();
    trace_->complete = ok;
    tile_cache().events += trace_->events.size();
  }
  error_ = !ok;
  const core::TimePs end =
      std::max(ok ? engine_->timer.end_time() : core::now_ps(), core::now_ps());
  core::TimePs done = end;
  if (ok && current_->sync_address != 0) {
    std::uint8_t message[4];
    std::memcpy(message, &current_->sync_message, 4);
    if (!transfer(tlm::TLM_WRITE_COMMAND, current_->sync_address, message, 4, end, done)) {
      raise(core::ErrorEvent::Kind::kAddressError, current_->sync_address,
            fmt::format("the kernel's sync object at {:#x} could not be written",
                        current_->sync_address));
      error_ = true;
    }
  }
  stats_.kernels.add();
  if (error_) stats_.failed.add();
  stats_.bundles.add(engine_->timer.bundles());
  const std::array<std::uint64_t, kSlotCount> ops =
      replaying_ ? trace_->slot_ops : engine_->executor.slot_ops();
  stats_.load_ops.add(ops[static_cast<int>(Slot::kLoad)]);
  stats_.spu_ops.add(ops[static_cast<int>(Slot::kSpu)]);
  stats_.vpu_ops.add(ops[static_cast<int>(Slot::kVpu)]);
  stats_.store_ops.add(ops[static_cast<int>(Slot::kStore)]);
  stats_.load_stall_ps.add(engine_->timer.load_stall());
  stats_.store_stall_ps.add(engine_->timer.store_stall());
  core::event_queue().schedule(std::max(done, core::now_ps()), *this, kEnd);
}

void TpcCore::finish() {
  stats_.busy_ps.add(core::now_ps() - kernel_start_);
  account(fmt::format("kernel {}", current_->kernel_id), kernel_start_, core::now_ps(), [this] {
    return nlohmann::json{
        {"bundles", engine_->timer.bundles()}, {"ok", !error_}, {"reused", replaying_}};
  });
  current_.reset();
  job_done();
}

// ---------------------------------------------------------------- tile reuse

// The address of a tensor's element at the slice's first index-space point (the tile's origin),
// by the access scale its launch declared.
std::uint64_t TpcCore::tile_origin(int tensor) const {
  const TensorDescriptor& d = current_->state.tensors[static_cast<std::size_t>(tensor)];
  std::uint64_t element = 0;
  for (int dim = 0; dim < kMaxDims; ++dim) {
    const auto i = static_cast<std::size_t>(dim);
    element += static_cast<std::uint64_t>(current_->state.slice_start[i]) *
               static_cast<std::uint64_t>(current_->scale[static_cast<std::size_t>(tensor)][i]) *
               (dim < d.dims ? d.stride[i] : 0);
  }
  return d.base + element * info(d.dtype).bytes;
}

// Tiles are identical when the kernel, its arguments, the slice's extent, every tensor's shape
// and the alignment of its origin agree, and when the tile lies inside every tensor with room
// for the bursts a stream prefetches (so that no access is clipped): their accesses are then
// the same, shifted by each tensor's origin. nullopt: execute this tile.
std::optional<std::string> TpcCore::reuse_key() const {
  if (!config_.tile_reuse || functional_) return std::nullopt;
  const Launch& l = *current_;
  std::string key(reinterpret_cast<const char*>(&l.program), sizeof(l.program));
  const auto add = [&key](const void* p, std::size_t n) {
    key.append(static_cast<const char*>(p), n);
  };
  add(l.state.srf.data(), sizeof(l.state.srf));
  for (int dim = 0; dim < kMaxDims; ++dim) {
    const auto i = static_cast<std::size_t>(dim);
    const std::int32_t extent = l.state.slice_end[i] - l.state.slice_start[i];
    add(&extent, sizeof extent);
  }
  const std::uint64_t margin =
      config_.read_burst.bytes * static_cast<std::uint64_t>(config_.prefetch + 1);
  bool any = false;
  for (int t = 0; t < kMaxTensors; ++t) {
    const TensorDescriptor& d = l.state.tensors[static_cast<std::size_t>(t)];
    const Coord& scale = l.scale[static_cast<std::size_t>(t)];
    if (d.base == 0 && d.dims <= 1 && d.size[0] == 0) continue;  // unused
    bool declared = false;
    for (int dim = 0; dim < kMaxDims; ++dim)
      declared = declared || scale[static_cast<std::size_t>(dim)] != 0;
    if (!declared) return std::nullopt;  // a gather, or a launch that said nothing
    any = true;
    // The tile's box in this tensor must lie inside it.
    for (int dim = 0; dim < d.dims; ++dim) {
      const auto i = static_cast<std::size_t>(dim);
      const std::int64_t hi = static_cast<std::int64_t>(l.state.slice_end[i]) * scale[i];
      if (hi > static_cast<std::int64_t>(d.size[i])) return std::nullopt;
    }
    // Its last element (a dimension the index does not advance is spanned whole), with room
    // after it for the bursts a stream prefetches.
    std::uint64_t last = 0;
    for (int dim = 0; dim < d.dims; ++dim) {
      const auto i = static_cast<std::size_t>(dim);
      const std::uint64_t end =
          scale[i] ? static_cast<std::uint64_t>(l.state.slice_end[i]) * scale[i] : d.size[i];
      last += (std::min<std::uint64_t>(end, d.size[i]) - 1) * d.stride[i];
    }
    if ((last + 1) * info(d.dtype).bytes + margin > d.span_bytes()) return std::nullopt;
    const std::uint64_t origin = tile_origin(t);
    const std::uint64_t alignment = origin % config_.read_burst.bytes;
    add(&d.dtype, sizeof d.dtype);
    add(&d.dims, sizeof d.dims);
    add(d.size.data(), sizeof d.size);
    add(d.stride.data(), sizeof d.stride);
    add(&d.padding, sizeof d.padding);
    add(scale.data(), sizeof scale);
    add(&alignment, sizeof alignment);
  }
  if (!any) return std::nullopt;
  return key;
}

// ---------------------------------------------------------------- memory

bool TpcCore::transfer(tlm::tlm_command command, std::uint64_t address, std::uint8_t* data,
                       std::uint32_t bytes, core::TimePs at, core::TimePs& done) {
  return core::bulk_transfer(memory_socket, trans_, command, address, data, bytes,
                             std::max(at, core::now_ps()), done);
}

bool TpcCore::read(std::uint64_t address, std::uint8_t* data, std::uint32_t bytes, core::TimePs at,
                   core::TimePs& done) {
  stats_.bytes_read.add(bytes);
  return transfer(tlm::TLM_READ_COMMAND, address, data, bytes, at, done);
}

bool TpcCore::write(std::uint64_t address, const std::uint8_t* data, std::uint32_t bytes,
                    core::TimePs at, core::TimePs& done) {
  stats_.bytes_written.add(bytes);
  return transfer(tlm::TLM_WRITE_COMMAND, address, const_cast<std::uint8_t*>(data), bytes, at,
                  done);
}

}  // namespace podsim::tpc
