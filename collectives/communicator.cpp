#include "collectives/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "collectives/mesh.h"
#include "collectives/ring.h"
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
  return fully_linked() ? Algorithm::kMesh : Algorithm::kRing;
}

chip::Program Communicator::program(const Spec& spec, Algorithm algorithm, int rank) {
  const int n = size();
  if (n == 1) return ring_program(spec, 1, 0, 0);
  if (algorithm == Algorithm::kMesh) {
    const int lanes = model_.config().box.links_per_peer;
    return mesh_program(spec, n, rank, lanes,
                        [this, rank](int peer, int lane) { return qp(rank, peer, lane); });
  }
  return ring_program(spec, n, rank, qp(rank, (rank + 1) % n));
}

std::shared_ptr<Handle> Communicator::start(const Spec& spec) {
  const int n = size();
  const Layout l = layout(spec, n, 0);  // validates the spec
  const std::uint64_t memory = model_.memory(chip(0)).config().size.bytes;
  if (l.end > memory) {
    throw std::invalid_argument(
        fmt::format("{} of {} bytes needs {} bytes of chip memory from {:#x}; the chips have {}",
                    to_string(spec.op), size_bytes(spec), l.end - spec.base, spec.base, memory));
  }
  auto handle = std::make_shared<Handle>();
  handle->spec = spec;
  handle->ranks = n;
  handle->id = next_collective_id();
  handle->start_ps = core::now_ps();
  handle->remaining = n;
  const Algorithm algorithm = resolve(spec);
  if (algorithm == Algorithm::kMesh && !fully_linked()) {
    throw std::invalid_argument(
        "the mesh algorithm needs every pair of ranks directly linked "
        "(ranks in one all-to-all box)");
  }
  handle->algorithm = algorithm;
  std::vector<chip::Program> programs;
  for (int r = 0; r < n; ++r) programs.push_back(program(spec, algorithm, r));
  for (int r = 0; r < n; ++r) {
    auto finished = [handle](bool ok) {
      handle->ok = handle->ok && ok;
      if (--handle->remaining == 0) {
        handle->end_ps = core::now_ps();
        handle->finished.notify(sc_core::SC_ZERO_TIME);
      }
    };
    model_.sequencer(chip(r)).start(handle->id, std::move(programs[r]), finished);
  }
  return handle;
}

}  // namespace podsim::collectives
