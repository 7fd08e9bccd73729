#include "synapse/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/dynamic_bitset.hpp>
#include <map>
#include <stdexcept>

#include "drm/habanalabs_accel.h"
#include "hw/chip/resources.h"
#include "hw/chip/spec/sync_values.h"
#include "hw/mme/mme_registers.h"
#include "hw/mme/schedule.h"
#include "hw/tpc/kernels/functional.h"
#include "hw/tpc/tpc_registers.h"
#include "podsim/spec/gaudi1.h"
#include "synapse/fusion.h"
#include "synapse/ordering.h"

namespace podsim::synapse {
namespace {

constexpr std::uint64_t kAlign = 256;
// Relocatable addresses are offsets below 2^40 in their section: the second placement moves
// section s by (s + 1) << 40, which changes only the high register of each address.
constexpr int kSectionShift = 40;
constexpr int kEngineClasses = 3;

std::uint64_t align(std::uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// The runtime's stream of the target's engine.
std::uint32_t queue_of(const Target& target, driver::EngineKind kind, int index) {
  return driver::QueueMap::of(target.device_id).queue_id({kind, index}, target.stream);
}

// A node writes its outputs and its scratch buffers (which are in no read list).
bool writes(const Node& n, std::uint32_t id) {
  const auto t = static_cast<TensorId>(id);
  return std::find(n.writes.begin(), n.writes.end(), t) != n.writes.end() ||
         std::find(n.reads.begin(), n.reads.end(), t) == n.reads.end();
}

Engine engine_of(const Node& n) {
  return n.kind == NodeKind::kMme      ? Engine::kMme
         : n.kind == NodeKind::kKernel ? Engine::kTpc
                                       : Engine::kDma;
}

// One stage before encoding: which node, and which of its launches (kernel nodes).
struct Pending {
  std::size_t node = 0;
  int launch = 0;
  Engine engine = Engine::kTpc;
  std::vector<std::uint32_t> waits;
};

class Compiler {
 public:
  Compiler(const Graph& graph, const Target& target) : graph_(graph), target_(target) {}
  Recipe run();

 private:
  void fuse();
  void lower();
  std::vector<std::vector<std::size_t>> hazards() const;
  void order();
  void schedule();
  void place();
  void encode();
  std::uint64_t address(std::uint32_t tensor, int variant) const;
  std::uint32_t section(std::uint32_t tensor) const;
  std::uint64_t binary_address(const std::string& key, int variant);
  EngineJob relocate(std::uint32_t queue, std::vector<core::RegisterRun> fixed,
                     const std::vector<core::RegisterRun>& moved, std::uint32_t execute) const;
  void encode_kernel(const Pending& p, Stage& stage);
  void encode_mme(const Pending& p, Stage& stage);
  void encode_copy(const Pending& p, Stage& stage);

  const Graph& graph_;
  const Target& target_;
  Recipe recipe_;
  std::vector<Node> nodes_;              // the graph's, fused chains replaced
  std::map<std::size_t, Fusion> fused_;  // by index in nodes_
  std::map<std::string, std::vector<std::uint8_t>> generated_;  // binaries the compiler wrote
  std::vector<tpc::KernelPlan> plans_;                          // by node (kernel nodes)
  std::vector<std::vector<std::uint32_t>> buffers_;  // by node: recipe tensor per plan buffer
  std::vector<std::vector<std::uint32_t>> touched_;  // by node: every tensor it reads or writes
  std::vector<mme::MmeOperation> mme_ops_;           // by node (MME nodes): with its geometry
  std::vector<Pending> stages_;
  std::map<std::string, std::size_t> binaries_;  // key -> index in recipe_.program
};

std::uint32_t Compiler::section(std::uint32_t tensor) const {
  const RecipeTensor& t = recipe_.tensors[tensor];
  if (!t.persistent) return kWorkspaceSection;
  const auto it = std::find(recipe_.persistent.begin(), recipe_.persistent.end(), tensor);
  return kFirstTensorSection + static_cast<std::uint32_t>(it - recipe_.persistent.begin());
}

std::uint64_t Compiler::address(std::uint32_t tensor, int variant) const {
  const std::uint64_t base =
      variant == 0 ? 0 : static_cast<std::uint64_t>(section(tensor) + 1) << kSectionShift;
  return base + recipe_.tensors[tensor].offset;
}

// 0. Element-wise chains become one kernel each (fusion.h).
void Compiler::fuse() {
  const std::vector<Node>& nodes = graph_.nodes();
  std::vector<Fusion> fusions =
      target_.fuse ? find_fusions(graph_, target_.generation) : std::vector<Fusion>{};
  std::size_t next = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (next < fusions.size() && fusions[next].first == i) {
      Fusion& f = fusions[next++];
      recipe_.notes.push_back(fmt::format("fused {} into one TPC launch", f.node.name));
      if (!f.binary.empty()) generated_[f.plan.launches[0].binary] = f.binary;
      nodes_.push_back(f.node);
      i = f.last;
      fused_.emplace(nodes_.size() - 1, std::move(f));
      continue;
    }
    nodes_.push_back(nodes[i]);
  }
}

// 1. The graph's tensors keep their indices; scratch buffers follow as workspace tensors.
void Compiler::lower() {
  for (const Tensor& t : graph_.tensors()) {
    const bool persistent = t.kind == TensorKind::kPersistent;
    recipe_.tensors.push_back(RecipeTensor{t.name, t.dtype, t.shape, persistent, 0, t.bytes()});
    if (persistent)
      recipe_.persistent.push_back(static_cast<std::uint32_t>(recipe_.tensors.size() - 1));
  }
  const auto& nodes = nodes_;
  plans_.resize(nodes.size());
  buffers_.resize(nodes.size());
  touched_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    for (TensorId id : n.reads) touched_[i].push_back(static_cast<std::uint32_t>(id));
    for (TensorId id : n.writes) touched_[i].push_back(static_cast<std::uint32_t>(id));
    if (n.kind != NodeKind::kKernel) continue;
    const auto fused = fused_.find(i);
    plans_[i] = fused != fused_.end() ? fused->second.plan : tpc::plan_kernel(n.kernel);
    std::size_t next = 0;
    for (const tpc::BufferSpec& b : plans_[i].buffers) {
      if (b.role != tpc::BufferSpec::Role::kScratch) {
        buffers_[i].push_back(static_cast<std::uint32_t>(n.operands[next++]));
        continue;
      }
      recipe_.tensors.push_back(
          RecipeTensor{n.name + "." + b.name, b.dtype, b.dims, false, 0, b.bytes()});
      buffers_[i].push_back(static_cast<std::uint32_t>(recipe_.tensors.size() - 1));
      touched_[i].push_back(buffers_[i].back());
    }
  }
}

// The earlier nodes each node must follow, in the current order: the last writer of what it
// reads, the last writer and the readers since of what it writes. Throws std::invalid_argument
// for a workspace tensor read before any node writes it.
std::vector<std::vector<std::size_t>> Compiler::hazards() const {
  std::vector<std::vector<std::size_t>> after(nodes_.size());
  std::vector<int> last_writer(recipe_.tensors.size(), -1);
  std::vector<std::vector<std::size_t>> readers(recipe_.tensors.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    std::vector<std::size_t>& a = after[i];
    for (TensorId id : n.reads) {
      const int w = last_writer[static_cast<std::size_t>(id)];
      if (w < 0 && graph_.tensor(id).kind == TensorKind::kWorkspace) {
        throw std::invalid_argument(
            fmt::format("node {}: reads workspace tensor {} before any node writes it", n.name,
                        graph_.tensor(id).name));
      }
      if (w >= 0) a.push_back(static_cast<std::size_t>(w));
    }
    for (std::uint32_t id : touched_[i]) {
      if (!writes(n, id)) continue;
      if (last_writer[id] >= 0) a.push_back(static_cast<std::size_t>(last_writer[id]));
      a.insert(a.end(), readers[id].begin(), readers[id].end());
    }
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    for (TensorId id : n.reads) readers[static_cast<std::size_t>(id)].push_back(i);
    for (std::uint32_t id : touched_[i]) {
      if (!writes(n, id)) continue;
      last_writer[id] = static_cast<int>(i);
      readers[id].clear();
    }
  }
  return after;
}

// 3. Stages in the issue order with their waits, pruned to the latest stage of each engine class.
void Compiler::schedule() {
  const auto& nodes = nodes_;
  const std::vector<std::vector<std::size_t>> after = hazards();
  std::vector<int> last_stage(nodes.size(), -1);  // by node
  std::array<int, kEngineClasses> last_of{-1, -1, -1};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const Engine engine = engine_of(n);
    std::vector<int> deps{last_of[static_cast<int>(engine)]};
    for (std::size_t j : after[i]) deps.push_back(last_stage[j]);
    const int launches =
        n.kind == NodeKind::kKernel ? static_cast<int>(plans_[i].launches.size()) : 1;
    for (int l = 0; l < launches; ++l) {
      Pending p{i, l, engine, {}};
      std::array<int, kEngineClasses> latest{-1, -1, -1};
      for (int d : deps) {
        if (d < 0) continue;
        int& slot = latest[static_cast<int>(stages_[static_cast<std::size_t>(d)].engine)];
        slot = std::max(slot, d);
      }
      for (int d : latest) {
        if (d >= 0) p.waits.push_back(static_cast<std::uint32_t>(d));
      }
      std::sort(p.waits.begin(), p.waits.end());
      stages_.push_back(std::move(p));
      deps = {static_cast<int>(stages_.size() - 1)};  // later launches follow the first
    }
    last_stage[i] = static_cast<int>(stages_.size() - 1);
    last_of[static_cast<int>(engine)] = last_stage[i];
  }
  if (stages_.size() > target_.sobs) {
    throw std::invalid_argument(
        fmt::format("the graph compiles to {} stages; the device leaves {} "
                    "sync objects to user space (one per stage)",
                    stages_.size(), target_.sobs));
  }
}

// 4. Workspace tensors first-fit, sharing bytes only with tensors whose every user has ended
// (by the stage graph) before their own first user starts.
void Compiler::place() {
  const std::size_t n = stages_.size();
  std::vector<boost::dynamic_bitset<>> before(n, boost::dynamic_bitset<>(n));
  for (std::size_t k = 0; k < n; ++k) {
    for (std::uint32_t w : stages_[k].waits) {
      before[k] |= before[w];
      before[k].set(w);
    }
  }
  std::vector<std::vector<std::size_t>> users(recipe_.tensors.size());
  for (std::size_t k = 0; k < n; ++k) {
    for (std::uint32_t id : touched_[stages_[k].node]) users[id].push_back(k);
  }
  struct Block {
    std::uint64_t offset, bytes;
    std::uint32_t tensor;
  };
  std::vector<Block> blocks;
  std::vector<std::uint32_t> order;
  for (std::uint32_t id = 0; id < recipe_.tensors.size(); ++id) {
    RecipeTensor& t = recipe_.tensors[id];
    if (t.persistent) continue;
    if (users[id].empty()) {
      t.bytes = 0;  // nothing uses it (a fused chain's intermediate): it takes no memory
      continue;
    }
    order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return users[a][0] < users[b][0]; });
  for (std::uint32_t id : order) {
    const std::size_t first = users[id][0];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;
    for (const Block& b : blocks) {
      const bool dead = std::all_of(users[b.tensor].begin(), users[b.tensor].end(),
                                    [&](std::size_t u) { return before[first].test(u); });
      if (!dead) taken.emplace_back(b.offset, b.offset + b.bytes);
    }
    std::sort(taken.begin(), taken.end());
    const std::uint64_t bytes = align(recipe_.tensors[id].bytes);
    std::uint64_t at = 0;
    for (const auto& [begin, end] : taken) {
      if (at + bytes <= begin) break;
      at = std::max(at, end);
    }
    blocks.push_back(Block{at, bytes, id});
    recipe_.tensors[id].offset = at;
    recipe_.workspace_bytes = std::max(recipe_.workspace_bytes, at + bytes);
  }
  if (recipe_.workspace_bytes >= (1ull << kSectionShift))
    throw std::invalid_argument(
        fmt::format("the workspace needs {} bytes, beyond 1 TiB", recipe_.workspace_bytes));
}

std::uint64_t Compiler::binary_address(const std::string& key, int variant) {
  auto it = binaries_.find(key);
  if (it == binaries_.end()) {
    const auto generated = generated_.find(key);
    KernelBinary b{key, recipe_.program_bytes,
                   generated != generated_.end() ? generated->second
                                                 : tpc::kernel_binary(key, target_.generation)};
    recipe_.program_bytes = align(recipe_.program_bytes + b.code.size());
    it = binaries_.emplace(key, recipe_.program.size()).first;
    recipe_.program.push_back(std::move(b));
  }
  const std::uint64_t base =
      variant == 0 ? 0 : static_cast<std::uint64_t>(kProgramSection + 1) << kSectionShift;
  return base + recipe_.program[it->second].offset;
}

// The words that differ between the two placements are the high halves of addresses, moved
// by (section + 1) << 40; their low halves sit just before them.
EngineJob Compiler::relocate(std::uint32_t queue, std::vector<core::RegisterRun> fixed,
                             const std::vector<core::RegisterRun>& moved,
                             std::uint32_t execute) const {
  EngineJob job;
  job.queue = queue;
  job.execute = execute;
  for (std::uint32_t r = 0; r < fixed.size(); ++r) {
    const auto& a = fixed[r].values;
    const auto& b = moved.at(r).values;
    for (std::uint32_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i]) continue;
      const std::uint32_t shift = b[i] - a[i];
      const std::uint32_t section = (shift >> (kSectionShift - 32)) - 1;
      if (i == 0 || shift % (1u << (kSectionShift - 32)) != 0 ||
          static_cast<std::uint64_t>(section + 1) << (kSectionShift - 32) != shift) {
        throw std::logic_error(fmt::format(
            "register {:#x} moves by {:#x} between placements: not an address's high half",
            fixed[r].offset + 4 * i, shift));
      }
      job.relocations.push_back(Relocation{r, i - 1, section});
    }
  }
  job.registers = std::move(fixed);
  return job;
}

void Compiler::encode_kernel(const Pending& p, Stage& stage) {
  const tpc::KernelPlan& plan = plans_[p.node];
  const tpc::LaunchSpec& launch = plan.launches[static_cast<std::size_t>(p.launch)];
  const std::vector<tpc::Slice> slices = tpc::partition(launch.index_space, target_.tpcs);
  const auto k = static_cast<std::uint32_t>(&stage - recipe_.stages.data());
  stage.flops = plan.flops / static_cast<double>(plan.launches.size());
  for (std::size_t t = 0; t < slices.size(); ++t) {
    std::array<std::vector<core::RegisterRun>, 2> image;
    for (int v = 0; v < 2; ++v) {
      std::vector<std::uint64_t> addresses;
      for (std::uint32_t id : buffers_[p.node]) addresses.push_back(address(id, v));
      tpc::KernelRegisters regs;
      regs.state = tpc::launch_state(launch, addresses, slices[t]);
      regs.access_scale = launch.access_scale;
      regs.binary = binary_address(launch.binary, v);
      regs.sync_object = sob_address(recipe_.first_sob + k);
      regs.sync_message = chip::spec::encode_sob_write({1, true, false});
      regs.kernel_id = k;
      image[static_cast<std::size_t>(v)] = tpc::register_image(regs);
    }
    stage.jobs.push_back(relocate(queue_of(target_, driver::EngineKind::kTpc, static_cast<int>(t)),
                                  std::move(image[0]), image[1],
                                  PODSIM_GAUDI1_TPC_CFG_TPC_EXECUTE_OFFSET));
  }
}

// The implicit GEMM's rows dealt out to the MMEs in whole array tiles, each engine's share
// starting at `share` * e.
std::uint64_t mme_share(std::uint64_t rows, std::uint64_t tile_rows, std::uint64_t engines) {
  return (rows + tile_rows * engines - 1) / (tile_rows * engines) * tile_rows;
}

// How the engines share an operation: by rows in whole tiles, or, when its rows fill fewer
// tiles than there are engines and its columns fill more (a weight gradient of 64 filters), by
// columns, so that no engine idles while another computes the whole result.
struct MmeSplit {
  bool by_columns = false;
  std::uint64_t size = 0, share = 0;  // the dimension shared, and each engine's part of it
  std::uint64_t parts() const { return (size + share - 1) / share; }
};

MmeSplit mme_split(const mme::MmeConfig& tile, const mme::GemmView& v, std::uint64_t engines) {
  const auto rows = static_cast<std::uint64_t>(tile.rows),
             cols = static_cast<std::uint64_t>(tile.cols);
  const std::uint64_t row_tiles = (v.m() + rows - 1) / rows, col_tiles = (v.n() + cols - 1) / cols;
  if (row_tiles < engines && col_tiles > row_tiles)
    return {true, v.n(), mme_share(v.n(), cols, engines)};
  return {false, v.m(), mme_share(v.m(), rows, engines)};
}

// Engine e's part of `op` under `split`.
mme::MmeOperation mme_part(mme::MmeOperation op, const MmeSplit& split, std::uint64_t e) {
  const auto start = static_cast<std::uint32_t>(split.share * e);
  const auto count =
      static_cast<std::uint32_t>(std::min(split.share, split.size - split.share * e));
  if (split.by_columns) {
    op.n_start = start;
    op.n_count = count;
  } else {
    op.m_start = start;
    op.m_count = count;
  }
  return op;
}

// The MME's geometry for `op`: of the output tiles the target's arrays form, the one whose
// rows dealt out to the engines take the fewest array cycles (the MME's own closed form), the
// array's own shape on a tie. A narrow result (a convolution of 64 filters) takes a tall tile,
// a short one a wide tile.
mme::MmeOperation with_geometry(const mme::MmeConfig& array, std::uint64_t engines,
                                mme::MmeOperation op) {
  const mme::GemmView view(op);
  const auto cycles = [&](const mme::MmeOperation& o) {
    const mme::MmeConfig c = mme::shaped(array, o);
    const MmeSplit split = mme_split(c, view, engines);
    std::uint64_t slowest = 0;
    for (std::uint64_t e = 0; e < split.parts(); ++e) {
      const mme::MmeOperation part = mme_part(o, split, e);
      slowest = std::max(slowest, mme::analytic_cycles(c, mme::GemmView(part), o.in));
    }
    return slowest;
  };
  mme::MmeOperation best = op;
  best.tall = best.wide = 0;
  std::uint64_t best_cycles = cycles(best);
  for (std::uint8_t g = 1; g <= 3; ++g) {
    for (const bool tall : {true, false}) {
      mme::MmeOperation o = op;
      o.tall = tall ? g : 0;
      o.wide = tall ? 0 : g;
      if (mme::geometry_problem(array, o)) continue;
      const std::uint64_t c = cycles(o);
      if (c < best_cycles) {
        best = o;
        best_cycles = c;
      }
    }
  }
  return best;
}

// The target's array as the MME stack knows it: its shape and the tiles its cells form.
mme::MmeConfig array_of(const Target& target) {
  mme::MmeConfig array;
  array.rows = static_cast<int>(target.mme_rows);
  array.cols = static_cast<int>(target.mme_cols);
  array.min_tile_side = static_cast<int>(target.mme_min_tile_side);
  return array;
}

// 2. Each MME node's geometry, then the nodes in the list schedule's order (ordering.h) on
// estimated durations: an MME node's slowest engine by the closed form, a kernel's bytes at
// HBM's bandwidth or its arithmetic at the TPCs' (whichever is longer), a copy's bytes read and
// written. Dependencies as the stages will have them (by tensor, in program order).
void Compiler::order() {
  const std::size_t count = nodes_.size();
  const mme::MmeConfig array = array_of(target_);
  const auto engines = static_cast<std::uint64_t>(target_.mmes);
  const double tpc_flops_per_ns = target_.tpcs * 128.0 * target_.tpc_ghz;
  mme_ops_.assign(count, {});
  std::vector<OrderTask> tasks(count);
  const std::vector<std::vector<std::size_t>> after = hazards();
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = nodes_[i];
    OrderTask& t = tasks[i];
    t.engine = engine_of(n);
    if (t.engine == Engine::kMme) {
      const mme::MmeOperation op = mme_ops_[i] = with_geometry(array, engines, n.mme);
      const mme::MmeConfig c = mme::shaped(array, op);
      const MmeSplit split = mme_split(c, mme::GemmView(op), engines);
      std::uint64_t slowest = 0;
      for (std::uint64_t e = 0; e < split.parts(); ++e)
        slowest = std::max(slowest,
                           mme::analytic_cycles(c, mme::GemmView(mme_part(op, split, e)), op.in));
      t.ns = static_cast<double>(slowest) / target_.mme_ghz;
    } else if (t.engine == Engine::kTpc) {
      t.ns =
          std::max(plans_[i].min_bytes / target_.hbm_gb_per_s, plans_[i].flops / tpc_flops_per_ns);
    } else {
      t.ns =
          2.0 * static_cast<double>(recipe_.tensors[touched_[i][0]].bytes) / target_.hbm_gb_per_s;
    }
    t.after = after[i];
  }
  if (!target_.order) return;
  const std::vector<std::size_t> order = issue_order(tasks);
  const auto permute = [&](auto& by_node) {
    std::remove_reference_t<decltype(by_node)> out;
    out.reserve(count);
    for (std::size_t i : order) out.push_back(std::move(by_node[i]));
    by_node = std::move(out);
  };
  permute(nodes_);
  permute(plans_);
  permute(buffers_);
  permute(touched_);
  permute(mme_ops_);
  std::map<std::size_t, Fusion> fused;
  for (std::size_t k = 0; k < count; ++k) {
    const auto it = fused_.find(order[k]);
    if (it != fused_.end()) fused.emplace(k, std::move(it->second));
  }
  fused_ = std::move(fused);
}

void Compiler::encode_mme(const Pending& p, Stage& stage) {
  const Node& n = nodes_[p.node];
  const auto k = static_cast<std::uint32_t>(&stage - recipe_.stages.data());
  const mme::MmeConfig array = array_of(target_);
  const std::uint64_t engines = static_cast<std::uint64_t>(target_.mmes);
  const mme::MmeOperation& op = mme_ops_[p.node];
  const MmeSplit split = mme_split(mme::shaped(array, op), mme::GemmView(op), engines);
  stage.flops = op.flops();
  for (std::uint64_t e = 0; e < split.parts(); ++e) {
    std::array<std::vector<core::RegisterRun>, 2> image;
    for (int v = 0; v < 2; ++v) {
      mme::OperationRegisters regs;
      regs.op = mme_part(op, split, e);
      const auto operand = [&](int i, Dtype t) {
        return address(static_cast<std::uint32_t>(n.operands[static_cast<std::size_t>(i)]), v) +
               n.offsets[static_cast<std::size_t>(i)] * tpc::info(t).bytes;
      };
      regs.op.a = operand(0, n.mme.in);
      regs.op.b = operand(1, n.mme.in);
      regs.op.c = operand(2, n.mme.out);
      regs.sync_object = sob_address(recipe_.first_sob + k);
      regs.sync_message = chip::spec::encode_sob_write({1, true, false});
      image[static_cast<std::size_t>(v)] = mme::register_image(regs);
    }
    stage.jobs.push_back(relocate(queue_of(target_, driver::EngineKind::kMme, static_cast<int>(e)),
                                  std::move(image[0]), image[1],
                                  PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET));
  }
}

void Compiler::encode_copy(const Pending& p, Stage& stage) {
  const Node& n = nodes_[p.node];
  const auto src = static_cast<std::uint32_t>(n.operands[0]);
  const auto dst = static_cast<std::uint32_t>(n.operands[1]);
  EngineJob job;
  job.queue = queue_of(target_, driver::EngineKind::kDma, 2);
  job.src = SectionAddress{section(src), recipe_.tensors[src].offset};
  job.dst = SectionAddress{section(dst), recipe_.tensors[dst].offset};
  job.bytes = recipe_.tensors[src].bytes;
  stage.jobs.push_back(std::move(job));
}

void Compiler::encode() {
  recipe_.stages.reserve(stages_.size());
  for (const Pending& p : stages_) {
    recipe_.stages.push_back(Stage{nodes_[p.node].name, p.engine, {}, p.waits, 0});
    Stage& stage = recipe_.stages.back();
    switch (p.engine) {
      case Engine::kTpc:
        encode_kernel(p, stage);
        break;
      case Engine::kMme:
        encode_mme(p, stage);
        break;
      case Engine::kDma:
        encode_copy(p, stage);
        break;
    }
  }
}

Recipe Compiler::run() {
  if (graph_.nodes().empty()) throw std::invalid_argument("the graph has no nodes");
  if (target_.tpcs < 1 || target_.mmes < 1 || target_.mme_rows < 1 || target_.mme_cols < 1)
    throw std::invalid_argument("the target needs at least one TPC and one MME");
  recipe_.signature = graph_.signature();
  recipe_.device_id = target_.device_id;
  recipe_.first_sob = target_.first_sob;
  recipe_.first_monitor = target_.first_monitor;
  fuse();
  lower();
  order();
  schedule();
  place();
  encode();
  recipe_.fingerprint = fingerprint(recipe_);
  return std::move(recipe_);
}

}  // namespace

Target Target::of(std::uint32_t device_id) {
  Target t;
  t.device_id = driver::QueueMap::of(device_id).device_id();
  const bool gaudi2 = device_id == driver::kGaudi2DeviceId;
  t.mme_rows = t.mme_cols = gaudi2 ? 256 : 128;
  t.mme_ghz = t.tpc_ghz = gaudi2 ? 1.65 : 1.465;
  t.hbm_gb_per_s = gaudi2 ? 2450 : 1000;
  t.mme_min_tile_side = gaudi2 ? 128 : 0;
  t.generation =
      device_id == driver::kGaudi2DeviceId ? tpc::Generation::kGaudi2 : tpc::Generation::kGaudi;
  // The default table's runtime share, past what Linux's driver keeps [C1].
  const chip::ResourceShare& share = chip::default_resources().runtime;
  t.first_sob = GAUDI_FIRST_AVAILABLE_W_S_SYNC_OBJECT;
  t.first_monitor = GAUDI_FIRST_AVAILABLE_W_S_MONITOR;
  t.sobs = (share.first_sob + share.sobs - 1) % chip::kObjectsPerManager + 1 - t.first_sob;
  t.monitors = share.first_monitor + share.monitors - t.first_monitor;
  t.stream = share.stream(0);
  return t;
}

Recipe compile(const Graph& graph, const Target& target) { return Compiler(graph, target).run(); }

}  // namespace podsim::synapse
