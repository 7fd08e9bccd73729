#include "synapse/recipe.h"

#include <fmt/format.h>

#include <boost/container_hash/hash.hpp>
#include <boost/crc.hpp>
#include <cstring>

#include "driver/queue_map.h"
#include "podsim/spec/gaudi1.h"

namespace podsim::synapse {
namespace {

constexpr char kMagic[8] = {'P', 'O', 'D', 'R', 'E', 'C', 'P', 'E'};
constexpr std::size_t kHeaderBytes = sizeof kMagic + 4 + 8 + 4;  // magic, version, size, crc

std::uint32_t crc32(const std::uint8_t* data, std::size_t size) {
  boost::crc_32_type crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

// Little-endian fields, strings and vectors prefixed by their length.
class Writer {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(v); }
  void u32(std::uint32_t v) { fixed(v, 4); }
  void u64(std::uint64_t v) { fixed(v, 8); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void str(const std::string& s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void blob(const std::vector<std::uint8_t>& b) {
    u64(b.size());
    bytes_.insert(bytes_.end(), b.begin(), b.end());
  }
  template <class T, class F>
  void list(const std::vector<T>& items, F each) {
    u64(items.size());
    for (const T& item : items) each(item);
  }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  void fixed(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> bytes_;
};

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(fixed(1, what)); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(fixed(4, what)); }
  std::uint64_t u64(const char* what) { return fixed(8, what); }
  double f64(const char* what) {
    const std::uint64_t bits = u64(what);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string str(const char* what) {
    const std::size_t n = length(what, 1);
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  std::vector<std::uint8_t> blob(const char* what) {
    const std::size_t n = length(what, 1);
    std::vector<std::uint8_t> b(data_ + at_, data_ + at_ + n);
    at_ += n;
    return b;
  }
  // A count of items of at least `min_bytes` each: no more than the bytes left could hold.
  std::size_t length(const char* what, std::size_t min_bytes) {
    const std::uint64_t n = u64(what);
    if (n > (size_ - at_) / min_bytes) {
      throw RecipeError(
          fmt::format("recipe: {} claims {} items at byte {}, more than the data holds", what, n,
                      kHeaderBytes + at_ - 8));
    }
    return static_cast<std::size_t>(n);
  }
  template <class T, class F>
  std::vector<T> list(const char* what, std::size_t min_bytes, F each) {
    std::vector<T> items(length(what, min_bytes));
    for (T& item : items) each(item);
    return items;
  }
  bool done() const { return at_ == size_; }
  std::size_t at() const { return kHeaderBytes + at_; }

 private:
  std::uint64_t fixed(int n, const char* what) {
    if (size_ - at_ < static_cast<std::size_t>(n)) {
      throw RecipeError(fmt::format("recipe: truncated at byte {} reading {}", at(), what));
    }
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(data_[at_ + i]) << (8 * i);
    at_ += static_cast<std::size_t>(n);
    return v;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

void write_address(Writer& w, const SectionAddress& a) {
  w.u32(a.section);
  w.u64(a.offset);
}
SectionAddress read_address(Reader& r) {
  SectionAddress a;
  a.section = r.u32("a section");
  a.offset = r.u64("an offset");
  return a;
}

void write_job(Writer& w, const EngineJob& j) {
  w.u32(j.queue);
  w.list(j.registers, [&](const core::RegisterRun& run) {
    w.u32(run.offset);
    w.list(run.values, [&](std::uint32_t v) { w.u32(v); });
  });
  w.list(j.relocations, [&](const Relocation& rel) {
    w.u32(rel.run);
    w.u32(rel.index);
    w.u32(rel.section);
  });
  w.u32(j.execute);
  write_address(w, j.src);
  write_address(w, j.dst);
  w.u64(j.bytes);
}

EngineJob read_job(Reader& r) {
  EngineJob j;
  j.queue = r.u32("a job's queue");
  j.registers = r.list<core::RegisterRun>("register runs", 12, [&](core::RegisterRun& run) {
    run.offset = r.u32("a register offset");
    run.values = r.list<std::uint32_t>("register values", 4,
                                       [&](std::uint32_t& v) { v = r.u32("a register value"); });
  });
  j.relocations = r.list<Relocation>("relocations", 12, [&](Relocation& rel) {
    rel.run = r.u32("a relocation");
    rel.index = r.u32("a relocation");
    rel.section = r.u32("a relocation");
  });
  j.execute = r.u32("an execute register");
  j.src = read_address(r);
  j.dst = read_address(r);
  j.bytes = r.u64("a copy's size");
  return j;
}

std::vector<std::uint8_t> payload(const Recipe& recipe) {
  Writer w;
  w.str(recipe.signature);
  w.u32(recipe.device_id);
  w.list(recipe.tensors, [&](const RecipeTensor& t) {
    w.str(t.name);
    w.u8(static_cast<std::uint8_t>(t.dtype));
    w.list(t.shape, [&](std::uint32_t s) { w.u32(s); });
    w.u8(t.persistent ? 1 : t.sram ? 2 : 0);
    w.u64(t.offset);
    w.u64(t.bytes);
  });
  w.list(recipe.persistent, [&](std::uint32_t i) { w.u32(i); });
  w.u64(recipe.workspace_bytes);
  w.u64(recipe.sram_bytes);
  w.u64(recipe.program_bytes);
  w.list(recipe.program, [&](const KernelBinary& b) {
    w.str(b.key);
    w.u64(b.offset);
    w.blob(b.code);
  });
  w.list(recipe.stages, [&](const Stage& s) {
    w.str(s.node);
    w.u8(static_cast<std::uint8_t>(s.engine));
    w.list(s.jobs, [&](const EngineJob& j) { write_job(w, j); });
    w.list(s.waits, [&](std::uint32_t k) { w.u32(k); });
    w.f64(s.flops);
  });
  w.u32(recipe.first_sob);
  w.u32(recipe.first_monitor);
  w.list(recipe.notes, [&](const std::string& n) { w.str(n); });
  return std::move(w.bytes());
}

// What deserialize refuses beyond the format itself: references out of range.
void check(const Recipe& r) {
  const auto bad = [](const std::string& what) { throw RecipeError("recipe: " + what); };
  const driver::QueueMap* map = driver::QueueMap::find(r.device_id);
  if (map == nullptr) bad(fmt::format("device id {:#06x} is not a Gaudi1 or Gaudi2", r.device_id));
  for (std::uint32_t i : r.persistent) {
    if (i >= r.tensors.size() || !r.tensors[i].persistent)
      bad(fmt::format("persistent tensor {} is not a persistent tensor of the recipe", i));
  }
  for (const RecipeTensor& t : r.tensors) {
    if (static_cast<int>(t.dtype) >= tpc::kDtypeCount)
      bad(fmt::format("tensor {} has an unknown type", t.name));
    if (!t.persistent && t.offset + t.bytes > (t.sram ? r.sram_bytes : r.workspace_bytes))
      bad(fmt::format("tensor {} lies outside the {}", t.name, t.sram ? "SRAM" : "workspace"));
  }
  for (const KernelBinary& b : r.program) {
    if (b.offset + b.code.size() > r.program_bytes)
      bad(fmt::format("kernel {} lies outside the program", b.key));
  }
  const std::uint32_t sections =
      kFirstTensorSection + static_cast<std::uint32_t>(r.persistent.size());
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    const Stage& s = r.stages[k];
    if (s.engine > Engine::kDma) bad(fmt::format("stage {} has an unknown engine", k));
    for (std::uint32_t w : s.waits) {
      if (w >= k)
        bad(fmt::format("stage {} waits for stage {}, which does not come before it", k, w));
    }
    for (const EngineJob& j : s.jobs) {
      if (!map->queue(j.queue))
        bad(fmt::format("stage {} runs on queue {}, not a {} engine's", k, j.queue, map->family()));
      for (const Relocation& rel : j.relocations) {
        if (rel.section >= sections || rel.run >= j.registers.size() ||
            rel.index + 1 >= j.registers[rel.run].values.size())
          bad(fmt::format("stage {} has a relocation out of range", k));
      }
      if (j.src.section >= sections || j.dst.section >= sections)
        bad(fmt::format("stage {} copies from or to an unknown section", k));
    }
  }
}

}  // namespace

const char* to_string(Engine e) {
  switch (e) {
    case Engine::kTpc:
      return "tpc";
    case Engine::kMme:
      return "mme";
    case Engine::kDma:
      return "dma";
  }
  return "?";
}

std::uint64_t sob_address(std::uint32_t sob) {
  return PODSIM_GAUDI1_SYNC_MNGR_OBJS_SOB_OBJ(PODSIM_GAUDI1_SYNC_MNGR_W_S_BASE, sob);
}

std::uint64_t fingerprint(const Recipe& recipe) {
  const std::vector<std::uint8_t> body = payload(recipe);
  return boost::hash_range(body.begin(), body.end());
}

std::vector<std::uint8_t> serialize(const Recipe& recipe) {
  const std::vector<std::uint8_t> body = payload(recipe);
  Writer w;
  w.bytes().insert(w.bytes().end(), std::begin(kMagic), std::end(kMagic));
  w.u32(Recipe::kVersion);
  w.u64(body.size());
  w.u32(crc32(body.data(), body.size()));
  std::vector<std::uint8_t> out = std::move(w.bytes());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

Recipe deserialize(const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw RecipeError("recipe: not a podsim recipe (no PODRECPE header)");
  Reader header(bytes.data() + sizeof kMagic, kHeaderBytes - sizeof kMagic);
  const std::uint32_t version = header.u32("the version");
  if (version != Recipe::kVersion) {
    throw RecipeError(
        fmt::format("recipe: version {}, this build reads version {}: compile the "
                    "graph again",
                    version, Recipe::kVersion));
  }
  const std::uint64_t size = header.u64("the size");
  const std::uint32_t crc = header.u32("the checksum");
  if (size != bytes.size() - kHeaderBytes) {
    throw RecipeError(
        fmt::format("recipe: {} bytes of body, the header says {} (truncated or "
                    "extended)",
                    bytes.size() - kHeaderBytes, size));
  }
  const std::uint8_t* body = bytes.data() + kHeaderBytes;
  if (crc32(body, size) != crc) throw RecipeError("recipe: checksum mismatch (corrupt data)");
  Reader r(body, size);
  Recipe recipe;
  recipe.signature = r.str("the signature");
  recipe.device_id = r.u32("the device id");
  recipe.tensors = r.list<RecipeTensor>("tensors", 30, [&](RecipeTensor& t) {
    t.name = r.str("a tensor name");
    t.dtype = static_cast<Dtype>(r.u8("a tensor type"));
    t.shape = r.list<std::uint32_t>("a shape", 4, [&](std::uint32_t& s) { s = r.u32("a size"); });
    const std::uint8_t kind = r.u8("a tensor kind");
    if (kind > 2) throw RecipeError(fmt::format("recipe: tensor {} has an unknown kind", t.name));
    t.persistent = kind == 1;
    t.sram = kind == 2;
    t.offset = r.u64("a tensor offset");
    t.bytes = r.u64("a tensor size");
  });
  recipe.persistent = r.list<std::uint32_t>("persistent tensors", 4,
                                            [&](std::uint32_t& i) { i = r.u32("an index"); });
  recipe.workspace_bytes = r.u64("the workspace size");
  recipe.sram_bytes = r.u64("the SRAM size");
  recipe.program_bytes = r.u64("the program size");
  recipe.program = r.list<KernelBinary>("kernels", 24, [&](KernelBinary& b) {
    b.key = r.str("a kernel key");
    b.offset = r.u64("a kernel offset");
    b.code = r.blob("a kernel binary");
  });
  recipe.stages = r.list<Stage>("stages", 33, [&](Stage& s) {
    s.node = r.str("a stage's node");
    s.engine = static_cast<Engine>(r.u8("a stage's engine"));
    s.jobs = r.list<EngineJob>("jobs", 60, [&](EngineJob& j) { j = read_job(r); });
    s.waits = r.list<std::uint32_t>("waits", 4, [&](std::uint32_t& k) { k = r.u32("a wait"); });
    s.flops = r.f64("a stage's work");
  });
  recipe.first_sob = r.u32("the first sync object");
  recipe.first_monitor = r.u32("the first monitor");
  recipe.notes = r.list<std::string>("notes", 8, [&](std::string& n) { n = r.str("a note"); });
  if (!r.done()) throw RecipeError(fmt::format("recipe: trailing bytes at {}", r.at()));
  check(recipe);
  recipe.fingerprint = fingerprint(recipe);
  return recipe;
}

}  // namespace podsim::synapse
