#include "synapse/fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "hw/tpc/assembler.h"
#include "hw/tpc/isa.h"

namespace podsim::synapse {
namespace {

enum class Kind { kBias, kUnary, kBinary };

Kind kind_of(const std::string& kernel) {
  if (kernel == "bias_add") return Kind::kBias;
  if (kernel == "relu" || kernel == "gelu") return Kind::kUnary;
  return Kind::kBinary;
}

bool fusable(const Node& n) {
  static const std::set<std::string> ops{"bias_add", "relu", "gelu", "add",
                                         "sub",      "mul",  "min",  "max"};
  const Dtype t = n.kernel.dtype;
  return n.kind == NodeKind::kKernel && ops.count(n.kernel.kernel) != 0 &&
         n.kernel.params.empty() && (t == Dtype::kF32 || t == Dtype::kBf16 || t == Dtype::kF16) &&
         !n.kernel.shape.empty();
}

TensorId result(const Node& n) { return n.operands.back(); }

// One step of a chain: the node, and for a bias or a binary operation its other operand and
// whether the chain's value is the left one.
struct Step {
  const Node* node;
  Kind kind;
  TensorId other = -1;
  bool chain_left = true;
  bool store = false;  // its result is needed outside the chain
};

// Whether `next` takes `value` as its chain input, and how.
bool continues(const Node& next, TensorId value, Step& step) {
  step = Step{&next, kind_of(next.kernel.kernel)};
  const TensorId a = next.operands[0];
  if (step.kind == Kind::kUnary) return a == value;
  const TensorId b = next.operands[1];
  if (step.kind == Kind::kBias) {
    step.other = b;
    return a == value && b != value;
  }
  if ((a == value) == (b == value)) return false;  // neither, or both sides
  step.chain_left = a == value;
  step.other = step.chain_left ? b : a;
  return true;
}

// The chain is computed in the tensors' type, a vector of 256 bytes at a time (every VPU
// operation computes in f32 and rounds once, as the library's kernels do); a chain with a GELU
// is computed in f32 throughout, 64 lanes at a time, as the library's GELU is.
// A chain without a bias streams its tensors as one dimension, eight vectors a point in memory
// order, as the library's element-wise kernels do (binary.tpcs); a bias needs the column of each
// element, so a chain with one walks [C, R], a point eight vectors of one row, the points of a
// row in turn and the rows in turn: memory order again, so that every tensor streams (the bias
// restarting at each row), as the library's bias_add walks its rows.
class Writer {
 public:
  Writer(const Graph& g, const std::vector<Step>& steps, Dtype t, tpc::Generation generation)
      : g_(g), steps_(steps), generation_(generation) {
    const bool wide = std::any_of(steps.begin(), steps.end(),
                                  [](const Step& s) { return s.node->kernel.kernel == "gelu"; });
    flat_ = std::none_of(steps.begin(), steps.end(),
                         [](const Step& s) { return s.kind == Kind::kBias; });
    lanes_ = wide ? 64 : 256 / tpc::info(t).bytes;
    compute_ = wide ? "f32" : "{T}";
    load_ = wide ? "ld_tnsr.f32.{T}" : "ld_tnsr.{T}";
    store_ = wide ? "st_tnsr.{T}.f32" : "st_tnsr.{T}";
    zero_ = wide ? "0.0" : "0";
    // One bias whose vectors fit vector local memory is read from memory once a core.
    const std::uint32_t columns = steps.front().node->kernel.shape[0];
    const auto biases = std::count_if(steps.begin(), steps.end(),
                                      [](const Step& s) { return s.kind == Kind::kBias; });
    octets_ = (columns + kFlatSlots * lanes_ - 1) / (kFlatSlots * lanes_);
    vlm_bias_ = biases == 1 && octets_ * kFlatSlots <= kVlmVectors;
  }
  Fusion build(std::size_t first);

 private:
  static constexpr int kFlatSlots = 8;     // vectors a point
  static constexpr int kVlmVectors = 320;  // 80 KiB of vector local memory

  int tensor_index(TensorId id, bool bias);
  void header();
  void step(const Step& s);
  void store(int tensor);

  const Graph& g_;
  const std::vector<Step>& steps_;
  tpc::Generation generation_;
  std::vector<TensorId> tensors_;  // by kernel tensor index
  std::vector<bool> bias_;
  std::string code_, key_;
  bool flat_;
  int lanes_;
  int octets_;     // a row's points (with a bias)
  bool vlm_bias_;  // the bias copied to vector local memory first
  std::string compute_, load_, store_, zero_;
};

int Writer::tensor_index(TensorId id, bool bias) {
  const auto it = std::find(tensors_.begin(), tensors_.end(), id);
  if (it != tensors_.end()) return static_cast<int>(it - tensors_.begin());
  tensors_.push_back(id);
  bias_.push_back(bias);
  return static_cast<int>(tensors_.size() - 1);
}

// Streaming: index space [ceil(n / (8 lanes))], a point eight consecutive vectors. With a bias:
// [ceil(C / (8 lanes)), R], a point eight consecutive vectors of a row. Either way the point's
// vectors are loaded into v0.., their coordinates in i2...
void Writer::header() {
  if (flat_) {
    code_ += fmt::format(
        ".sched\n        get_i s10, i0, 0\n        get_i s11, i1, 0\n"
        "        mul.i32 s12, s10, {}\n",
        kFlatSlots * lanes_);
    for (int j = 0; j < kFlatSlots; ++j) {
      code_ +=
          fmt::format("        set_i i{0}, 0b00001, s12\n        add_i i{0}, i{0}, 0b00001, {1}\n",
                      2 + j, j * lanes_);
    }
    code_ += "        loop s10, s11, points_done\n";
  } else {
    code_ += ".sched\n";
    if (vlm_bias_) {
      const Step& b = *std::find_if(steps_.begin(), steps_.end(),
                                    [](const Step& s) { return s.kind == Kind::kBias; });
      const int k = tensor_index(b.other, true);
      code_ += fmt::format(
          "        mov.i32 s17, 0\n        mov.i32 s18, 0\n        mov.i32 s19, {}\n", octets_);
      for (int j = 0; j < kFlatSlots; ++j)
        code_ += fmt::format("        set_i i{}, 0b00001, {}\n", 2 + j, j * lanes_);
      code_ += "        loop s17, s19, bias_done\n";
      for (int j = 0; j < kFlatSlots; ++j)
        code_ += fmt::format("        {} v{}, i{}, {}\n", load_, j, 2 + j, k);
      for (int j = 0; j < kFlatSlots; ++j) {
        code_ +=
            fmt::format("        st_vlm_inc s18, v{0}\n        add_i i{1}, i{1}, 0b00001, {2}\n", j,
                        2 + j, kFlatSlots * lanes_);
      }
      code_ += "bias_done:\n";
    }
    // A row's coordinates are set once, where its points start; a point's step them on to the
    // next point's after its stores (build), so that its loads need no set-up.
    code_ += fmt::format(
        "        get_i s10, i0, 1\n        get_i s11, i1, 1\n        get_i s12, i0, 0\n"
        "        get_i s13, i1, 0\n        mul.i32 s15, s12, {}\n"
        "        loop s10, s11, rows_done\n        mov.i32 s14, s12\n",
        kFlatSlots * lanes_);
    for (int j = 0; j < kFlatSlots; ++j) {
      code_ += fmt::format(
          "        set_i i{0}, 0b00001, s15\n        add_i i{0}, i{0}, 0b00001, {1}\n"
          "        set_i i{0}, 0b00010, s10\n",
          2 + j, j * lanes_);
    }
    code_ += "        loop s14, s13, cols_done\n";
  }
  for (int r = 0; r < kFlatSlots; ++r)
    code_ += fmt::format("        {} v{}, i{}, 0\n", load_, r, 2 + r);
}

// The chain's value sits in v0.., another operand's vectors in v(slots).., the GELU's
// temporaries from v(2 slots) on.
void Writer::step(const Step& s) {
  const std::string& op = s.node->kernel.kernel;
  const int other = kFlatSlots;
  if (s.kind == Kind::kBias) {
    const int k = tensor_index(s.other, true);  // one dimension: the coordinates' row is ignored
    if (vlm_bias_) {
      code_ += "        shl.i32 s16, s14, 11\n";  // the point's octet of the bias, 2048 bytes each
      for (int r = 0; r < kFlatSlots; ++r)
        code_ += fmt::format("        ld_vlm_inc v{}, s16\n", other + r);
    } else {
      for (int r = 0; r < kFlatSlots; ++r)
        code_ += fmt::format("        {} v{}, i{}, {}\n", load_, other + r, 2 + r, k);
    }
    for (int r = 0; r < kFlatSlots; ++r)
      code_ += fmt::format("        add.{1} v{0}, v{0}, v{2}\n", r, compute_, other + r);
    key_ += fmt::format("+bias{}", k);
  } else if (s.kind == Kind::kBinary) {
    const int k = tensor_index(s.other, false);
    for (int r = 0; r < kFlatSlots; ++r)
      code_ += fmt::format("        {} v{}, i{}, {}\n", load_, other + r, 2 + r, k);
    for (int r = 0; r < kFlatSlots; ++r) {
      code_ += s.chain_left
                   ? fmt::format("        {0}.{3} v{1}, v{1}, v{2}\n", op, r, other + r, compute_)
                   : fmt::format("        {0}.{3} v{1}, v{2}, v{1}\n", op, r, other + r, compute_);
    }
    key_ += fmt::format("+{}{}{}", op, s.chain_left ? "" : "r", k);
  } else if (op == "relu") {
    for (int r = 0; r < kFlatSlots; ++r)
      code_ += fmt::format("        max.{1} v{0}, v{0}, {2}\n", r, compute_, zero_);
    key_ += "+relu";
  } else {  // gelu, the tanh form in the library kernel's seven steps (gelu.tpcs)
    // u = x (c + c 0.044715 x^2) in v(t), then h = x / 2 in the value's own register, and
    // h + tanh(u) h as one multiply-add; each step for every vector in turn, so that each
    // result has the other vectors' steps to hide its latency behind.
    static constexpr const char* kSteps[] = {
        "mul.f32 v{1}, v{0}, v{0}",         "mul.f32 v{1}, v{1}, 0.03567740814",
        "add.f32 v{1}, v{1}, 0.7978845608", "mul.f32 v{1}, v{1}, v{0}",
        "mul.f32 v{0}, v{0}, 0.5",          "tanh.f32 v{1}, v{1}",
        "mac.f32 v{0}, v{1}, v{0}"};
    for (const char* step : kSteps) {
      for (int r = 0; r < kFlatSlots; ++r)
        code_ += "        " + fmt::format(fmt::runtime(step), r, 2 * kFlatSlots + 2 * r) + "\n";
    }
    key_ += "+gelu";
  }
  if (s.store) store(tensor_index(result(*s.node), false));
}

void Writer::store(int tensor) {
  for (int r = 0; r < kFlatSlots; ++r)
    code_ += fmt::format("        {} i{}, {}, v{}\n", store_, 2 + r, tensor, r);
  key_ += fmt::format(">{}", tensor);
}

Fusion Writer::build(std::size_t first) {
  const Node& head = *steps_.front().node;
  const Dtype t = head.kernel.dtype;
  const std::vector<std::uint32_t>& shape = head.kernel.shape;
  const std::uint32_t columns = shape[0];
  std::uint64_t elements = 1;
  for (std::uint32_t s : shape) elements *= s;
  const auto rows = static_cast<std::uint32_t>(elements / columns);
  tensor_index(head.operands[0], false);
  header();
  for (const Step& s : steps_) step(s);
  // The point's coordinates move on to the next one's (after every store).
  for (int j = 0; j < kFlatSlots; ++j)
    code_ += fmt::format("        add_i i{0}, i{0}, 0b00001, {1}\n", 2 + j, kFlatSlots * lanes_);
  code_ += flat_ ? "points_done:\n        halt\n.endsched\n"
                 : "cols_done:\nrows_done:\n        halt\n.endsched\n";

  Fusion f;
  f.first = first;
  f.last = first + steps_.size() - 1;
  f.source = code_;
  const std::string name = tpc::info(t).name;
  const tpc::Assembly a = tpc::assemble(code_, {"fused " + key_, {{"T", name}}, generation_});
  f.binary = tpc::serialize_binary(a.bundles, a.generation);
  const std::string key = fmt::format("fused{}.{}", key_, name);
  tpc::KernelPlan& p = f.plan;
  p.request = tpc::KernelRequest{key, t, {}, shape, {}};
  std::vector<std::string> names;
  for (const Step& s : steps_) names.push_back(s.node->name);
  f.node = Node{};
  f.node.name = fmt::format("{}", fmt::join(names, "+"));
  f.node.kind = NodeKind::kKernel;
  f.node.kernel = p.request;
  tpc::LaunchSpec launch;
  launch.binary = key;
  const std::uint64_t per_point = std::uint64_t{kFlatSlots} * static_cast<std::uint64_t>(lanes_);
  launch.index_space =
      flat_ ? tpc::Coord{static_cast<std::int32_t>((elements + per_point - 1) / per_point), 1, 1, 1,
                         1}
            : tpc::Coord{static_cast<std::int32_t>((columns + per_point - 1) / per_point),
                         static_cast<std::int32_t>(rows), 1, 1, 1};
  std::array<tpc::Coord, tpc::kMaxTensors> scale{};
  std::set<TensorId> outputs{result(*steps_.back().node)};
  for (const Step& s : steps_) {
    if (s.store) outputs.insert(result(*s.node));
  }
  for (std::size_t k = 0; k < tensors_.size(); ++k) {
    const TensorId id = tensors_[k];
    const bool out = outputs.count(id) != 0;
    const Tensor& tensor = g_.tensor(id);
    p.buffers.push_back(
        tpc::BufferSpec{tensor.name,
                        t,
                        bias_[k] ? std::vector<std::uint32_t>{columns} : shape,
                        out ? tpc::BufferSpec::Role::kOutput : tpc::BufferSpec::Role::kInput,
                        {}});
    if (flat_) {
      launch.tensors[k] =
          tpc::TensorView{static_cast<int>(k), t, {static_cast<std::uint32_t>(elements)}, {1}, 0};
      scale[k] = tpc::Coord{static_cast<std::int32_t>(per_point)};
    } else {
      const std::vector<std::uint32_t> dims = bias_[k] ? std::vector<std::uint32_t>{columns}
                                                       : std::vector<std::uint32_t>{columns, rows};
      launch.tensors[k] = tpc::TensorView{
          static_cast<int>(k), t, dims,
          bias_[k] ? std::vector<std::uint64_t>{1} : std::vector<std::uint64_t>{1, columns}, 0};
      const auto octet = static_cast<std::int32_t>(per_point);
      scale[k] = bias_[k] ? tpc::Coord{octet, 0} : tpc::Coord{octet, 1};
    }
    f.node.operands.push_back(id);
    (out ? f.node.writes : f.node.reads).push_back(id);
  }
  launch.access_scale = scale;
  p.launches.push_back(launch);
  p.flops = static_cast<double>(elements) * static_cast<double>(steps_.size());
  for (const tpc::BufferSpec& b : p.buffers) p.min_bytes += static_cast<double>(b.bytes());
  return f;
}

// A library kernel whose last launch writes its result element by element and can add a
// residual to it and clamp it at 0 ("residual" and "relu" parameters): the operand that result
// is, and where the residual's operand goes (before it).
struct Epilogue {
  const char* kernel;
  std::size_t output;
};
constexpr std::array<Epilogue, 1> kEpilogues{{{"batch_norm", 3}}};

// Whether `n` is the element-wise kernel `kernel` of the library, with no parameters, in type t.
bool is_plain(const Node& n, const char* kernel, Dtype t) {
  return n.kind == NodeKind::kKernel && n.kernel.kernel == kernel && n.kernel.params.empty() &&
         n.kernel.dtype == t;
}

// `nodes[at]`, an epilogue kernel, followed by an add of its result and another tensor of its
// size (the residual), then a ReLU of that, or by either alone, each taking a result nothing
// else reads: one node, the kernel with residual = 1 and relu = 1 as they apply, writing the
// last one's tensor.
std::optional<Fusion> norm_epilogue(const Graph& g, const std::vector<Node>& nodes, std::size_t at,
                                    const std::vector<int>& readers) {
  const Node& node = nodes[at];
  if (node.kind != NodeKind::kKernel ||
      node.kernel.params.size() != node.kernel.params.count("eps")) {
    return std::nullopt;  // already fused, or parameters the fused kernel would not keep
  }
  const auto e = std::find_if(kEpilogues.begin(), kEpilogues.end(),
                              [&](const Epilogue& x) { return node.kernel.kernel == x.kernel; });
  if (e == kEpilogues.end() || node.operands.size() <= e->output) return std::nullopt;
  const Dtype t = node.kernel.dtype;
  TensorId value = node.operands[e->output];
  const auto taken = [&](TensorId id) {  // a result only the next node reads
    return readers[static_cast<std::size_t>(id)] == 1 &&
           g.tensor(id).kind != TensorKind::kPersistent;
  };
  const std::uint64_t size = g.tensor(value).elements();
  std::size_t next = at + 1;
  TensorId residual = -1;
  if (next < nodes.size() && is_plain(nodes[next], "add", t) && taken(value)) {
    const Node& add = nodes[next];
    const TensorId a = add.operands[0], b = add.operands[1];
    const TensorId other = a == value ? b : a;
    if ((a == value) != (b == value) && g.tensor(other).elements() == size &&
        g.tensor(add.operands[2]).elements() == size) {
      residual = other;
      value = add.operands[2];
      ++next;
    }
  }
  bool relu = false;
  if (next < nodes.size() && is_plain(nodes[next], "relu", t) && nodes[next].operands[0] == value &&
      taken(value) && g.tensor(nodes[next].operands[1]).elements() == size) {
    relu = true;
    value = nodes[next].operands[1];
    ++next;
  }
  if (next == at + 1) return std::nullopt;
  Fusion f;
  f.first = at;
  f.last = next - 1;
  f.node = node;
  std::vector<std::string> names;
  for (std::size_t i = at; i < next; ++i) names.push_back(nodes[i].name);
  f.node.name = fmt::format("{}", fmt::join(names, "+"));
  f.node.operands[e->output] = value;
  f.node.writes.erase(
      std::remove(f.node.writes.begin(), f.node.writes.end(), node.operands[e->output]),
      f.node.writes.end());
  f.node.writes.push_back(value);
  if (residual >= 0) {
    f.node.kernel.params["residual"] = 1;
    f.node.operands.insert(f.node.operands.begin() + static_cast<std::ptrdiff_t>(e->output),
                           residual);
    f.node.reads.push_back(residual);
  }
  if (relu) f.node.kernel.params["relu"] = 1;
  f.plan = tpc::plan_kernel(f.node.kernel);
  return f;
}

// `nodes[at]`, a max pool's backward, followed by the gradient of the ReLU whose output the pool
// read (relu_bwd taking the pool's dx and its x), dx read by nothing else: one node, the pool's
// backward with relu = 1 writing the ReLU's gradient (the ReLU's zeros are where the pool's
// windows have a maximum of 0, which pass nothing).
std::optional<Fusion> pool_relu(const Graph& g, const std::vector<Node>& nodes, std::size_t at,
                                const std::vector<int>& readers) {
  const Node& pool = nodes[at];
  if (pool.kind != NodeKind::kKernel || pool.kernel.kernel != "max_pool_bwd" ||
      pool.kernel.params.count("relu") != 0 || at + 1 >= nodes.size()) {
    return std::nullopt;
  }
  const Node& relu = nodes[at + 1];
  const TensorId dx = pool.operands[3];
  if (!is_plain(relu, "relu_bwd", pool.kernel.dtype) || relu.operands[0] != dx ||
      relu.operands[1] != pool.operands[1] || readers[static_cast<std::size_t>(dx)] != 1 ||
      g.tensor(dx).kind == TensorKind::kPersistent) {
    return std::nullopt;
  }
  Fusion f;
  f.first = at;
  f.last = at + 1;
  f.node = pool;
  f.node.name = pool.name + "+" + relu.name;
  f.node.kernel.params["relu"] = 1;
  f.node.operands[3] = relu.operands[2];
  f.node.writes = {relu.operands[2]};
  f.plan = tpc::plan_kernel(f.node.kernel);
  return f;
}

}  // namespace

std::vector<Fusion> find_fusions(const Graph& graph, tpc::Generation generation) {
  const std::vector<Node>& nodes = graph.nodes();
  // Per tensor, how many nodes read it and write it.
  std::vector<int> readers(graph.tensors().size(), 0), writers(graph.tensors().size(), 0);
  for (const Node& n : nodes) {
    for (TensorId id : n.reads) ++readers[static_cast<std::size_t>(id)];
    for (TensorId id : n.writes) ++writers[static_cast<std::size_t>(id)];
  }
  std::vector<Fusion> out;
  for (std::size_t i = 0; i < nodes.size();) {
    std::optional<Fusion> f = norm_epilogue(graph, nodes, i, readers);
    if (!f) f = pool_relu(graph, nodes, i, readers);
    if (f) {
      i = f->last + 1;
      out.push_back(std::move(*f));
      continue;
    }
    if (!fusable(nodes[i])) {
      ++i;
      continue;
    }
    std::vector<Step> steps;
    Step head;
    if (!continues(nodes[i], nodes[i].operands[0], head)) {
      ++i;
      continue;
    }
    steps.push_back(head);
    std::size_t j = i;
    while (j + 1 < nodes.size()) {
      const Node& next = nodes[j + 1];
      const TensorId value = result(nodes[j]);
      const auto v = static_cast<std::size_t>(value);
      Step s;
      if (!fusable(next) || next.kernel.dtype != nodes[i].kernel.dtype ||
          next.kernel.shape != nodes[i].kernel.shape || writers[v] != 1 ||
          !continues(next, value, s) || steps.size() + 2 > tpc::kMaxTensors / 2) {
        break;
      }
      steps.back().store = readers[v] > 1 || graph.tensor(value).kind == TensorKind::kPersistent;
      steps.push_back(s);
      ++j;
    }
    steps.back().store = true;  // the chain's result
    if (steps.size() >= 2)
      out.push_back(Writer(graph, steps, nodes[i].kernel.dtype, generation).build(i));
    i = j + 1;
  }
  return out;
}

}  // namespace podsim::synapse
