#include "collectives/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "collectives/direct_launcher.h"
#include "collectives/halving_doubling.h"
#include "collectives/launcher.h"
#include "collectives/mesh.h"
#include "collectives/pipeline.h"
#include "collectives/ring.h"
#include "collectives/schedule.h"
#include "collectives/tree.h"
#include "core/kernel.h"
#include "core/trace.h"

namespace podsim::collectives {

// Ids name collectives in traces; they only grow.
int Communicator::next_collective_id() {
  static int next = 0;
  return next++;
}

Communicator::Communicator(system::SystemModel& model, std::vector<int> chips, TuningConfig tuning)
    : model_(model), chips_(std::move(chips)), tuning_(std::move(tuning)) {
  if (chips_.empty()) throw std::invalid_argument("a communicator needs at least one chip");
  std::set<int> seen;
  for (int c : chips_) {
    if (c < 0 || c >= model_.chips()) {
      throw std::invalid_argument(
          fmt::format("chip {} is not in the system (chips 0..{})", c, model_.chips() - 1));
    }
    if (!seen.insert(c).second) throw std::invalid_argument(fmt::format("chip {} named twice", c));
  }
}

std::map<int, Communicator> Communicator::split(const std::vector<int>& colors,
                                                const std::vector<int>& keys) const {
  if (colors.size() != chips_.size() || keys.size() != chips_.size()) {
    throw std::invalid_argument(
        fmt::format("split: need a color and a key for each of {} ranks", chips_.size()));
  }
  std::map<int, std::vector<std::pair<int, int>>> members;  // color -> (key, rank)
  for (int r = 0; r < size(); ++r) members[colors[r]].push_back({keys[r], r});
  std::map<int, Communicator> out;
  for (auto& [color, list] : members) {
    std::sort(list.begin(), list.end());
    std::vector<int> chips;
    for (const auto& [key, rank] : list) chips.push_back(chip(rank));
    out.emplace(color, Communicator(model_, std::move(chips), tuning_));
  }
  return out;
}

std::uint32_t Communicator::qp(int from, int to, int lane) {
  const auto key = std::make_tuple(from, to, lane);
  if (auto it = qps_.find(key); it != qps_.end()) return it->second;
  const int a = chip(from), b = chip(to);
  const auto [port_a, port_b] =
      system::ports_between(model_.topology(), model_.config(), a, b, lane);
  std::uint32_t qa = 0, qb = 0;
  if (coarse()) {
    auto& direct = model_.attached<DirectLauncher>();
    qa = direct.create_qp(a, port_a);
    qb = direct.create_qp(b, port_b);
  } else {
    qa = model_.chip(a).nic_doorbell().create_qp(port_a);
    qb = model_.chip(b).nic_doorbell().create_qp(port_b);
  }
  model_.nic(a).connect_qp(qa, model_.address(b, port_b), qb);
  model_.nic(b).connect_qp(qb, model_.address(a, port_a), qa);
  qps_[key] = qa;
  qps_[std::make_tuple(to, from, lane)] = qb;
  return qa;
}

bool Communicator::on_ladders() const {
  return model_.config().box.wiring == system::BoxWiring::kLadder;
}

int Communicator::boxes_spanned() const {
  const int box_chips = model_.config().box.chips;
  std::set<int> boxes;
  for (int c : chips_) boxes.insert(c / box_chips);
  return static_cast<int>(boxes.size());
}

bool Communicator::fully_linked() const {
  for (int a = 0; a < size(); ++a) {
    for (int b = a + 1; b < size(); ++b) {
      if (!system::directly_linked(model_.config(), chip(a), chip(b))) return false;
    }
  }
  return true;
}

const TuningRule* Communicator::first_rule(const Spec& spec,
                                           std::optional<Algorithm> algorithm) const {
  const bool in_one_box = fully_linked();
  const int boxes = boxes_spanned();
  for (const auto& rule : tuning_.auto_rules) {
    if (algorithm && rule.algorithm != *algorithm) continue;
    if (rule.matches(spec.op, in_one_box, boxes, size_bytes(spec)) &&
        can_run(spec, rule.algorithm)) {
      return &rule;
    }
  }
  return nullptr;
}

Algorithm Communicator::resolve(const Spec& spec) const {
  if (spec.algorithm != Algorithm::kAuto) return spec.algorithm;
  if (const TuningRule* rule = first_rule(spec, std::nullopt)) return rule->algorithm;
  return spec.op == Op::kAllToAll ? Algorithm::kMesh : Algorithm::kRing;
}

// The rule that picked the hierarchical algorithm for an `auto` request is also the first
// hierarchical rule that matches, so explicit and automatic requests decide alike.
Spec Communicator::with_across(const Spec& spec) const {
  Spec out = spec;
  if (out.across != Algorithm::kAuto) return out;
  const TuningRule* rule = first_rule(spec, Algorithm::kHierarchical);
  out.across = rule ? rule->across : Algorithm::kRing;
  return out;
}

bool Communicator::can_run(const Spec& spec, Algorithm algorithm) const {
  if (!supports(algorithm, spec.op)) return false;
  if (on_ladders() && algorithm != Algorithm::kRing) return false;
  if (spec.rings > 1 && algorithm != Algorithm::kRing) return false;
  if (spec.pipeline > 1 && algorithm != Algorithm::kHierarchical) return false;
  if (algorithm != Algorithm::kHierarchical) return true;
  const auto h = hierarchy();
  return h && h->per_box > 1 && spec.count % static_cast<std::uint64_t>(h->per_box) == 0;
}

std::optional<Hierarchy> Communicator::hierarchy() const {
  const auto& config = model_.config();
  if (config.box.wiring != system::BoxWiring::kAllToAll) return std::nullopt;
  const int box_chips = config.box.chips;
  // Consecutive runs of ranks per box, each run the same length, local order the same.
  int per_box = 1;
  while (per_box < size() && chip(per_box) / box_chips == chip(0) / box_chips) ++per_box;
  if (size() % per_box != 0) return std::nullopt;
  for (int r = 0; r < size(); ++r) {
    const int leader = r - r % per_box;
    if (chip(r) / box_chips != chip(leader) / box_chips) return std::nullopt;
    if (chip(r) - chip(leader) != chip(r % per_box) - chip(0)) return std::nullopt;
    if (r % per_box == 0 && r > 0 && chip(r) / box_chips == chip(r - 1) / box_chips) {
      return std::nullopt;
    }
  }
  Hierarchy h;
  h.boxes = size() / per_box;
  h.per_box = per_box;
  h.lanes = std::max(1, config.scale_out.ports_per_chip);
  if (h.boxes > 1 && config.network.kind == system::NetworkKind::kNone) return std::nullopt;
  return h;
}

void Communicator::check_hierarchical(const Spec& spec) const {
  const auto h = hierarchy();
  if (!h) {
    throw std::invalid_argument(
        "the hierarchical algorithm needs the ranks in whole boxes, box after box, each box's "
        "ranks on the same local chips");
  }
  if (spec.op != Op::kAllReduce) {
    throw std::invalid_argument(std::string("the hierarchical algorithm runs all_reduce, not ") +
                                to_string(spec.op));
  }
  if (spec.count % static_cast<std::uint64_t>(h->per_box) != 0) {
    throw std::invalid_argument(
        fmt::format("hierarchical all_reduce: count {} is not a multiple of the {} ranks per box",
                    spec.count, h->per_box));
  }
  if (spec.across != Algorithm::kAuto && spec.across != Algorithm::kRing &&
      spec.across != Algorithm::kHalvingDoubling) {
    throw std::invalid_argument(
        fmt::format("hierarchical all_reduce: across the boxes runs ring or halving_doubling, "
                    "not {}",
                    to_string(spec.across)));
  }
}

Program Communicator::program(const Spec& spec, Algorithm algorithm, int rank) {
  const int n = size();
  if (n == 1) return ring_program(spec, 1, 0, 0);
  const auto qp_to = [this, rank](int peer, int lane) { return qp(rank, peer, lane); };
  switch (algorithm) {
    case Algorithm::kMesh:
      return mesh_program(spec, n, rank, model_.config().box.links_per_peer, qp_to);
    case Algorithm::kTree:
      return tree_program(spec, n, rank, model_.config().box.links_per_peer, qp_to);
    case Algorithm::kHalvingDoubling:
      return halving_doubling_program(spec, n, rank, model_.config().box.links_per_peer, qp_to);
    default:
      return rings_program(spec, rank);
  }
}

// Ring i runs over lane spec.lane + i / 2, odd rings backwards (ring position p is rank
// (n - p) mod n); one program holds them all. An all-reduce's ring i carries slice i of the
// vector, with its own scratch; a reduce-scatter's or all-gather's carries slice i of every
// rank's part, so each part stays whole, in scratch the rings share without overlapping.
Program Communicator::rings_program(const Spec& spec, int rank) {
  const int n = size();
  if (spec.rings == 1) return ring_program(spec, n, rank, qp(rank, (rank + 1) % n, spec.lane));
  if (spec.op != Op::kAllReduce) return shared_rings_program(spec, rank);
  const Layout l = layout(spec, n, rank);
  const std::uint64_t element = core::size_of(spec.type);
  std::uint64_t scratch = l.scratch;
  Program all;
  for (int ring = 0; ring < spec.rings; ++ring) {
    const auto [at, length] = part_of(spec.count, static_cast<std::uint64_t>(spec.rings),
                                      static_cast<std::uint64_t>(ring));
    if (length == 0) continue;
    Spec s = spec;
    s.count = length;
    s.rings = 1;
    s.lane = spec.lane + ring / 2;
    s.placement = Spec::Placement{l.input + at * element, l.output + at * element, scratch};
    scratch += layout(s, n, 0).scratch_bytes;
    const bool backward = ring % 2 == 1;
    const int position = backward ? (n - rank) % n : rank;
    const int next = backward ? (rank + n - 1) % n : (rank + 1) % n;
    append(all, ring_program(s, n, position, qp(rank, next, s.lane)));
  }
  return all;
}

Program Communicator::shared_rings_program(const Spec& spec, int rank) {
  const int n = size();
  const std::uint64_t part = spec.count / static_cast<std::uint64_t>(n);
  Program all;
  for (int ring = 0; ring < spec.rings; ++ring) {
    const auto [at, length] =
        part_of(part, static_cast<std::uint64_t>(spec.rings), static_cast<std::uint64_t>(ring));
    if (length == 0) continue;
    Spec s = spec;
    s.rings = 1;
    s.lane = spec.lane + ring / 2;
    const bool backward = ring % 2 == 1;
    const int position = backward ? (n - rank) % n : rank;
    const int next = backward ? (rank + n - 1) % n : (rank + 1) % n;
    append(all, ring_program(s, n, position, qp(rank, next, s.lane), {at, length, backward}));
  }
  return all;
}

Communicator& Communicator::box(int b) {
  const auto h = *hierarchy();
  if (boxes_.empty()) {
    for (int i = 0; i < h.boxes; ++i) {
      std::vector<int> chips;
      for (int j = 0; j < h.per_box; ++j) chips.push_back(chip(i * h.per_box + j));
      boxes_.push_back(std::make_unique<Communicator>(model_, chips, tuning_));
      boxes_.back()->runs_phases_ = true;
    }
  }
  return *boxes_[static_cast<std::size_t>(b)];
}

Communicator& Communicator::rail(int local) {
  const auto h = *hierarchy();
  if (rails_.empty()) {
    for (int j = 0; j < h.per_box; ++j) {
      std::vector<int> chips;
      for (int i = 0; i < h.boxes; ++i) chips.push_back(chip(i * h.per_box + j));
      rails_.push_back(std::make_unique<Communicator>(model_, chips, tuning_));
      rails_.back()->runs_phases_ = true;
    }
  }
  return *rails_[static_cast<std::size_t>(local)];
}

namespace {

// One piece of a hierarchical all-reduce: its three phases' specs. The across-boxes specs are
// one per rail for local rank 0; local rank j's lie `part` elements further per j.
struct HierarchicalPiece {
  Spec reduce_scatter, all_gather;
  std::vector<Spec> across;
  std::uint64_t part = 0;  // elements of the piece each box rank reduces across the boxes
};

struct HierarchicalPlan {
  std::vector<HierarchicalPiece> pieces;
  std::uint64_t scratch_end = 0;  // first scratch byte no piece uses
};

// The rings across the boxes pay a hop through the scale-out network per step: cutting each
// step's segment into eight chunks lets them overlap that latency with the transfers (a ring's
// chunks run as separate streams), down to 32 KiB, below which a chunk's own overheads win
// (timing-only sweeps on hls2-pod128, docs/collectives.md).
std::uint64_t ring_chunk(std::uint64_t count, int ranks, std::uint64_t element,
                         std::uint64_t chunk) {
  constexpr std::uint64_t kSmallest = 32 << 10;
  const std::uint64_t segment = count / static_cast<std::uint64_t>(ranks) * element;
  return std::min(chunk, std::max(segment / 8, kSmallest) / element * element);
}

// The box phases of a piece: at most 512 KiB chunks, so each peer and lane gets several.
constexpr std::uint64_t kBoxChunk = 512 << 10;

// Each piece gets its own scratch, since its phases overlap other pieces'.
HierarchicalPlan hierarchical_plan(const Spec& spec, const Layout& l, const Hierarchy& h) {
  const std::uint64_t element = core::size_of(spec.type);
  Spec base = spec;
  base.root = 0;
  base.pipeline = 1;
  base.lane = 0;
  HierarchicalPlan plan;
  std::uint64_t scratch = l.scratch;
  for (const auto& [offset, count] :
       cut_pieces(spec.count, static_cast<std::uint64_t>(h.per_box), pipeline_depth(spec))) {
    HierarchicalPiece piece;
    piece.part = count / static_cast<std::uint64_t>(h.per_box);
    const std::uint64_t in = l.input + offset * element, out = l.output + offset * element;
    Spec box = base;
    box.algorithm = Algorithm::kMesh;
    box.count = count;
    box.chunk_bytes = std::max(element, std::min(base.chunk_bytes, kBoxChunk) / element * element);
    box.op = Op::kReduceScatter;
    box.in_place = in == out;
    box.placement = Spec::Placement{in, out, scratch};
    piece.reduce_scatter = box;
    box.op = Op::kAllGather;
    box.in_place = true;
    box.placement = Spec::Placement{out, out, scratch};
    piece.all_gather = box;
    std::uint64_t used = layout(piece.reduce_scatter, h.per_box, 0).scratch_bytes;
    std::uint64_t lane_scratch = scratch;
    for (int lane = 0; lane < h.lanes; ++lane) {
      const auto [at, length] = part_of(piece.part, static_cast<std::uint64_t>(h.lanes), lane);
      if (length == 0) continue;
      Spec across = base;
      across.algorithm = spec.across;
      across.count = length;
      if (across.algorithm == Algorithm::kRing) {
        across.chunk_bytes = ring_chunk(length, h.boxes, element, base.chunk_bytes);
      }
      across.lane = lane;
      across.in_place = true;
      const std::uint64_t slice = out + at * element;
      across.placement = Spec::Placement{slice, slice, lane_scratch};
      lane_scratch += layout(across, h.boxes, 0).scratch_bytes;
      piece.across.push_back(across);
    }
    scratch += std::max(used, lane_scratch - scratch);
    plan.pieces.push_back(std::move(piece));
  }
  plan.scratch_end = scratch;
  return plan;
}

}  // namespace

// Two pieces in each phase at once: one piece's latencies overlap the next one's transfers, and
// the three phases' six sub-collectives per chip stay near the chips' four queue slots.
constexpr int kPhaseWindow = 2;

// Reduce-scatter in every box over its mesh, then all-reduce of each rank's segment across the
// boxes (a ring per scale-out rail, each on a slice of the segment), then all-gather in every
// box; piece by piece, the phases of consecutive pieces overlapping (see pipeline.h).
void Communicator::start_hierarchical(const Spec& spec, const Layout& l,
                                      const std::shared_ptr<Handle>& handle) {
  const Hierarchy h = *hierarchy();
  auto plan = std::make_shared<HierarchicalPlan>(hierarchical_plan(spec, l, h));
  const std::uint64_t element = core::size_of(spec.type);
  auto launch = [this, h, plan, element, handle](int p, int phase, std::function<void()> done) {
    const HierarchicalPiece& piece = plan->pieces[static_cast<std::size_t>(p)];
    std::vector<std::pair<Communicator*, std::vector<Spec>>> runs;
    for (int b = 0; phase != 1 && b < h.boxes; ++b) {
      runs.push_back({&box(b), {phase == 0 ? piece.reduce_scatter : piece.all_gather}});
    }
    // A rank's rings on the rails run as one collective: one set of queues, not one per rail.
    for (int j = 0; phase == 1 && j < h.per_box && !piece.across.empty(); ++j) {
      std::vector<Spec> rings;
      for (Spec s : piece.across) {
        auto& at = *s.placement;
        at.input = at.output = at.input + static_cast<std::uint64_t>(j) * piece.part * element;
        rings.push_back(s);
      }
      runs.push_back({&rail(j), rings});
    }
    if (runs.empty()) return done();
    auto left = std::make_shared<std::size_t>(runs.size());
    for (auto& [comm, specs] : runs) {
      auto sub = comm->start_together(specs);
      sub->trace_row = p % kPhaseWindow;
      Handle* raw = sub.get();  // alive while its ranks' callbacks run, which call on_done
      sub->then([handle, left, raw, done] {
        handle->ok = handle->ok && raw->ok;
        handle->end_ps = std::max(handle->end_ps, raw->end_ps);
        if (--*left == 0) done();
      });
    }
  };
  auto finished = [this, handle] {
    handle->remaining = 0;
    const core::TimePs end = handle->end_ps;
    handle->rank_end_ps.assign(static_cast<std::size_t>(size()), end);
    for (int r = 0; r < size(); ++r) trace_rank(r, *handle, end);
    handle->finish(end);
  };
  auto pipeline =
      std::make_shared<PhasePipeline>(static_cast<int>(plan->pieces.size()), 3, std::move(launch),
                                      std::move(finished), kPhaseWindow);
  pipeline->start();
}

void Communicator::trace_rank(int r, const Handle& handle, core::TimePs end) const {
  core::TraceWriter& trace = core::trace_writer();
  if (!trace.enabled()) return;
  // Phases that run at once on one rank get rows of their own: one per operation, and one per
  // rail for the rings across boxes.
  std::string row = "collectives";
  if (runs_phases_) {
    row = fmt::format("phase_{}", to_string(handle.spec.op));
    if (handle.spec.op == Op::kAllReduce) row += "_rails";  // the phase across the boxes
    row += fmt::format("_{}", handle.trace_row);
  }
  const auto track = trace.track(fmt::format("{}.{}", model_.chip(chip(r)).name(), row));
  trace.span(track, fmt::format("{} {}", to_string(handle.spec.op), to_string(handle.algorithm)),
             handle.start_ps, end,
             {{"bytes", size_bytes(handle.spec)}, {"collective_id", handle.id}});
}

bool Communicator::connected() const {
  const auto& config = model_.config();
  const bool scale_out =
      config.network.kind != system::NetworkKind::kNone && config.scale_out.ports_per_chip > 0;
  if (scale_out) return true;
  if (config.box.wiring != system::BoxWiring::kLadder) return fully_linked();
  // One ladder's chips reach each other through neighbours: a ring in its order links them.
  const int box = chip(0) / config.box.chips;
  for (int r = 1; r < size(); ++r) {
    if (chip(r) / config.box.chips != box) return false;
  }
  return true;
}

std::uint64_t Communicator::buffers_end(const Spec& spec) const {
  const Layout l = layout(spec, size(), 0);
  return resolve(spec) == Algorithm::kHierarchical
             ? std::max(l.end, hierarchical_plan(with_across(spec), l, *hierarchy()).scratch_end)
             : l.end;
}

std::uint64_t Communicator::footprint(const Spec& spec) const {
  const Layout l = layout(spec, size(), 0);
  const std::uint64_t buffers =
      spec.in_place ? std::max(l.input_bytes, l.output_bytes) : l.input_bytes + l.output_bytes;
  // Scratch regions each algorithm writes, as measured (docs/collectives.md): the ring's
  // partials and arriving pieces fill two; the others land their peers' pieces in about one.
  const std::uint64_t regions = resolve(spec) == Algorithm::kRing ? 2 : 1;
  return std::min(buffers + regions * (l.scratch_bytes / 3), buffers_end(spec) - spec.base);
}

void Communicator::validate(const Spec& spec) const {
  const Algorithm algorithm = resolve(spec);
  if (algorithm == Algorithm::kHierarchical) check_hierarchical(spec);
  const std::uint64_t end = buffers_end(spec);
  const chip::Chip& first = model_.chip(chip(0));
  const std::uint64_t memory = first.memory_size(), from = first.memory_base();
  if (spec.base < from || end - from > memory) {
    throw std::invalid_argument(fmt::format(
        "{} of {} bytes needs {} bytes of chip memory from {:#x}; the chips have {} from {:#x}",
        to_string(spec.op), size_bytes(spec), end - spec.base, spec.base, memory, from));
  }
  if (!supports(algorithm, spec.op)) {
    throw std::invalid_argument(
        fmt::format("the {} algorithm does not run {}", to_string(algorithm), to_string(spec.op)));
  }
  if (on_ladders() && algorithm != Algorithm::kRing) {
    throw std::invalid_argument(fmt::format(
        "the {} algorithm needs links IPU-Link ladders do not have: only the ring runs there "
        "(GCL's rings, over the ladder's ring order)",
        to_string(algorithm)));
  }
  if (spec.rings > 1 && (algorithm != Algorithm::kRing ||
                         !(spec.op == Op::kAllReduce || spec.op == Op::kReduceScatter ||
                           spec.op == Op::kAllGather))) {
    throw std::invalid_argument(
        "several rings: only the ring all_reduce, reduce_scatter and all_gather run on several "
        "rings");
  }
  if (spec.pipeline > 1 && algorithm != Algorithm::kHierarchical) {
    throw std::invalid_argument("a pipeline depth applies to the hierarchical algorithm only");
  }
  if (!connected()) {
    throw std::invalid_argument(
        "the ranks span several boxes and the system has no scale-out network to join them");
  }
  if (spec.reduce_engine == Spec::ReduceEngine::kTpc && reduces(spec.op) && coarse()) {
    throw std::invalid_argument(
        "reductions on TPCs: coarse chips reduce at their DMA engines' rate only (use detailed "
        "chips, or reduce on dma)");
  }
  if (spec.reduce_engine == Spec::ReduceEngine::kTpc && reduces(spec.op)) {
    for (int r = 0; r < size(); ++r) {
      if (model_.chip(chip(r)).tpc_cores() == 0) {
        throw std::invalid_argument(
            fmt::format("reductions on TPCs: {} has no TPC (chip.tpc.cores is 0)",
                        model_.chip(chip(r)).name()));
      }
    }
  }
}

std::shared_ptr<Handle> Communicator::start(const Spec& spec) {
  validate(spec);
  if (resolve(spec) == Algorithm::kHierarchical) {
    const Spec decided = with_across(spec);
    auto handle = new_handle(decided, Algorithm::kHierarchical);
    handle->remaining = 1;
    start_hierarchical(decided, layout(decided, size(), 0), handle);
    return handle;
  }
  return start_together({spec});
}

std::shared_ptr<Handle> Communicator::new_handle(const Spec& spec, Algorithm algorithm) const {
  auto handle = std::make_shared<Handle>();
  handle->spec = spec;
  handle->ranks = size();
  handle->id = next_collective_id();
  handle->start_ps = core::now_ps();
  handle->remaining = size();
  handle->rank_end_ps.assign(static_cast<std::size_t>(size()), 0);
  handle->algorithm = algorithm;
  return handle;
}

void Communicator::open() {
  std::vector<int> here;
  for (int c : chips_) {
    if (model_.simulates(c)) here.push_back(c);
  }
  std::string error;
  if (!coarse()) {
    try {
      model_.attached<Launcher>().open(here);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  }
  // Every rank's host tells the others it is ready (or not): one point, after the last chip's
  // set-up anywhere, from which the collectives start.
  int left = size(), failed = 0;
  sc_core::sc_event all_heard;
  system::HostNotices& notices = model_.notices();
  const std::uint64_t channel = notices.open([&](const system::Notice& n) {
    failed += n.value == 0 ? 1 : 0;
    if (--left == 0) core::notify_now(all_heard);
  });
  for (int c : here) notices.post(channel, c, error.empty() ? 1 : 0, tuning_.notice_latency.ps);
  while (left > 0) sc_core::wait(all_heard);
  notices.close(channel);
  if (!error.empty()) throw std::runtime_error(error);
  if (failed > 0) {
    throw std::runtime_error(fmt::format(
        "collectives: {} ranks' devices could not be opened (in another process)", failed));
  }
}

bool Communicator::coarse() const { return model_.chip_model() == system::ChipModel::kCoarse; }

CommandCompiler::PeerOf Communicator::peer_of() const {
  auto peers = std::make_shared<std::map<std::pair<int, std::uint32_t>, int>>();
  for (const auto& [key, qpn] : qps_) (*peers)[{std::get<0>(key), qpn}] = std::get<1>(key);
  return [peers](int rank, std::uint32_t qpn) {
    auto it = peers->find({rank, qpn});
    return it == peers->end() ? -1 : it->second;
  };
}

std::shared_ptr<Handle> Communicator::start_together(const std::vector<Spec>& specs) {
  if (specs.empty()) throw std::invalid_argument("start_together: no collective to start");
  std::vector<std::pair<Spec, Algorithm>> runs;
  for (const Spec& spec : specs) {
    validate(spec);
    const Algorithm algorithm = resolve(spec);
    if (algorithm == Algorithm::kHierarchical) {
      throw std::invalid_argument("start_together: a hierarchical collective runs on its own");
    }
    runs.push_back({spec, algorithm});
  }
  auto handle = new_handle(specs.front(), runs.front().second);
  auto finished = [this, handle](int r, bool ok, core::TimePs end) {
    trace_rank(r, *handle, end);
    handle->ok = handle->ok && ok;
    handle->rank_end_ps[static_cast<std::size_t>(r)] = end;
    if (--handle->remaining == 0) {
      handle->finish(*std::max_element(handle->rank_end_ps.begin(), handle->rank_end_ps.end()));
    }
  };
  const core::TimePs notice = tuning_.notice_latency.ps;
  if (coarse()) {
    std::vector<Program> programs(static_cast<std::size_t>(size()));
    for (int r = 0; r < size(); ++r) {
      for (const auto& [spec, algorithm] : runs) {
        append(programs[static_cast<std::size_t>(r)], program(spec, algorithm, r));
      }
    }
    model_.attached<DirectLauncher>().launch(chips_, std::move(programs), peer_of(), finished,
                                             tuning_.coarse_launch_latency.ps, notice);
    return handle;
  }
  Launcher& launcher = model_.attached<Launcher>();
  launcher.launch(chips_, compile(runs, launcher), finished, notice);
  return handle;
}

// The collective's command buffers; when they do not fit the chips, chunks twice as large (the
// result is the same bit for bit: every element is reduced in the same order), as HCCL picks its
// slice size.
std::shared_ptr<const CommandCompiler> Communicator::compile(
    std::vector<std::pair<Spec, Algorithm>> runs, const Launcher& launcher) {
  const bool on_tpcs = std::any_of(runs.begin(), runs.end(), [](const auto& run) {
    return run.first.reduce_engine == Spec::ReduceEngine::kTpc && reduces(run.first.op);
  });
  std::vector<ChipGeometry> geometry;
  for (int r = 0; r < size(); ++r) geometry.push_back(launcher.geometry(chip(r), on_tpcs));
  constexpr int kTries = 16;
  for (int attempt = 0;; ++attempt) {
    std::vector<Program> programs(static_cast<std::size_t>(size()));
    for (int r = 0; r < size(); ++r) {
      for (const auto& [spec, algorithm] : runs) {
        append(programs[static_cast<std::size_t>(r)], program(spec, algorithm, r));
      }
    }
    auto code = std::make_shared<CommandCompiler>(programs, peer_of(), geometry);
    if (launcher.fits(*code, chips_) || attempt == kTries) return code;
    for (auto& run : runs) run.first.chunk_bytes *= 2;
  }
}

}  // namespace podsim::collectives
