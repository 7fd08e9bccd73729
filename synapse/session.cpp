#include "synapse/session.h"

#include <fmt/format.h>

#include <utility>

namespace podsim::synapse {

const char* to_string(Mode m) { return m == Mode::kEager ? "eager" : "lazy"; }

Session::Session(Runtime& runtime, Mode mode)
    : rt_(runtime),
      mode_(mode),
      compute_(runtime.create_stream(StreamKind::kCompute)),
      h2d_(runtime.create_stream(StreamKind::kHostToDevice)),
      d2h_(runtime.create_stream(StreamKind::kDeviceToHost)) {}

Session::~Session() {
  try {
    rt_.synchronize_device();
    for (const Slot& s : slots_) {
      if (s.address != 0) rt_.device_free(s.address);
    }
    if (workspace_ != 0) rt_.device_free(workspace_);
  } catch (const RuntimeError&) {
    // The device failed: its memory goes with the runtime's file.
  }
}

Session::Value Session::persistent(const std::string& name, Dtype dtype,
                                   std::vector<std::uint32_t> shape) {
  Graph check;  // the tensor's own checks
  check.tensor(name, dtype, shape, TensorKind::kPersistent);
  Slot s{Tensor{name, dtype, std::move(shape), TensorKind::kPersistent}, 0, false};
  s.address = rt_.device_malloc(s.tensor.bytes());
  slots_.push_back(std::move(s));
  return Value{static_cast<int>(slots_.size() - 1)};
}

Session::Value Session::temporary(const std::string& name, Dtype dtype,
                                  std::vector<std::uint32_t> shape) {
  Graph check;
  check.tensor(name, dtype, shape);
  const bool eager = mode_ == Mode::kEager;
  Slot s{Tensor{name, dtype, std::move(shape),
                eager ? TensorKind::kPersistent : TensorKind::kWorkspace},
         0, true};
  if (eager) s.address = rt_.device_malloc(s.tensor.bytes());
  slots_.push_back(std::move(s));
  return Value{static_cast<int>(slots_.size() - 1)};
}

Session::Slot& Session::slot(Value v) { return const_cast<Slot&>(std::as_const(*this).slot(v)); }

const Session::Slot& Session::slot(Value v) const {
  if (v.id < 0 || static_cast<std::size_t>(v.id) >= slots_.size())
    throw std::invalid_argument(fmt::format("session: value {} does not exist", v.id));
  if (slots_[static_cast<std::size_t>(v.id)].tensor.name.empty())
    throw std::invalid_argument(
        fmt::format("session: value {} was a temporary of an ended step", v.id));
  return slots_[static_cast<std::size_t>(v.id)];
}

const Tensor& Session::tensor(Value v) const { return slot(v).tensor; }

std::uint64_t Session::address(Value v) const {
  const Slot& s = slot(v);
  if (s.temporary) {
    throw std::invalid_argument(fmt::format(
        "session: {} is a temporary; only persistent tensors have a fixed address", s.tensor.name));
  }
  return s.address;
}

void Session::gemm(const std::string& name, Value a, Value b, Value c, mme::GemmDesc gemm,
                   bool accumulate, std::array<std::uint64_t, 3> offsets) {
  Op op;
  op.name = name;
  op.mme = true;
  op.gemm = gemm;
  op.accumulate = accumulate;
  op.offsets = offsets;
  op.operands = {a.id, b.id, c.id};
  record(std::move(op));
}

void Session::convolution(const std::string& name, mme::MmeOp mme_op, const mme::ConvDesc& conv,
                          Value a, Value b, Value c) {
  Op op;
  op.name = name;
  op.mme = true;
  op.mme_op = mme_op;
  op.conv = conv;
  op.operands = {a.id, b.id, c.id};
  record(std::move(op));
}

void Session::kernel(const std::string& name, const tpc::KernelRequest& request,
                     const std::vector<Value>& tensors) {
  Op op;
  op.name = name;
  op.request = request;
  for (Value v : tensors) op.operands.push_back(v.id);
  record(std::move(op));
}

void Session::copy(const std::string& name, Value src, Value dst, std::uint64_t src_offset,
                   std::uint64_t elements) {
  Op op;
  op.name = name;
  op.copy = true;
  op.offsets = {src_offset, elements, 0};
  op.operands = {src.id, dst.id};
  record(std::move(op));
}

// Checked now, so that a lazy step's mistake is reported where it was made.
void Session::record(Op op) {
  for (int id : op.operands) slot(Value{id});
  graph_of({op}, nullptr);
  if (mode_ == Mode::kEager) {
    launch({op});
  } else {
    pending_.push_back(std::move(op));
  }
}

const Recipe& Session::recipe_for(const Graph& g) {
  const std::string key = g.signature();
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++stats_.cache_hits;
    return *it->second;
  }
  ++stats_.compiles;
  auto recipe = std::make_unique<Recipe>(compile(g, rt_.target()));
  stats_.notes.insert(recipe->notes.begin(), recipe->notes.end());
  return *cache_.emplace(key, std::move(recipe)).first->second;
}

// The graph names the step's tensors in the order they are first used, so a loop's steps
// have the same signature.
Graph Session::graph_of(const std::vector<Op>& ops, std::vector<std::uint64_t>* addresses) const {
  Graph g;
  std::map<int, TensorId> ids;
  const auto tensor = [&](int id) {
    auto it = ids.find(id);
    if (it != ids.end()) return it->second;
    const Slot& s = slots_[static_cast<std::size_t>(id)];
    const TensorId tid = g.tensor(s.tensor.name, s.tensor.dtype, s.tensor.shape, s.tensor.kind);
    if (addresses != nullptr && s.tensor.kind == TensorKind::kPersistent)
      addresses->push_back(s.address);
    return ids.emplace(id, tid).first->second;
  };
  for (const Op& op : ops) {
    std::vector<TensorId> operands;
    for (int id : op.operands) operands.push_back(tensor(id));
    if (op.copy) {
      g.copy(op.name, operands[0], operands[1], op.offsets[0], op.offsets[1]);
    } else if (op.mme && op.mme_op != mme::MmeOp::kGemm) {
      g.convolution(op.name, op.mme_op, op.conv, operands[0], operands[1], operands[2]);
    } else if (op.mme) {
      g.gemm(op.name, operands[0], operands[1], operands[2], op.gemm, op.accumulate, op.offsets);
    } else {
      g.kernel(op.name, op.request, operands);
    }
  }
  return g;
}

void Session::launch(const std::vector<Op>& ops) {
  if (ops.empty()) return;
  std::vector<std::uint64_t> addresses;
  const Graph g = graph_of(ops, &addresses);
  const Recipe& recipe = recipe_for(g);
  if (recipe.workspace_bytes > workspace_bytes_) {
    rt_.synchronize_device();
    if (workspace_ != 0) rt_.device_free(workspace_);
    workspace_ = rt_.device_malloc(recipe.workspace_bytes);
    workspace_bytes_ = recipe.workspace_bytes;
  }
  if (compile_only_) {
    rt_.prepare(recipe, addresses, workspace_);
    return;
  }
  const Event start = rt_.record(compute_);
  rt_.launch(compute_, recipe, addresses, workspace_);
  ++stats_.launches;
  const Event end = rt_.record(compute_);
  rt_.synchronize(end);
  stats_.device_time += rt_.elapsed(Event{compute_, start.seq, start.recorded}, end);
}

void Session::write(Value v, const std::vector<double>& values) {
  Slot& s = slot(v);
  if (s.address == 0)
    throw std::invalid_argument(
        fmt::format("session: {} lives in a lazy step's workspace", s.tensor.name));
  if (values.size() != s.tensor.elements()) {
    throw std::invalid_argument(fmt::format("session: {} values for {}, which holds {}",
                                            values.size(), s.tensor.name, s.tensor.elements()));
  }
  if (!pending_.empty()) mark_step();
  std::vector<std::uint8_t> bytes(s.tensor.bytes());
  for (std::size_t i = 0; i < values.size(); ++i)
    tpc::write_element(bytes, s.tensor.dtype, i, values[i]);
  const std::uint64_t host = rt_.host_malloc(bytes.size());
  rt_.host_write(host, bytes.data(), bytes.size());
  rt_.memcpy(h2d_, s.address, host, bytes.size());
  rt_.synchronize(h2d_);
  rt_.host_free(host);
}

std::vector<double> Session::read(Value v) {
  Slot& s = slot(v);
  if (s.address == 0)
    throw std::invalid_argument(
        fmt::format("session: {} lives in a lazy step's workspace", s.tensor.name));
  if (!pending_.empty()) mark_step();
  std::vector<std::uint8_t> bytes(s.tensor.bytes());
  const std::uint64_t host = rt_.host_malloc(bytes.size());
  rt_.memcpy(d2h_, host, s.address, bytes.size());
  rt_.synchronize(d2h_);
  rt_.host_read(host, bytes.data(), bytes.size());
  rt_.host_free(host);
  std::vector<double> values(s.tensor.elements());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = tpc::read_element(bytes, s.tensor.dtype, i);
  return values;
}

void Session::warm_up() {
  if (!pending_.empty()) mark_step();
  const std::uint32_t n = 512;  // 2^18 elements: a slice for every TPC; a GEMM both MMEs share
  const std::vector<std::uint32_t> shape{n, n};
  std::vector<Value> v{persistent("warm_up.x", Dtype::kBf16, shape)};  // read, so it has a home
  for (const char* name : {"warm_up.y", "warm_up.z", "warm_up.c"})
    v.push_back(temporary(name, Dtype::kBf16, shape));
  kernel("warm_up.relu", tpc::KernelRequest{"relu", Dtype::kBf16, std::nullopt, shape, {}},
         {v[0], v[1]});
  copy("warm_up.copy", v[1], v[2]);
  mme::GemmDesc g;
  g.m = g.n = g.k = n;
  gemm("warm_up.gemm", v[0], v[2], v[3], g);
  const bool compile_only = compile_only_;
  compile_only_ = false;
  mark_step();
  compile_only_ = compile_only;
}

void Session::mark_step() {
  if (!pending_.empty()) {
    std::vector<Op> ops = std::move(pending_);
    pending_.clear();
    launch(ops);
  }
  for (Slot& s : slots_) {
    if (!s.temporary || s.tensor.name.empty()) continue;
    if (s.address != 0) {
      rt_.synchronize_device();
      rt_.device_free(s.address);
    }
    s = Slot{};
  }
}

}  // namespace podsim::synapse
