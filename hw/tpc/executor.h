// What a TPC computes: the architectural state of one core (vector, scalar, index and predicate
// registers, vector and scalar local memory, hardware loops) and the execution of a kernel
// bundle by bundle with the exposed pipeline of the public TPC: every slot reads its operands
// when the bundle issues and its result becomes visible `latency` bundles later (isa.yaml), so a
// program that reads too early gets the old value, as the hardware would. A checking mode
// reports every such early read. Global memory is reached through tensor descriptors (up to
// five dimensions, strides in elements, out-of-bounds reads giving the padding value and
// out-of-bounds writes dropped) and a GlobalAccess the caller provides (the core's tensor access
// unit, or plain memory in tests).
// Captures: the full semantics of every operation in the ISA table, predication by scalar
// predicates and by lane masks, the index space the core starts with. Ignores: time (the
// caller's PipelineTimer turns each bundle's accesses into cycles), stalls (they never change a
// result: latencies count bundles issued, not cycles).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/tpc/isa.h"
#include "hw/tpc/vpu.h"

namespace podsim::tpc {

inline constexpr int kMaxDims = 5;
inline constexpr int kMaxTensors = 16;
inline constexpr int kLoopDepth = 4;

using Coord = std::array<std::int32_t, kMaxDims>;

// One tensor as a kernel sees it: where it is, its element type, sizes and strides (elements),
// and what out-of-bounds reads give.
struct TensorDescriptor {
  std::uint64_t base = 0;
  Dtype dtype = Dtype::kF32;
  int dims = 1;
  std::array<std::uint32_t, kMaxDims> size{};
  std::array<std::uint64_t, kMaxDims> stride{};  // elements between neighbours along each dim
  std::uint32_t padding = 0;                     // the padding element's bits

  // Dense row-major (dimension 0 fastest) with these sizes.
  static TensorDescriptor dense(std::uint64_t base, Dtype dtype, std::vector<std::uint32_t> sizes,
                                std::uint32_t padding = 0);
  std::uint64_t elements() const;
  // Bytes from the first element to one past the last (0 when any size is 0).
  std::uint64_t span_bytes() const;
  // Why the descriptor cannot be used, or nullopt.
  std::optional<std::string> problem() const;
};

// The launch a core runs: its kernel, tensors, scalar arguments and slice of the index space.
struct LaunchState {
  std::array<TensorDescriptor, kMaxTensors> tensors{};
  std::array<std::uint32_t, 32> srf{};  // s0..s31 at start
  Coord slice_start{};                  // i0
  Coord slice_end{};                    // i1 (exclusive)
};

// Global memory as the executor reaches it. Loads and stores name contiguous byte runs; the
// executor splits vector accesses into runs (a strided dimension 0 gives one run per element).
class GlobalAccess {
 public:
  virtual ~GlobalAccess() = default;
  // Fills `data`; false when the address is not mapped (the kernel then stops with an error).
  virtual bool load(int tensor, std::uint64_t address, std::uint8_t* data, std::uint32_t bytes) = 0;
  virtual bool store(int tensor, std::uint64_t address, const std::uint8_t* data,
                     std::uint32_t bytes) = 0;
  virtual void fence() = 0;
};

// A read that came too early: the register still had its old value.
struct Hazard {
  std::uint32_t pc = 0;
  Slot slot = Slot::kLoad;
  std::string reg;  // e.g. "v3"
};

struct ExecutorConfig {
  std::uint32_t vlm_bytes = 80 * 1024;
  std::uint32_t slm_bytes = 1024;
  bool check_hazards = false;
  // false (timing-only runs): vector values are not computed, loaded or converted. No path leads
  // from a vector register to a scalar, index or predicate register or to an address, so
  // nothing but the vector values themselves changes (tests/tpc/executor_test.cpp holds every
  // kernel's timing to that).
  bool vector_data = true;
  // The core's generation: the kernel binaries it takes (run_functional picks them by it).
  Generation generation = Generation::kGaudi2;
};

// A kernel decoded once for every core that runs it: each slot's operation, operands and
// datapath function, ready to execute.
class Program {
 public:
  // `bundles` must have passed check_bundle; labels are checked here (throws
  // std::invalid_argument naming the bundle).
  // Its results become visible after `generation`'s latencies (isa.yaml), the generation the
  // bundles were scheduled for.
  Program(const std::vector<Bundle>& bundles, Generation generation);
  // A kernel binary (serialize_binary), decoded for the generation its header names.
  explicit Program(const std::vector<std::uint8_t>& binary);
  ~Program();
  std::uint32_t size() const { return bundle_count_; }
  Generation generation() const { return generation_; }

 private:
  friend class Executor;
  struct Decoded;
  std::vector<Decoded> ops_;  // four per bundle
  std::uint32_t bundle_count_ = 0;
  Generation generation_ = Generation::kGaudi2;
};

class Executor {
 public:
  enum class State { kRunning, kHalted, kFailed };

  // The executor keeps a reference to `access`.
  Executor(const ExecutorConfig& config, GlobalAccess& access);
  ~Executor();

  // VPU operations go to `datapath` first (nullptr: the C++ functions alone).
  void set_datapath(VectorDatapath* datapath) { datapath_ = datapath; }
  // Starts `program` from bundle 0 with fresh registers and local memories.
  void start(std::shared_ptr<const Program> program, const LaunchState& launch);
  // Issues one bundle. Returns the state after it.
  State step();
  State state() const { return state_; }
  const std::string& error() const { return error_; }
  std::uint32_t pc() const { return pc_; }
  std::uint64_t bundles_issued() const { return issued_; }
  // Instructions issued in each slot (load, SPU, VPU, store) since start(): what an ideal
  // schedule would pack, the busiest slot bounding the bundles.
  const std::array<std::uint64_t, kSlotCount>& slot_ops() const { return slot_ops_; }
  const std::vector<Hazard>& hazards() const { return hazards_; }

  // Architectural state as software would inspect it after a run (tests).
  const Vector& vreg(int r) const;
  std::uint32_t sreg(int r) const { return sregs_[static_cast<std::size_t>(r)]; }
  const Coord& ireg(int r) const { return iregs_[static_cast<std::size_t>(r)]; }
  bool spred(int r) const { return spreds_[static_cast<std::size_t>(r)]; }
  const VMask& vpred(int r) const { return vpreds_[static_cast<std::size_t>(r)]; }

  // The bundle count after which every operation's result is visible.
  static constexpr int kMaxLatency = 15;

 private:
  using Decoded = Program::Decoded;
  // A write on its way to a register. Kept small: most writes are scalars and whole vectors,
  // and every bundle queues a few. An index or mask value waits beside it, in its slot's payloads.
  struct Pending {
    std::uint8_t file = 0;
    std::uint8_t reg = 0;
    std::uint8_t lane_bytes = 0;  // vectors: 0 for a whole write, else the lane width of the mask
    bool flag = false;
    std::uint16_t payload = 0;  // an index or mask: its place in the slot's payloads
    std::uint32_t value = 0;    // the scalar, or a vector's physical register
  };
  // The writes due at one issue count, in the order they were issued.
  struct DueSlot {
    std::vector<Pending> writes;
    std::vector<Coord> indices;
    std::vector<VMask> masks;
    void clear() {
      writes.clear();
      indices.clear();
      masks.clear();
    }
  };
  struct Loop {
    std::uint32_t start, end;  // the body: start .. end inclusive
    std::uint8_t reg;
    std::int32_t limit, step;
  };

  void commit_due();
  // The slot of writes due `latency` bundles from now (and the hazard check's record of it).
  DueSlot& schedule_write(int file, std::uint8_t reg, int latency);
  void queue_scalar(int file, std::uint8_t reg, std::uint32_t value, bool flag, int latency);
  void execute(const Decoded& op);
  void execute_load(const Decoded& op);
  void execute_spu(const Decoded& op);
  void execute_vpu(const Decoded& op);
  void compute(const Decoded& op, const VpuArgs& args);
  void execute_store(const Decoded& op);
  void end_bundle(std::uint32_t issued_pc);
  void drain();
  void fail(const std::string& message);

  // Operand reads (with hazard checks).
  const Vector& read_v(int r, Slot slot);
  std::uint32_t read_s(int r, Slot slot);
  const Coord& read_i(int r, Slot slot);
  const VMask& read_vp(int r, Slot slot);
  bool read_sp(int r, Slot slot);
  std::uint32_t read_b_scalar(const Decoded& op);
  const Vector& read_b_vector(const Decoded& op, Vector& scratch);
  void check_read(int file, int r, Slot slot);
  // Lanes a vector predicate enables for a write (all when none); nullopt: no lane.
  bool predicate_passes(const Decoded& op, VMask& lanes);

  // Writes, committed `latency` bundles from now.
  void write_v(const Decoded& op, const Vector& value, const VMask* lanes, int lane_bytes);
  Vector& new_vector(const Decoded& op, int& phys);
  void write_v_phys(const Decoded& op, int phys, const VMask* lanes, int lane_bytes);
  void write_s(const Decoded& op, std::uint32_t value);
  void advance(const Decoded& op, std::uint32_t address);
  void write_i(const Decoded& op, const Coord& value);
  void write_vp(const Decoded& op, const VMask& value);
  void write_sp(const Decoded& op, bool value);

  // Global memory through tensors.
  void load_tensor(const Decoded& op, Vector& out);
  void store_tensor(const Decoded& op, const Vector& value);
  bool access_element(bool store, int tensor, const Coord& at, std::uint8_t* element);
  bool in_bounds(const TensorDescriptor& t, const Coord& at) const;
  std::uint64_t address_of(const TensorDescriptor& t, const Coord& at) const;

  // Local memories.
  bool local_range(std::uint32_t address, std::uint32_t bytes, std::uint32_t size,
                   const char* what);

  ExecutorConfig config_;
  GlobalAccess& access_;
  std::shared_ptr<const Program> program_;
  VectorDatapath* datapath_ = nullptr;

  State state_ = State::kHalted;
  std::string error_;
  std::uint32_t pc_ = 0, next_pc_ = 0;
  std::uint64_t issued_ = 0;
  std::array<std::uint64_t, kSlotCount> slot_ops_{};

  LaunchState launch_;
  std::vector<Vector> vphys_;  // physical vector registers: architectural ones and writes in flight
  std::vector<int> vfree_;
  std::array<int, kVRegisters> vmap_{};
  std::array<std::uint32_t, kSRegisters> sregs_{};
  std::array<Coord, kIRegisters> iregs_{};
  std::array<VMask, kVpRegisters> vpreds_{};
  std::array<bool, kSpRegisters> spreds_{};
  std::vector<std::uint8_t> vlm_, slm_;
  std::array<Loop, kLoopDepth> loops_{};
  int loop_depth_ = 0;

  std::array<DueSlot, kMaxLatency + 1> pending_;
  Vector scratch_;  // timing-only runs: where vector results go
  // Per register file, the issue count at which each register's newest write lands (checking).
  std::array<std::array<std::uint64_t, 64>, 5> ready_at_{};
  std::vector<Hazard> hazards_;
};

}  // namespace podsim::tpc
