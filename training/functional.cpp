#include "training/functional.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "collectives/communicator.h"
#include "driver/host_drivers.h"
#include "hw/tpc/data_type.h"
#include "hw/tpc/kernels/library.h"
#include "synapse/session.h"
#include "training/host_staging.h"
#include "training/profile.h"
#include "workloads/convnet.h"

namespace podsim::training {
namespace {

using synapse::Session;
using workloads::ConvParameter;

// A device buffer gradients (or parameters) are packed into for one collective: one type, at the
// same address on every replica.
struct Buffer {
  tpc::Dtype dtype = tpc::Dtype::kBf16;
  std::vector<std::size_t> params;  // indices into the net's parameters, in packing order
  std::uint64_t bytes = 0, address = 0, scratch = 0;
};

// The strategy's buffers: gradients in the order backward yields them (the last parameter's
// first), a buffer closing when the next would take it past `cap` (DDP's buckets, Horovod's
// fusion) or is of another type.
std::vector<Buffer> plan_buffers(const Session& s, const std::vector<const ConvParameter*>& params,
                                 std::uint64_t cap) {
  std::vector<Buffer> buffers;
  for (std::size_t i = params.size(); i-- > 0;) {
    const synapse::Tensor& g = s.tensor(params[i]->gradient);
    if (buffers.empty() || buffers.back().dtype != g.dtype ||
        buffers.back().bytes + g.bytes() > cap) {
      buffers.push_back({g.dtype, {}, 0});
    }
    buffers.back().params.push_back(i);
    buffers.back().bytes += g.bytes();
  }
  return buffers;
}

// A buffer's bytes as the host CPU reads them (in fp32, as it sums them), and back.
std::vector<float> decode(const std::vector<std::uint8_t>& bytes, tpc::Dtype t) {
  std::vector<float> v(bytes.size() / tpc::info(t).bytes);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(tpc::read_element(bytes, t, i));
  return v;
}

std::vector<std::uint8_t> encode(const std::vector<float>& v, tpc::Dtype t) {
  std::vector<std::uint8_t> bytes(v.size() * tpc::info(t).bytes);
  for (std::size_t i = 0; i < v.size(); ++i) tpc::write_element(bytes, t, i, v[i]);
  return bytes;
}

// Between hosts, when the replicas span several boxes: each host's bytes written into its memory
// behind its front-end NIC, a collective over the hosts' modeled network (their NICs and switch
// move the bytes, their CPUs' reductions sum them), and every host's copy read back.
class BetweenHosts {
 public:
  // `host_of_rank`: each replica's host, a rank of `hosts`.
  BetweenHosts(collectives::Communicator& hosts, std::vector<int> host_of_rank)
      : hosts_(hosts), host_of_rank_(std::move(host_of_rank)) {}

  int hosts() const { return hosts_.size(); }
  int host_of(std::size_t rank) const { return host_of_rank_[rank]; }

  // shares[h]: host h's bytes, as many on each. Returns what every host holds afterwards: the
  // sum (kAllReduce) or host 0's bytes (kBroadcast). Throws std::runtime_error when the
  // collective fails or the hosts' copies differ.
  std::vector<std::uint8_t> run(collectives::Op op, core::DataType type,
                                const std::vector<std::vector<std::uint8_t>>& shares) {
    collectives::Spec spec;
    spec.op = op;
    spec.type = type;
    spec.count = shares.front().size() / core::size_of(type);
    spec.in_place = true;
    spec.base = host(0).memory_base();
    const int n = hosts_.size();
    for (int h = 0; h < n; ++h) {
      const auto& bytes = shares[static_cast<std::size_t>(h)];
      host(h).debug_write(collectives::layout(spec, n, h).input, bytes.data(), bytes.size());
    }
    const auto handle = hosts_.start(spec);
    handle->wait_done();
    if (!handle->ok) {
      throw std::runtime_error(fmt::format("the hosts' {} failed", collectives::to_string(op)));
    }
    std::vector<std::uint8_t> result;
    for (int h = 0; h < n; ++h) {
      std::vector<std::uint8_t> got(shares.front().size());
      host(h).debug_read(collectives::layout(spec, n, h).output, got.data(), got.size());
      if (h > 0 && got != result) {
        throw std::runtime_error(fmt::format("the hosts' {}: host {} ended unlike host 0",
                                             collectives::to_string(op), h));
      }
      result = std::move(got);
    }
    return result;
  }

 private:
  chip::Chip& host(int h) { return hosts_.model().chip(hosts_.chip(h)); }
  collectives::Communicator& hosts_;
  std::vector<int> host_of_rank_;
};

// What the host holds for ipu-multiworker: each buffer's fp32 master weights and momenta.
struct HostOptimizer {
  std::vector<std::vector<float>> weights, momenta;  // by buffer
};

// What the replicas' programs share.
struct Shared {
  Shared(const FunctionalOptions& o, collectives::Communicator& c)
      : options(o), comm(c), barrier(o.replicas) {}
  const FunctionalOptions& options;
  collectives::Communicator& comm;
  ReplicaBarrier barrier;
  std::vector<std::uint64_t> addresses;  // rank 0's buffers and scratches, for the others to match
  std::vector<std::vector<double>> losses;        // [step][rank]
  std::vector<std::vector<std::uint8_t>> staged;  // through the host: each rank's copy
  std::vector<std::uint8_t> reduced;              // through the host: what goes back
  HostOptimizer host;                             // ipu-multiworker
  FunctionalResult result;
  int collectives = 0;
  std::unique_ptr<BetweenHosts> between_hosts;  // replicas through several hosts
};

class Replica {
 public:
  Replica(Shared& shared, int rank, synapse::Runtime& rt)
      : sh_(shared),
        rank_(rank),
        rt_(rt),
        session_(rt, synapse::Mode::kLazy),
        net_(session_, units()),
        params_(net_.parameters()),
        via_host_(through_hosts(shared.options.strategy, shared.options.host_staged)) {}

  void run() {
    const FunctionalOptions& o = sh_.options;
    d2d_ = rt_.create_stream(synapse::StreamKind::kDeviceToDevice);
    buffers_ = plan_buffers(session_, params_, buffer_cap());
    allocate();
    if (o.broadcast) broadcast_parameters();
    if (o.strategy == Strategy::kIpuMultiworker) load_host_optimizer();
    if (rank_ == 0) sh_.result.initial = net_.read_parameters();
    const std::uint32_t global = o.batch * static_cast<std::uint32_t>(o.replicas);
    for (int step = 0; step < o.steps; ++step) {
      const workloads::ImageBatch all = workloads::mnist_like_batch(global, step, o.seed, o.dtype);
      const workloads::ImageBatch mine =
          workloads::slice(all, static_cast<std::uint32_t>(rank_) * o.batch, o.batch);
      sh_.losses[static_cast<std::size_t>(step)][static_cast<std::size_t>(rank_)] =
          net_.compute_gradients(mine.x, mine.labels);
      if (via_host_) {
        reduce_on_host();
      } else {
        reduce_gradients();
      }
      if (o.strategy == Strategy::kIpuMultiworker) continue;  // the host updated the weights
      // Horovod averages: its 1/replicas is folded into the learning rate (see the header).
      const double lr = o.strategy == Strategy::kHorovod ? o.lr / o.replicas : o.lr;
      net_.update(lr, o.momentum);
    }
    sh_.result.parameters[static_cast<std::size_t>(rank_)] = net_.read_parameters();
  }

 private:
  // The MNIST net; ranks other than 0 start from other values when rank 0's are broadcast.
  std::vector<workloads::ConvUnitConfig> units() const {
    const FunctionalOptions& o = sh_.options;
    auto units = workloads::mnist_units(o.batch, o.dtype);
    for (auto& u : units) {
      u.seed = o.seed + (o.broadcast ? static_cast<std::uint64_t>(rank_) : 0);
      if (u.kind == workloads::ConvUnitKind::kClassifier && o.strategy == Strategy::kHccl)
        u.loss_samples = o.batch * static_cast<std::uint32_t>(o.replicas);
    }
    return units;
  }

  // ipu-multiworker streams every gradient by itself.
  std::uint64_t buffer_cap() const {
    const FunctionalOptions& o = sh_.options;
    if (o.strategy == Strategy::kIpuMultiworker) return 1;
    return o.strategy == Strategy::kHccl ? o.bucket_bytes : o.fusion_bytes;
  }

  // Each buffer and the scratch its collectives lay out (collective.h), at the addresses rank
  // 0's are at: the collectives use one address on every chip.
  void allocate() {
    std::vector<std::uint64_t> mine;
    for (Buffer& b : buffers_) {
      b.address = rt_.device_malloc(b.bytes);
      const collectives::Layout l =
          collectives::layout(spec(collectives::Op::kAllReduce, b), sh_.options.replicas, 0);
      b.scratch = rt_.device_malloc(l.scratch_bytes);
      mine.insert(mine.end(), {b.address, b.scratch});
    }
    if (via_host_) {
      std::uint64_t largest = 0;
      for (const Buffer& b : buffers_) largest = std::max(largest, b.bytes);
      host_buffer_ = rt_.host_malloc(largest);
      d2h_ = rt_.create_stream(synapse::StreamKind::kDeviceToHost);
      h2d_ = rt_.create_stream(synapse::StreamKind::kHostToDevice);
    }
    if (rank_ == 0) sh_.addresses = mine;
    sh_.barrier.arrive_and_wait();
    if (mine != sh_.addresses) {
      throw std::runtime_error(fmt::format(
          "rank {}: its buffers are not where rank 0's are; the collectives need one address on "
          "every chip",
          rank_));
    }
  }

  // Copies each buffer's tensors (values or gradients) into it, or out of it.
  void pack(const Buffer& b, bool gradients, bool into) {
    std::uint64_t at = b.address;
    for (std::size_t i : b.params) {
      const ConvParameter& p = *params_[i];
      const Session::Value v = gradients ? p.gradient : p.value;
      const std::uint64_t bytes = session_.tensor(v).bytes();
      const std::uint64_t tensor = session_.address(v);
      rt_.memcpy(d2d_, into ? at : tensor, into ? tensor : at, bytes);
      at += bytes;
    }
    rt_.synchronize(d2d_);
  }

  // `op` in place on buffer b.
  static collectives::Spec spec(collectives::Op op, const Buffer& b) {
    collectives::Spec s;
    s.op = op;
    s.type = tpc::data_type_of(b.dtype);
    s.count = b.bytes / tpc::info(b.dtype).bytes;
    s.placement = collectives::Spec::Placement{b.address, b.address, b.scratch};
    s.base = std::min(b.address, b.scratch);
    return s;
  }

  // Every replica's buffers ready, one collective per buffer started by rank 0, all replicas
  // waiting for its end.
  void collective(collectives::Op op) {
    sh_.barrier.arrive_and_wait();
    if (rank_ == 0) {
      for (const Buffer& b : buffers_) {
        const auto handle = sh_.comm.start(spec(op, b));
        handle->wait_done();
        if (!handle->ok) throw std::runtime_error(fmt::format("{} failed", to_string(op)));
        ++sh_.collectives;
      }
    }
    sh_.barrier.arrive_and_wait();
  }

  // Buffer b over PCIe into this rank's host memory, as the host CPU then reads it.
  std::vector<std::uint8_t> to_host(const Buffer& b) {
    rt_.memcpy(d2h_, host_buffer_, b.address, b.bytes);
    rt_.synchronize(d2h_);
    std::vector<std::uint8_t> bytes(b.bytes);
    rt_.host_read(host_buffer_, bytes.data(), b.bytes);
    return bytes;
  }

  void to_device(const Buffer& b, const std::vector<std::uint8_t>& bytes) {
    rt_.host_write(host_buffer_, bytes.data(), b.bytes);
    rt_.memcpy(h2d_, b.address, host_buffer_, b.bytes);
    rt_.synchronize(h2d_);
  }

  // Through the host, buffer by buffer: every rank's copy staged, rank 0's program standing for
  // the host CPU's work on them (`work`), and its result back on every chip, into the values or
  // the gradients.
  template <class Work>
  void through_host(bool gradients, bool into_values, Work work) {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const Buffer& b = buffers_[i];
      pack(b, gradients, true);
      sh_.staged[static_cast<std::size_t>(rank_)] = to_host(b);
      sh_.barrier.arrive_and_wait();
      if (rank_ == 0) sh_.reduced = work(i, b);
      sh_.barrier.arrive_and_wait();
      to_device(b, sh_.reduced);
      pack(b, !into_values, false);
      sh_.barrier.arrive_and_wait();
    }
  }

  // The replicas' copies summed in fp32: by each host in rank order, then between the hosts
  // over their network when there are several.
  std::vector<float> host_sum(const Buffer& b) const {
    if (!sh_.between_hosts) return local_sum(b, -1);
    std::vector<std::vector<std::uint8_t>> shares;
    for (int h = 0; h < sh_.between_hosts->hosts(); ++h)
      shares.push_back(encode(local_sum(b, h), tpc::Dtype::kF32));
    return decode(
        sh_.between_hosts->run(collectives::Op::kAllReduce, core::DataType::kFp32, shares),
        tpc::Dtype::kF32);
  }

  // The copies of host `host`'s replicas (every replica's for -1) summed in rank order.
  std::vector<float> local_sum(const Buffer& b, int host) const {
    std::vector<float> sum;
    for (std::size_t r = 0; r < sh_.staged.size(); ++r) {
      if (host >= 0 && sh_.between_hosts->host_of(r) != host) continue;
      const std::vector<float> v = decode(sh_.staged[r], b.dtype);
      if (sum.empty()) sum.assign(v.size(), 0.0f);
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
    }
    return sum;
  }

  // Rank 0's copy on every host: from its host to the others over their network.
  std::vector<std::uint8_t> from_rank0(const Buffer& b) const {
    if (!sh_.between_hosts) return sh_.staged.front();
    std::vector<std::vector<std::uint8_t>> shares(
        static_cast<std::size_t>(sh_.between_hosts->hosts()),
        std::vector<std::uint8_t>(sh_.staged.front().size(), 0));
    shares.front() = sh_.staged.front();
    return sh_.between_hosts->run(collectives::Op::kBroadcast, tpc::data_type_of(b.dtype), shares);
  }

  // SGD with momentum on the host's master weights, as the chips' sgd_momentum kernel does it.
  std::vector<std::uint8_t> host_update(std::size_t buffer, const Buffer& b) {
    const FunctionalOptions& o = sh_.options;
    std::vector<float>& w = sh_.host.weights[buffer];
    std::vector<float>& v = sh_.host.momenta[buffer];
    const std::vector<float> sum = host_sum(b);
    const auto replicas = static_cast<float>(o.replicas);
    for (std::size_t i = 0; i < w.size(); ++i) {
      v[i] = static_cast<float>(o.momentum) * v[i] + sum[i] / replicas;
      w[i] -= static_cast<float>(o.lr) * v[i];
    }
    return encode(w, b.dtype);
  }

  void reduce_on_host() {
    if (sh_.options.strategy == Strategy::kIpuMultiworker) {
      through_host(true, true,
                   [this](std::size_t i, const Buffer& b) { return host_update(i, b); });
    } else {
      through_host(true, false,
                   [this](std::size_t, const Buffer& b) { return encode(host_sum(b), b.dtype); });
    }
    if (rank_ == 0) sh_.result.all_reduces = static_cast<int>(buffers_.size());
  }

  // ipu-multiworker: the host's master weights start as rank 0's, its momenta at zero.
  void load_host_optimizer() {
    if (rank_ != 0) return;
    for (const Buffer& b : buffers_) {
      pack(b, false, true);
      sh_.host.weights.push_back(decode(to_host(b), b.dtype));
      sh_.host.momenta.emplace_back(sh_.host.weights.back().size(), 0.0f);
    }
  }

  void broadcast_parameters() {
    if (via_host_) {
      through_host(false, true, [this](std::size_t, const Buffer& b) { return from_rank0(b); });
      if (rank_ == 0) sh_.result.broadcasts = static_cast<int>(buffers_.size());
      return;
    }
    for (const Buffer& b : buffers_) pack(b, false, true);
    collective(collectives::Op::kBroadcast);
    for (const Buffer& b : buffers_) pack(b, false, false);
    if (rank_ == 0) sh_.result.broadcasts = static_cast<int>(buffers_.size());
  }

  void reduce_gradients() {
    for (const Buffer& b : buffers_) pack(b, true, true);
    collective(collectives::Op::kAllReduce);
    for (const Buffer& b : buffers_) pack(b, true, false);
    if (rank_ == 0) sh_.result.all_reduces = static_cast<int>(buffers_.size());
  }

  Shared& sh_;
  int rank_;
  synapse::Runtime& rt_;
  Session session_;
  workloads::ConvNet net_;
  std::vector<const ConvParameter*> params_;
  std::vector<Buffer> buffers_;
  bool via_host_ = false;
  synapse::StreamId d2d_ = 0, d2h_ = 0, h2d_ = 0;
  std::uint64_t host_buffer_ = 0;
};

}  // namespace

std::string FunctionalOptions::problem() const {
  if (replicas < 1) return "at least one replica";
  if (batch == 0 || steps < 1) return "a batch and at least one step";
  if (!(lr > 0) || !(momentum >= 0 && momentum < 1)) return "lr > 0 and 0 <= momentum < 1";
  if (bucket_bytes == 0 || fusion_bytes == 0) return "a bucket and a fusion buffer of some bytes";
  return {};
}

struct FunctionalRun::State {
  State(system::SystemModel& model, const FunctionalOptions& options, std::vector<int> chips)
      : comm(model, std::move(chips)), shared(options, comm) {}
  collectives::Communicator comm;
  std::unique_ptr<HostStaging> staging;  // the hosts' network, when through several hosts
  Shared shared;
  std::vector<std::string> failures;
};

FunctionalRun::FunctionalRun(system::SystemModel& model, const FunctionalOptions& options,
                             std::vector<int> chips) {
  if (const std::string p = options.problem(); !p.empty())
    throw std::invalid_argument("functional training: " + p);
  if (chips.size() != static_cast<std::size_t>(options.replicas)) {
    throw std::invalid_argument(fmt::format("functional training: {} replicas on {} chips",
                                            options.replicas, chips.size()));
  }
  state_ = std::make_unique<State>(model, options, chips);
  Shared& shared = state_->shared;
  if (through_hosts(options.strategy, options.host_staged)) {
    state_->staging = std::make_unique<HostStaging>(model.config(), chips,
                                                    system::ModelOptions{options.seed, true});
    const HostPath path = state_->staging->path();
    if (path.hosts) {
      shared.between_hosts = std::make_unique<BetweenHosts>(*path.hosts, path.host_of_rank);
      shared.result.hosts = shared.between_hosts->hosts();
    }
  }
  shared.staged.resize(chips.size());
  shared.losses.assign(static_cast<std::size_t>(options.steps),
                       std::vector<double>(static_cast<std::size_t>(options.replicas), 0.0));
  shared.result.parameters.resize(chips.size());
  state_->failures.resize(chips.size());
  auto& drivers = model.attached<driver::HostDrivers>();
  for (std::size_t r = 0; r < chips.size(); ++r) {
    const int rank = static_cast<int>(r), chip = chips[r];
    drivers.cpu(chip).run([this, &drivers, rank, chip](host::HostCpu&) {
      try {
        const driver::HostDrivers::Region region = drivers.runtime_memory(chip);
        synapse::Runtime rt(drivers.file(chip), drivers.memory(chip), {region.base, region.size});
        Replica(state_->shared, rank, rt).run();
      } catch (const std::exception& e) {
        state_->failures[static_cast<std::size_t>(rank)] = e.what();
      }
    });
  }
}

FunctionalRun::~FunctionalRun() = default;

std::string FunctionalRun::failure() const {
  for (std::size_t r = 0; r < state_->failures.size(); ++r) {
    if (!state_->failures[r].empty()) return fmt::format("rank {}: {}", r, state_->failures[r]);
  }
  return {};
}

const FunctionalResult& FunctionalRun::result() const {
  if (const std::string f = failure(); !f.empty())
    throw std::runtime_error("functional training: " + f);
  FunctionalResult& r = state_->shared.result;
  r.losses.clear();
  for (const auto& step : state_->shared.losses) {
    double total = 0;
    for (double l : step) total += l;
    r.losses.push_back(total / static_cast<double>(step.size()));
  }
  return r;
}

}  // namespace podsim::training
