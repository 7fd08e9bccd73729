#include "collectives/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "collectives/mesh.h"
#include "collectives/ring.h"
#include "collectives/schedule.h"
#include "hw/core/kernel.h"

namespace podsim::collectives {

namespace {
// Collective ids are shared by every communicator, so collectives that meet on one chip never
// share signals; an id comes back into use after Sequencer::kMaxPrograms others.
int next_collective_id() {
  static int next = 0;
  const int id = next;
  next = (next + 1) % chip::Sequencer::kMaxPrograms;
  return id;
}
}  // namespace

Communicator::Communicator(system::SystemModel& model, std::vector<int> chips)
    : model_(model), chips_(std::move(chips)) {
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
    out.emplace(color, Communicator(model_, std::move(chips)));
  }
  return out;
}

std::uint32_t Communicator::qp(int from, int to, int lane) {
  const auto key = std::make_tuple(from, to, lane);
  if (auto it = qps_.find(key); it != qps_.end()) return it->second;
  const int a = chip(from), b = chip(to);
  const auto [port_a, port_b] =
      system::ports_between(model_.topology(), model_.config(), a, b, lane);
  const std::uint32_t qa = model_.sequencer(a).create_qp(port_a);
  const std::uint32_t qb = model_.sequencer(b).create_qp(port_b);
  model_.nic(a).connect_qp(qa, model_.address(b, port_b), qb);
  model_.nic(b).connect_qp(qb, model_.address(a, port_a), qa);
  qps_[key] = qa;
  qps_[std::make_tuple(to, from, lane)] = qb;
  return qa;
}

bool Communicator::fully_linked() const {
  for (int a = 0; a < size(); ++a) {
    for (int b = a + 1; b < size(); ++b) {
      if (!system::directly_linked(model_.config(), chip(a), chip(b))) return false;
    }
  }
  return true;
}

Algorithm Communicator::resolve(const Spec& spec) const {
  if (spec.algorithm != Algorithm::kAuto) return spec.algorithm;
  if (fully_linked()) return Algorithm::kMesh;
  const auto h = hierarchy();
  if (spec.op == Op::kAllReduce && h && h->per_box > 1 &&
      spec.count % static_cast<std::uint64_t>(h->per_box) == 0) {
    return Algorithm::kHierarchical;
  }
  return Algorithm::kRing;
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
}

chip::Program Communicator::program(const Spec& spec, Algorithm algorithm, int rank) {
  const int n = size();
  if (n == 1) return ring_program(spec, 1, 0, 0);
  if (algorithm == Algorithm::kMesh) {
    const int lanes = model_.config().box.links_per_peer;
    return mesh_program(spec, n, rank, lanes,
                        [this, rank](int peer, int lane) { return qp(rank, peer, lane); });
  }
  return ring_program(spec, n, rank, qp(rank, (rank + 1) % n, spec.lane));
}

Communicator& Communicator::box(int b) {
  const auto h = *hierarchy();
  if (boxes_.empty()) {
    for (int i = 0; i < h.boxes; ++i) {
      std::vector<int> chips;
      for (int j = 0; j < h.per_box; ++j) chips.push_back(chip(i * h.per_box + j));
      boxes_.push_back(std::make_unique<Communicator>(model_, chips));
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
      rails_.push_back(std::make_unique<Communicator>(model_, chips));
    }
  }
  return *rails_[static_cast<std::size_t>(local)];
}

// Reduce-scatter in every box over its mesh, then all-reduce of each rank's segment across the
// boxes (a ring per scale-out rail, each on a slice of the segment), then all-gather in every
// box. Each phase starts when the one before has finished everywhere.
void Communicator::start_hierarchical(const Spec& spec, const Layout& l,
                                      const std::shared_ptr<Handle>& handle) {
  const Hierarchy h = *hierarchy();
  const std::uint64_t element = core::size_of(spec.type);
  const std::uint64_t part = spec.count / static_cast<std::uint64_t>(h.per_box);
  const Spec::Placement whole{l.input, l.output, l.scratch};
  Spec box_spec = spec;
  box_spec.algorithm = Algorithm::kMesh;
  box_spec.lane = 0;
  // The phases hold run_phase, which must not own them back: the pending sub-collectives do.
  auto phases = std::make_shared<std::vector<std::function<void()>>>();
  std::weak_ptr<std::vector<std::function<void()>>> weak = phases;
  auto run_phase = [handle, weak](std::vector<std::pair<Communicator*, Spec>> runs,
                                  std::size_t next) {
    auto left = std::make_shared<int>(static_cast<int>(runs.size()));
    for (auto& [comm, s] : runs) {
      auto sub = comm->start(s);
      Handle* raw = sub.get();  // alive while its ranks' callbacks run, which call on_done
      sub->then([handle, phases = weak.lock(), left, raw, next] {
        handle->ok = handle->ok && raw->ok;
        if (--*left > 0) return;
        if (next < phases->size()) {
          (*phases)[next]();
        } else {
          handle->remaining = 0;
          handle->finish();
        }
      });
    }
  };
  phases->push_back([this, h, box_spec, whole, run_phase] {
    std::vector<std::pair<Communicator*, Spec>> runs;
    for (int b = 0; b < h.boxes; ++b) {
      Spec s = box_spec;
      s.op = Op::kReduceScatter;
      s.placement = whole;
      s.in_place = whole.input == whole.output;
      runs.push_back({&box(b), s});
    }
    run_phase(std::move(runs), 1);
  });
  phases->push_back([this, h, spec, whole, part, element, run_phase] {
    std::vector<std::pair<Communicator*, Spec>> runs;
    for (int j = 0; j < h.per_box; ++j) {
      for (int lane = 0; lane < h.lanes; ++lane) {
        const auto [offset, length] = part_of(part, static_cast<std::uint64_t>(h.lanes), lane);
        if (length == 0) continue;
        Spec s = spec;
        s.op = Op::kAllReduce;
        s.algorithm = Algorithm::kRing;
        s.count = length;
        s.lane = lane;
        const std::uint64_t at = whole.output + (j * part + offset) * element;
        const std::uint64_t scratch =
            whole.scratch + static_cast<std::uint64_t>(lane) * layout(s, h.boxes, 0).scratch_bytes;
        s.placement = Spec::Placement{at, at, scratch};
        s.in_place = true;
        runs.push_back({&rail(j), s});
      }
    }
    run_phase(std::move(runs), 2);
  });
  phases->push_back([this, h, box_spec, whole, run_phase] {
    std::vector<std::pair<Communicator*, Spec>> runs;
    for (int b = 0; b < h.boxes; ++b) {
      Spec s = box_spec;
      s.op = Op::kAllGather;
      s.placement = Spec::Placement{whole.output, whole.output, whole.scratch};
      s.in_place = true;
      runs.push_back({&box(b), s});
    }
    run_phase(std::move(runs), 3);
  });
  (*phases)[0]();
}

void Communicator::validate(const Spec& spec) const {
  const Layout l = layout(spec, size(), 0);
  const std::uint64_t memory = model_.memory(chip(0)).config().size.bytes;
  if (l.end > memory) {
    throw std::invalid_argument(
        fmt::format("{} of {} bytes needs {} bytes of chip memory from {:#x}; the chips have {}",
                    to_string(spec.op), size_bytes(spec), l.end - spec.base, spec.base, memory));
  }
  const Algorithm algorithm = resolve(spec);
  if (algorithm == Algorithm::kMesh && !fully_linked()) {
    throw std::invalid_argument(
        "the mesh algorithm needs every pair of ranks directly linked (ranks in one all-to-all "
        "box)");
  }
  if (algorithm == Algorithm::kHierarchical) check_hierarchical(spec);
}

std::shared_ptr<Handle> Communicator::start(const Spec& spec) {
  validate(spec);
  const int n = size();
  const Layout l = layout(spec, n, 0);
  auto handle = std::make_shared<Handle>();
  handle->spec = spec;
  handle->ranks = n;
  handle->id = next_collective_id();
  handle->start_ps = core::now_ps();
  handle->remaining = n;
  const Algorithm algorithm = resolve(spec);
  handle->algorithm = algorithm;
  if (algorithm == Algorithm::kHierarchical) {
    handle->remaining = 1;
    start_hierarchical(spec, l, handle);
    return handle;
  }
  std::vector<chip::Program> programs;
  for (int r = 0; r < n; ++r) programs.push_back(program(spec, algorithm, r));
  for (int r = 0; r < n; ++r) {
    auto finished = [handle](bool ok) {
      handle->ok = handle->ok && ok;
      if (--handle->remaining == 0) handle->finish();
    };
    model_.sequencer(chip(r)).start(handle->id, std::move(programs[r]), finished);
  }
  return handle;
}

}  // namespace podsim::collectives
