#include "synapse/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/dynamic_bitset.hpp>
#include <map>
#include <numeric>
#include <optional>
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

// One stage before encoding: which node, and which of its launches (kernel nodes); a pipelined
// node's slice: the MME's rows [lo, hi), or the kernel's points [lo, hi) along the dimension its
// launch is split on (hi = 0: the whole node).
struct Pending {
  std::size_t node = 0;
  int launch = 0;
  Engine engine = Engine::kTpc;
  std::vector<std::uint32_t> waits;
  std::uint32_t lo = 0, hi = 0;
};

// A pipelined pair (pass 3): the MME node's result rows in slices, and the points of its
// consumer's launch that read each slice.
struct Pipe {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rows, points;
};

class Compiler {
 public:
  // `graph` as the earlier rewrites left it; `signature` the original's, which names the recipe.
  Compiler(const Graph& graph, const Target& target, std::string signature,
           std::vector<std::string> notes)
      : graph_(graph), target_(target) {
    recipe_.signature = std::move(signature);
    recipe_.notes = std::move(notes);
  }
  Recipe run();

 private:
  void fuse();
  void lower();
  std::vector<std::vector<std::size_t>> hazards() const;
  void order();
  void pipeline();
  std::optional<Pipe> pipe(std::size_t producer, std::size_t consumer) const;
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
  std::uint64_t copy_bytes(std::size_t node) const;  // what a copy node moves

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
  std::vector<double> estimates_;                    // by node: the ordering's duration (ns)
  std::map<std::size_t, Pipe> pipes_;                // by MME node: its pipelined slices
  std::map<std::size_t, std::size_t> piped_by_;      // by consumer: its MME node
  std::vector<Pending> stages_;
  std::map<std::string, std::size_t> binaries_;  // key -> index in recipe_.program
};

std::uint32_t Compiler::section(std::uint32_t tensor) const {
  const RecipeTensor& t = recipe_.tensors[tensor];
  if (t.sram) return kSramSection;
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
    recipe_.tensors.push_back(RecipeTensor{t.name, t.dtype, t.shape, persistent,
                                           t.kind == TensorKind::kSram, 0, t.bytes()});
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
          RecipeTensor{n.name + "." + b.name, b.dtype, b.dims, false, false, 0, b.bytes()});
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

// 4. Stages in the issue order with their waits, pruned to the latest stage of each engine class.
void Compiler::schedule() {
  const auto& nodes = nodes_;
  const std::vector<std::vector<std::size_t>> after = hazards();
  std::vector<int> last_stage(nodes.size(), -1);         // by node
  std::map<std::size_t, std::vector<int>> slice_stages;  // by pipelined MME node
  std::array<int, kEngineClasses> last_of{-1, -1, -1};
  // The last stage on each MME: a part of a split common dimension runs on its engine alone,
  // beside the other parts; any other MME stage takes every engine.
  std::vector<int> last_on_mme(static_cast<std::size_t>(target_.mmes), -1);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const Engine engine = engine_of(n);
    const auto produces = pipes_.find(i);
    const auto consumes = piped_by_.find(i);
    const Pipe* pipe = produces != pipes_.end()      ? &produces->second
                       : consumes != piped_by_.end() ? &pipes_.at(consumes->second)
                                                     : nullptr;
    std::vector<int> deps{last_of[static_cast<int>(engine)]};
    if (engine == Engine::kMme) {
      deps.clear();
      if (n.engine) {
        deps.push_back(last_on_mme.at(*n.engine));
      } else {
        deps = last_on_mme;
      }
    }
    for (std::size_t j : after[i]) {
      // A pipelined consumer's slice waits for its own slice of the MME node, below.
      if (consumes == piped_by_.end() || j != consumes->second) deps.push_back(last_stage[j]);
    }
    const int launches = pipe                          ? static_cast<int>(pipe->rows.size())
                         : n.kind == NodeKind::kKernel ? static_cast<int>(plans_[i].launches.size())
                                                       : 1;
    for (int l = 0; l < launches; ++l) {
      Pending p{i, pipe ? 0 : l, engine, {}};
      if (pipe) {
        const auto& range = (produces != pipes_.end() ? pipe->rows : pipe->points)[l];
        p.lo = range.first;
        p.hi = range.second;
      }
      if (consumes != piped_by_.end())
        deps.push_back(slice_stages.at(consumes->second)[static_cast<std::size_t>(l)]);
      // The latest stage of each engine class stands for the earlier ones, which it followed;
      // the parts of a split stand only for their own engine's, so each is waited for.
      std::array<int, kEngineClasses> latest{-1, -1, -1};
      for (int d : deps) {
        if (d < 0) continue;
        const Pending& dep = stages_[static_cast<std::size_t>(d)];
        if (nodes[dep.node].engine) {
          p.waits.push_back(static_cast<std::uint32_t>(d));
          continue;
        }
        int& slot = latest[static_cast<int>(dep.engine)];
        slot = std::max(slot, d);
      }
      for (int d : latest) {
        if (d >= 0) p.waits.push_back(static_cast<std::uint32_t>(d));
      }
      std::sort(p.waits.begin(), p.waits.end());
      p.waits.erase(std::unique(p.waits.begin(), p.waits.end()), p.waits.end());
      stages_.push_back(std::move(p));
      deps = {static_cast<int>(stages_.size() - 1)};  // later launches follow the first
      if (produces != pipes_.end()) slice_stages[i].push_back(deps[0]);
    }
    last_stage[i] = static_cast<int>(stages_.size() - 1);
    last_of[static_cast<int>(engine)] = last_stage[i];
    if (engine == Engine::kMme) {
      if (n.engine) {
        last_on_mme.at(*n.engine) = last_stage[i];
      } else {
        std::fill(last_on_mme.begin(), last_on_mme.end(), last_stage[i]);
      }
    }
  }
  if (stages_.size() > target_.sobs) {
    throw std::invalid_argument(
        fmt::format("the graph compiles to {} stages; the device leaves {} "
                    "sync objects to user space (one per stage)",
                    stages_.size(), target_.sobs));
  }
}

// 5. Workspace tensors first-fit, sharing bytes only with tensors whose every user has ended
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
  std::vector<Block> blocks, sram_blocks;  // the workspace's and the SRAM's
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
    const bool sram = recipe_.tensors[id].sram;
    std::vector<Block>& placed = sram ? sram_blocks : blocks;
    for (const Block& b : placed) {
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
    placed.push_back(Block{at, bytes, id});
    recipe_.tensors[id].offset = at;
    std::uint64_t& end = sram ? recipe_.sram_bytes : recipe_.workspace_bytes;
    end = std::max(end, at + bytes);
  }
  if (recipe_.sram_bytes > target_.sram_bytes)
    throw std::invalid_argument(
        fmt::format("the staging buffers need {} bytes of SRAM, the target has {}",
                    recipe_.sram_bytes, target_.sram_bytes));
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
  const int d = tpc::partition_dim(launch.index_space);
  const std::int32_t points = launch.index_space[static_cast<std::size_t>(d)];
  const bool sliced = p.hi > 0;
  const std::vector<tpc::Slice> slices =
      sliced ? tpc::partition(launch.index_space, target_.tpcs, static_cast<std::int32_t>(p.lo),
                              static_cast<std::int32_t>(p.hi))
             : tpc::partition(launch.index_space, target_.tpcs);
  const auto k = static_cast<std::uint32_t>(&stage - recipe_.stages.data());
  stage.flops = plan.flops / static_cast<double>(plan.launches.size()) *
                (sliced ? static_cast<double>(p.hi - p.lo) / points : 1.0);
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

// The engines' parts of `op`'s rows [lo, hi) (a pipelined slice), dealt out in whole tiles.
std::vector<mme::MmeOperation> row_parts(const mme::MmeOperation& op, std::uint64_t tile_rows,
                                         std::uint64_t engines, std::uint64_t lo,
                                         std::uint64_t hi) {
  const std::uint64_t share = mme_share(hi - lo, tile_rows, engines);
  std::vector<mme::MmeOperation> out;
  for (std::uint64_t start = lo; start < hi; start += share) {
    mme::MmeOperation part = op;
    part.m_start = static_cast<std::uint32_t>(start);
    part.m_count = static_cast<std::uint32_t>(std::min(share, hi - start));
    out.push_back(part);
  }
  return out;
}

// The engines' parts of the whole of `op` under the split mme_split chooses.
std::vector<mme::MmeOperation> engine_parts(const mme::MmeOperation& op, const mme::MmeConfig& tile,
                                            std::uint64_t engines) {
  const MmeSplit split = mme_split(tile, mme::GemmView(op), engines);
  std::vector<mme::MmeOperation> out;
  for (std::uint64_t e = 0; e < split.parts(); ++e) out.push_back(mme_part(op, split, e));
  return out;
}

// The array cycles of the slowest of `parts` (the engines run them at once), by the closed form.
std::uint64_t slowest_cycles(const mme::MmeConfig& tile,
                             const std::vector<mme::MmeOperation>& parts) {
  std::uint64_t slowest = 0;
  for (const mme::MmeOperation& part : parts)
    slowest = std::max(slowest, mme::analytic_cycles(tile, mme::GemmView(part), part.in));
  return slowest;
}

// The MME's geometry for `op`: of the output tiles the target's arrays form, the one whose
// rows dealt out to the engines take the fewest array cycles (the MME's own closed form), the
// array's own shape on a tie. A narrow result (a convolution of 64 filters) takes a tall tile,
// a short one a wide tile.
mme::MmeOperation with_geometry(const mme::MmeConfig& array, std::uint64_t engines,
                                mme::MmeOperation op) {
  const auto cycles = [&](const mme::MmeOperation& o) {
    const mme::MmeConfig c = mme::shaped(array, o);
    return slowest_cycles(c, engine_parts(o, c, engines));
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

// An MME node as the compiler will lower it: its geometry (with_geometry) and the array's tile
// for it; and the slowest engine's time by the closed form, at the target's MME clock.
struct Shaped {
  mme::MmeOperation op;
  mme::MmeConfig tile;
};
Shaped shaped_for(const mme::MmeConfig& array, std::uint64_t engines, const mme::MmeOperation& o) {
  const mme::MmeOperation best = with_geometry(array, engines, o);
  return {best, mme::shaped(array, best)};
}
double closed_form_ns(const Shaped& s, std::uint64_t engines, const Target& target) {
  return static_cast<double>(slowest_cycles(s.tile, engine_parts(s.op, s.tile, engines))) /
         target.mme_ghz;
}

// Before the passes: a convolution's weight gradient whose result leaves MMEs idle (its filters
// fill fewer array tiles than there are engines) takes every engine at once, each over a share
// of the batch, as the MME stack's weight-gradient concurrency in the common dimension does
// [C15]. The shares write f32 partial sums, which a TPC pass adds and rounds to the gradient's
// type once (the real stack has the memory add them as they are written: a reduction write).
// Chosen when the slowest share, with the partial sums' passes at HBM's rate, ends sooner than
// the whole by the MME's closed form.
Graph split_common_dimensions(const Graph& g, const Target& target,
                              std::vector<std::string>& notes) {
  const auto engines = static_cast<std::uint64_t>(target.mmes);
  const mme::MmeConfig array = array_of(target);
  const auto ns = [&](const mme::MmeOperation& o, std::uint64_t e) {
    return closed_form_ns(shaped_for(array, e, o), e, target);
  };
  Graph out;
  for (const Tensor& t : g.tensors()) out.tensor(t.name, t.dtype, t.shape, t.kind);
  for (const Node& n : g.nodes()) {
    const mme::ConvDesc& d = n.mme.conv;
    const bool candidate = n.kind == NodeKind::kMme && n.mme.op == mme::MmeOp::kConvWeightGrad &&
                           !n.engine && engines > 1 && d.n >= engines &&
                           n.offsets == std::array<std::uint64_t, 3>{};
    if (!candidate) {
      out.append(n);
      continue;
    }
    const std::uint64_t share = (d.n + engines - 1) / engines;
    const TensorId dw = n.operands[2];
    const Tensor result = g.tensor(dw);
    const bool rounds = result.dtype != Dtype::kF32;
    mme::MmeOperation part = n.mme;
    part.conv.n = static_cast<std::uint32_t>(share);
    part.out = Dtype::kF32;
    const double sums_ns = (3.0 * static_cast<double>(engines - 1) + (rounds ? 2.0 : 0.0)) *
                           static_cast<double>(result.elements()) * 4.0 / target.hbm_gb_per_s;
    if (ns(part, 1) + sums_ns >= ns(n.mme, engines)) {
      out.append(n);
      continue;
    }
    const std::uint64_t a_image = std::uint64_t{d.p()} * d.q() * d.k;  // dy: N P Q K
    const std::uint64_t b_image = std::uint64_t{d.h} * d.w * d.c;      // x: N H W C
    std::vector<TensorId> partials;
    for (std::uint64_t e = 0; e < engines && e * share < d.n; ++e) {
      Node p = n;
      p.mme.conv.n = static_cast<std::uint32_t>(std::min<std::uint64_t>(share, d.n - e * share));
      p.mme.out = Dtype::kF32;
      p.offsets = {e * share * a_image, e * share * b_image, 0};
      p.engine = static_cast<std::uint32_t>(e);
      if (e > 0) p.name = fmt::format("{}.part{}", n.name, e);
      const TensorId t =
          out.tensor(fmt::format("{}.partial{}", n.name, e), Dtype::kF32, result.shape);
      p.operands[2] = t;
      p.writes = {t};
      partials.push_back(t);
      out.append(std::move(p));
    }
    tpc::KernelRequest sum;
    sum.kernel = "add";
    sum.dtype = Dtype::kF32;
    sum.shape = result.shape;
    // Each sum a new tensor; the last (or its rounding) is dw.
    TensorId total = partials[0];
    for (std::size_t i = 1; i < partials.size(); ++i) {
      const bool last = i + 1 == partials.size();
      const TensorId t = last && !rounds ? dw
                                         : out.tensor(fmt::format("{}.sum{}", n.name, i),
                                                      Dtype::kF32, result.shape);
      out.kernel(fmt::format("{}.sum{}", n.name, i), sum, {total, partials[i], t});
      total = t;
    }
    if (rounds) {
      tpc::KernelRequest cast = sum;
      cast.kernel = "cast";
      cast.to = result.dtype;
      out.kernel(n.name + ".round", cast, {total, dw});
    }
    notes.push_back(fmt::format("split {} over the batch on {} MMEs", n.name, partials.size()));
  }
  return out;
}

// Before the passes, after the split: operands the MME fetches more than once go through the
// runtime's part of the on-die SRAM, as the real stack's SRAM management keeps a bundle's
// narrow operand resident there and slices its wide one to fit [C16, sram_management/].
// - A convolution's input (forward: x; data gradient: dy), which the engine fetches once for
//   every filter tap, is sliced on the batch: each slice of images is copied into the SRAM and
//   the convolution of those images reads it there and writes its share of the result, so HBM
//   serves the input once (the batch-slicing solver's cut).
// - An MME node's right operand (B: a GEMM's weights, a convolution's filters), which the engine
//   fetches again for every block of result rows it walks, is copied into the SRAM whole.
// Each kind of buffer comes in two that the copies fill in turn, so that one is filled while the
// MME reads the other (a copy waits for the MME that read its buffer before: a write after a
// read); with sliced inputs, the four buffers take a quarter of the SRAM each, else the two of
// the right operands half. An operand is staged when the engine would fetch it at least three
// times and a copy (at the DMA engines' rate) takes no longer than the work that reads it, so
// that it can run behind the work before (podsim's own rule: Synapse's solvers' costs are not
// published). Not staged: weight gradients (both operands are wide
// and sum over the batch), parts of a split common dimension, views at offsets, and an operand
// the node also reads or writes as another.
// The node's closed-form time, and how many times the engine fetches A (once for every block
// of result columns) and B (once for every block of result rows).
struct MmeCost {
  double ns;
  std::uint64_t a_fetches, b_fetches;
};
MmeCost mme_cost(const Target& target, const mme::MmeOperation& n) {
  const auto engines = static_cast<std::uint64_t>(target.mmes);
  const Shaped s = shaped_for(array_of(target), engines, n);
  const mme::GemmView view(s.op);
  const std::uint64_t rows = static_cast<std::uint64_t>(s.tile.rows) * s.tile.block_rows;
  const std::uint64_t cols = static_cast<std::uint64_t>(s.tile.cols) * s.tile.block_cols;
  return {closed_form_ns(s, engines, target), (view.n() + cols - 1) / cols,
          view.batch() * ((view.m() + rows - 1) / rows)};
}

// A copy into the SRAM at the DMA engines' rate (or HBM's, if lower).
double copy_ns(const Target& target, std::uint64_t bytes) {
  const double rate =
      std::min(target.dma_gb_per_s * std::max(1, target.copy_engines), target.hbm_gb_per_s);
  return static_cast<double>(bytes) / rate;
}

bool plain_mme(const Node& n) {
  return n.kind == NodeKind::kMme && !n.engine && n.operands[1] != n.operands[0] &&
         n.operands[1] != n.operands[2] && n.operands[0] != n.operands[2];
}

// Elements of one image of a convolution's input (a) and result (c).
std::pair<std::uint64_t, std::uint64_t> conv_images(const mme::MmeOperation& op) {
  const mme::ConvDesc& d = op.conv;
  const std::uint64_t x = std::uint64_t{d.h} * d.w * d.c, y = std::uint64_t{d.p()} * d.q() * d.k;
  return op.op == mme::MmeOp::kConvForward ? std::make_pair(x, y) : std::make_pair(y, x);
}

Graph stage_in_sram(const Graph& g, const Target& target, std::vector<std::string>& notes) {
  if (target.sram_bytes < 1024) return g;
  const auto line = [](std::uint64_t b) { return b / 256 * 256; };
  // Inputs to slice: images a slice at a quarter of the SRAM, 0 for a node not sliced.
  const std::uint64_t input_buffer = line(target.sram_bytes / 4);
  std::vector<std::uint32_t> per_slice(g.nodes().size());
  std::map<Dtype, std::uint64_t> inputs;  // the largest slice of each type, bytes
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    const mme::MmeOp op = n.mme.op;
    if (!plain_mme(n) || n.offsets != std::array<std::uint64_t, 3>{} ||
        (op != mme::MmeOp::kConvForward && op != mme::MmeOp::kConvDataGrad))
      continue;
    const Tensor& a = g.tensor(n.operands[0]);
    const std::uint64_t image = conv_images(n.mme).first * tpc::info(a.dtype).bytes;
    const std::uint64_t taps = std::uint64_t{n.mme.conv.r} * n.mme.conv.s;
    if (image == 0 || image > input_buffer) continue;
    const MmeCost cost = mme_cost(target, n.mme);
    if (taps * cost.a_fetches < 3) continue;
    const std::uint64_t most = input_buffer / image;
    const std::uint64_t slices = (n.mme.conv.n + most - 1) / most;
    const auto each = static_cast<std::uint32_t>((n.mme.conv.n + slices - 1) / slices);
    if (copy_ns(target, each * image) > cost.ns / static_cast<double>(slices)) continue;
    per_slice[i] = each;
    inputs[a.dtype] = std::max(inputs[a.dtype], each * image);
  }
  const std::uint64_t weight_buffer = line(target.sram_bytes / (inputs.empty() ? 2 : 4));
  Graph sliced;
  for (const Tensor& t : g.tensors()) sliced.tensor(t.name, t.dtype, t.shape, t.kind);
  const auto buffers = [&](Graph& out, const std::map<Dtype, std::uint64_t>& sizes,
                           const char* what) {
    std::map<Dtype, std::array<TensorId, 2>> b;
    for (const auto& [dtype, bytes] : sizes) {
      const auto elements =
          static_cast<std::uint32_t>(bytes / static_cast<std::uint64_t>(tpc::info(dtype).bytes));
      for (std::size_t k = 0; k < 2; ++k) {
        b[dtype][k] = out.tensor(fmt::format("sram.{}.{}.{}", what, tpc::info(dtype).name, k),
                                 dtype, {elements}, TensorKind::kSram);
      }
    }
    return b;
  };
  const auto input_buffers = buffers(sliced, inputs, "input");
  std::map<Dtype, std::size_t> turns;
  std::size_t convs = 0;
  for (std::size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.nodes()[i];
    if (per_slice[i] == 0) {
      sliced.append(n);
      continue;
    }
    const TensorId a = n.operands[0];
    const Dtype dtype = g.tensor(a).dtype;
    const auto [a_image, c_image] = conv_images(n.mme);
    for (std::uint32_t first = 0, s = 0; first < n.mme.conv.n; first += per_slice[i], ++s) {
      Node p = n;
      p.name = fmt::format("{}.slice{}", n.name, s);
      p.mme.conv.n = std::min(per_slice[i], n.mme.conv.n - first);
      const TensorId into = input_buffers.at(dtype)[turns[dtype]++ % 2];
      sliced.copy(p.name + ".stage", a, into, first * a_image, p.mme.conv.n * a_image);
      p.operands[0] = into;
      std::replace(p.reads.begin(), p.reads.end(), a, into);
      p.offsets = {0, 0, first * c_image};
      sliced.append(std::move(p));
    }
    ++convs;
  }
  // Right operands, over the sliced graph.
  std::vector<bool> staged(sliced.nodes().size());
  std::map<Dtype, std::uint64_t> weights;
  for (std::size_t i = 0; i < sliced.nodes().size(); ++i) {
    const Node& n = sliced.nodes()[i];
    if (!plain_mme(n) || n.offsets[1] != 0) continue;
    const Tensor& b = sliced.tensor(n.operands[1]);
    if (b.kind == TensorKind::kSram || b.bytes() > weight_buffer) continue;
    const MmeCost cost = mme_cost(target, n.mme);
    if (cost.b_fetches < 3 || copy_ns(target, b.bytes()) > cost.ns) continue;
    staged[i] = true;
    weights[b.dtype] = std::max(weights[b.dtype], b.bytes());
  }
  if (convs == 0 && weights.empty()) return g;
  Graph out;
  for (const Tensor& t : sliced.tensors()) out.tensor(t.name, t.dtype, t.shape, t.kind);
  const auto weight_buffers = buffers(out, weights, "weights");
  std::size_t count = 0;
  turns.clear();
  // The operand staged last and its buffer: the next node with the same operand (a convolution's
  // next slice) reads it there again, without a copy.
  TensorId last = -1, last_into = -1;
  for (std::size_t i = 0; i < sliced.nodes().size(); ++i) {
    Node n = sliced.nodes()[i];
    if (staged[i]) {
      const TensorId b = n.operands[1];
      if (b != last) {
        const Dtype dtype = sliced.tensor(b).dtype;
        last_into = weight_buffers.at(dtype)[turns[dtype]++ % 2];
        last = b;
        out.copy(n.name + ".stage_b", b, last_into);
        ++count;
      }
      n.operands[1] = last_into;
      std::replace(n.reads.begin(), n.reads.end(), b, last_into);
    }
    out.append(std::move(n));
  }
  if (convs > 0) {
    notes.push_back(fmt::format("sliced the input of {} convolution{} into SRAM on the batch",
                                convs, convs == 1 ? "" : "s"));
  }
  if (count > 0) {
    notes.push_back(fmt::format("staged {} right operand{} of MME nodes in SRAM", count,
                                count == 1 ? "" : "s"));
  }
  return out;
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
      const std::uint64_t e = n.engine ? 1 : engines;
      const mme::MmeOperation& op = mme_ops_[i] = with_geometry(array, e, n.mme);
      const mme::MmeConfig c = mme::shaped(array, op);
      t.ns = static_cast<double>(slowest_cycles(c, engine_parts(op, c, e))) / target_.mme_ghz;
    } else if (t.engine == Engine::kTpc) {
      t.ns =
          std::max(plans_[i].min_bytes / target_.hbm_gb_per_s, plans_[i].flops / tpc_flops_per_ns);
    } else {
      t.ns = 2.0 * static_cast<double>(copy_bytes(i)) / target_.hbm_gb_per_s;
    }
    t.after = after[i];
    estimates_.push_back(t.ns);
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
  permute(estimates_);
  std::map<std::size_t, Fusion> fused;
  for (std::size_t k = 0; k < count; ++k) {
    const auto it = fused_.find(order[k]);
    if (it != fused_.end()) fused.emplace(k, std::move(it->second));
  }
  fused_ = std::move(fused);
}

// 3. An MME node whose result the next node to touch it, a TPC kernel, reads row by row: both
// run in slices of rows, the kernel's slice s waiting only for the MME's slice s, so that the
// TPCs work on one slice while the MMEs compute the next (Synapse's pipelining of an MME node
// and its TPC consumers [C16]). Slices are whole blocks of array tiles on every engine (the MME
// reads the right operand once per block of rows anyway, so slicing adds no traffic) and whole
// points of the kernel; their count is the one whose two-stage schedule, each slice paying
// `stage_ns` beyond its share, ends soonest, and none when slicing gains nothing.
std::optional<Pipe> Compiler::pipe(std::size_t producer, std::size_t consumer) const {
  const Node& m = nodes_[producer];
  const Node& k = nodes_[consumer];
  if (m.engine) return std::nullopt;  // a part of a split common dimension, on one engine
  const mme::MmeOperation& op = mme_ops_[producer];
  const mme::GemmView view(op);
  const auto c = static_cast<std::uint32_t>(m.operands[2]);
  // The result: one matrix, row after row, filling its tensor from its start.
  if (view.batch() != 1 || m.offsets[2] != 0 || view.c(0, 0, 1) != 1 ||
      (view.m() > 1 && view.c(0, 1, 0) != static_cast<std::int64_t>(view.n())) ||
      graph_.tensor(static_cast<TensorId>(c)).elements() != view.m() * view.n())
    return std::nullopt;
  const mme::MmeConfig tile = mme::shaped(array_of(target_), op);
  const auto engines = static_cast<std::uint64_t>(target_.mmes);
  if (mme_split(tile, view, engines).by_columns) return std::nullopt;
  // The consumer: one launch whose accesses follow its index (access_scale), reading the result
  // through one dense view, split over the cores along a dimension that walks the rows.
  const tpc::KernelPlan& plan = plans_[consumer];
  if (plan.launches.size() != 1 || !plan.launches[0].access_scale) return std::nullopt;
  for (int operand : {0, 1}) {  // a consumer overwriting the MME's operands waits for it whole
    const TensorId t = m.operands[static_cast<std::size_t>(operand)];
    if (std::find(k.writes.begin(), k.writes.end(), t) != k.writes.end()) return std::nullopt;
  }
  const tpc::LaunchSpec& launch = plan.launches[0];
  std::optional<std::size_t> seen;
  for (std::size_t t = 0; t < launch.tensors.size(); ++t) {
    const auto& v = launch.tensors[t];
    if (!v || buffers_[consumer][static_cast<std::size_t>(v->buffer)] != c) continue;
    if (seen) return std::nullopt;
    seen = t;
  }
  if (!seen) return std::nullopt;
  const tpc::TensorView& tv = *launch.tensors[*seen];
  std::uint64_t dense = 1;
  for (std::size_t d = 0; d < tv.dims.size(); ++d) {
    if (tv.strides[d] != dense) return std::nullopt;
    dense *= tv.dims[d];
  }
  if (dense != view.m() * view.n()) return std::nullopt;
  const int d = tpc::partition_dim(launch.index_space);
  const auto du = static_cast<std::size_t>(d);
  const tpc::Coord& scale = (*launch.access_scale)[*seen];
  for (std::size_t j = 0; j < tv.dims.size(); ++j) {
    if (j > du && tv.dims[j] != 1) return std::nullopt;  // a point along d spans the rest
    if (j < du && static_cast<std::uint64_t>(scale[j]) * launch.index_space[j] < tv.dims[j])
      return std::nullopt;
  }
  if (du >= tv.dims.size() || scale[du] <= 0) return std::nullopt;
  const std::uint64_t step = static_cast<std::uint64_t>(scale[du]) * tv.strides[du];
  const std::uint64_t points = static_cast<std::uint64_t>(launch.index_space[du]);
  // Slice boundaries: whole blocks of tiles on every engine, and whole points of the kernel.
  const std::uint64_t block = static_cast<std::uint64_t>(tile.rows) * tile.block_rows * engines;
  const std::uint64_t row_step = step / std::gcd(step, view.n());
  const std::uint64_t granule = std::lcm(block, row_step);
  const std::uint64_t granules = (view.m() + granule - 1) / granule;
  if (granules < 2) return std::nullopt;
  const double tpc_ns = estimates_[consumer];
  const double whole = estimates_[producer] + tpc_ns;
  std::optional<Pipe> best;
  double best_ns = whole;
  for (std::uint64_t want = 2; want <= static_cast<std::uint64_t>(target_.max_slices); ++want) {
    const std::uint64_t per = (granules + want - 1) / want * granule;
    const std::uint64_t count = (view.m() + per - 1) / per;
    if (count < 2 || (best && best->rows.size() == count)) continue;
    Pipe p;
    double mme_end = 0, tpc_end = 0;
    for (std::uint64_t s = 0; s < count; ++s) {
      const std::uint64_t lo = s * per, hi = std::min(view.m(), lo + per);
      const std::uint64_t first = lo * view.n() / step;
      const std::uint64_t last = hi == view.m() ? points : hi * view.n() / step;
      p.rows.emplace_back(static_cast<std::uint32_t>(lo), static_cast<std::uint32_t>(hi));
      p.points.emplace_back(static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(last));
      const std::uint64_t slowest = slowest_cycles(
          tile, row_parts(op, static_cast<std::uint64_t>(tile.rows), engines, lo, hi));
      mme_end += static_cast<double>(slowest) / target_.mme_ghz + target_.stage_ns;
      tpc_end = std::max(tpc_end, mme_end) +
                tpc_ns * static_cast<double>(last - first) / static_cast<double>(points) +
                target_.stage_ns;
    }
    if (tpc_end < best_ns) {
      best_ns = tpc_end;
      best = std::move(p);
    }
  }
  return best;
}

void Compiler::pipeline() {
  if (!target_.pipeline) return;
  std::size_t stages = 0;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    stages += nodes_[i].kind == NodeKind::kKernel ? plans_[i].launches.size() : 1;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].kind != NodeKind::kMme) continue;
    const auto c = static_cast<std::uint32_t>(nodes_[i].operands[2]);
    std::size_t j = i + 1;
    while (j < nodes_.size() &&
           std::find(touched_[j].begin(), touched_[j].end(), c) == touched_[j].end())
      ++j;
    if (j == nodes_.size() || nodes_[j].kind != NodeKind::kKernel || piped_by_.count(j)) continue;
    std::optional<Pipe> p = pipe(i, j);
    if (!p) continue;
    const std::size_t extra = 2 * (p->rows.size() - 1);
    if (stages + extra > target_.sobs) continue;
    stages += extra;
    recipe_.notes.push_back(fmt::format("pipelined {} into {} in {} slices", nodes_[i].name,
                                        nodes_[j].name, p->rows.size()));
    piped_by_[j] = i;
    pipes_.emplace(i, std::move(*p));
  }
}

void Compiler::encode_mme(const Pending& p, Stage& stage) {
  const Node& n = nodes_[p.node];
  const auto k = static_cast<std::uint32_t>(&stage - recipe_.stages.data());
  const mme::MmeConfig array = array_of(target_);
  const std::uint64_t engines = n.engine ? 1 : static_cast<std::uint64_t>(target_.mmes);
  const mme::MmeOperation& op = mme_ops_[p.node];
  const mme::MmeConfig tile = mme::shaped(array, op);
  const mme::GemmView view(op);
  const bool sliced = p.hi > 0;  // a pipelined slice of rows
  const std::vector<mme::MmeOperation> parts =
      sliced ? row_parts(op, static_cast<std::uint64_t>(tile.rows), engines, p.lo, p.hi)
             : engine_parts(op, tile, engines);
  const std::uint32_t first_engine = n.engine.value_or(0);
  stage.flops = op.flops() *
                (sliced ? static_cast<double>(p.hi - p.lo) / static_cast<double>(view.m()) : 1.0);
  for (std::size_t e = 0; e < parts.size(); ++e) {
    std::array<std::vector<core::RegisterRun>, 2> image;
    for (int v = 0; v < 2; ++v) {
      mme::OperationRegisters regs;
      regs.op = parts[e];
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
    stage.jobs.push_back(
        relocate(queue_of(target_, driver::EngineKind::kMme, static_cast<int>(first_engine + e)),
                 std::move(image[0]), image[1], PODSIM_GAUDI1_MME_DESC_EXECUTE_OFFSET));
  }
}

std::uint64_t Compiler::copy_bytes(std::size_t node) const {
  const Node& n = nodes_[node];
  const RecipeTensor& src = recipe_.tensors[static_cast<std::size_t>(n.operands[0])];
  return n.elements > 0 ? n.elements * static_cast<std::uint64_t>(tpc::info(src.dtype).bytes)
                        : src.bytes;
}

// A copy is shared out in whole 256-byte lines to the internal DMA engines
// (`Target::copy_engines` of them, each its part), as Synapse spreads a bundle's memcpys over
// the engines [C16, bundle_memcpy_scheduler].
void Compiler::encode_copy(const Pending& p, Stage& stage) {
  const Node& n = nodes_[p.node];
  const auto src = static_cast<std::uint32_t>(n.operands[0]);
  const auto dst = static_cast<std::uint32_t>(n.operands[1]);
  const std::uint64_t bytes = copy_bytes(p.node);
  const std::uint64_t from =
      recipe_.tensors[src].offset +
      n.offsets[0] * static_cast<std::uint64_t>(tpc::info(recipe_.tensors[src].dtype).bytes);
  const auto engines = static_cast<std::uint64_t>(std::max(1, target_.copy_engines));
  const std::uint64_t share = (bytes / engines + 255) / 256 * 256;
  for (std::uint64_t e = 0, at = 0; e < engines && at < bytes; ++e, at += share) {
    EngineJob job;
    job.queue = queue_of(target_, driver::EngineKind::kDma, 2 + static_cast<int>(e));
    job.src = SectionAddress{section(src), from + at};
    job.dst = SectionAddress{section(dst), recipe_.tensors[dst].offset + at};
    job.bytes = std::min(share, bytes - at);
    stage.jobs.push_back(std::move(job));
  }
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
  recipe_.device_id = target_.device_id;
  recipe_.first_sob = target_.first_sob;
  recipe_.first_monitor = target_.first_monitor;
  fuse();
  lower();
  order();
  pipeline();
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

Recipe compile(const Graph& graph, const Target& target) {
  std::vector<std::string> notes;
  const Graph split = split_common_dimensions(graph, target, notes);
  const Graph staged = stage_in_sram(split, target, notes);
  return Compiler(staged, target, graph.signature(), std::move(notes)).run();
}

}  // namespace podsim::synapse
