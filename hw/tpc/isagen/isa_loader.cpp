// Loads hw/tpc/isa.yaml and checks what the assembler and core rely on: fields that fit the slot
// word without overlap, unique opcodes per slot, operand forms whose roles and kinds agree,
// types and RTL types that exist, latencies the pipeline can hold.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/codegen.h"
#include "core/yaml_reader.h"
#include "hw/tpc/isagen/isa_spec.h"

namespace podsim::tpc::isagen {
namespace {

using core::YamlMap;

constexpr int kMaxLatency = 15;  // the core's pending-write ring holds 16 bundles

const std::set<std::string> kSlots = {"load", "spu", "vpu", "store"};
const std::set<std::string> kSuffixes = {"", "cond", "cvt", "src_type", "step"};
const std::set<std::string> kMemory = {"",           "global_load", "global_store",
                                       "local_load", "local_store", "fence"};
const std::set<std::string> kControl = {"", "loop", "jump", "halt"};
// Which kinds each role may take.
const std::map<char, std::set<std::string>> kRoleKinds = {
    {'d', {"v", "s", "i", "vp", "sp"}},
    {'a', {"v", "s", "i"}},
    {'b', {"v", "s", "vsi", "si", "ui", "t"}},
    {'c', {"v", "s", "vp", "lane"}},
};
const std::set<std::string> kBareKinds = {"label", "dims", "dim"};

[[noreturn]] void fail(const YamlMap& at, const std::string& message) { at.fail(message); }

OperandSpec parse_operand(const std::string& word, const YamlMap& at) {
  OperandSpec o;
  const std::size_t colon = word.find(':');
  if (colon == std::string::npos) {
    if (!kBareKinds.count(word)) fail(at, fmt::format("operand '{}' has no role", word));
    o.kind = word;
    return o;
  }
  std::string role = word.substr(0, colon);
  o.kind = word.substr(colon + 1);
  if (!role.empty() && role.back() == '?') {
    o.optional = true;
    role.pop_back();
  }
  if (role.size() != 1 || !kRoleKinds.count(role[0])) {
    fail(at, fmt::format("operand '{}': role must be d, a, b or c", word));
  }
  o.role = role[0];
  if (!kRoleKinds.at(o.role).count(o.kind)) {
    fail(at, fmt::format("operand '{}': kind '{}' cannot be role {}", word, o.kind, o.role));
  }
  return o;
}

std::vector<OperandSpec> parse_operands(const std::string& text, const YamlMap& at) {
  std::vector<OperandSpec> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(pos, comma - pos);
    word.erase(std::remove(word.begin(), word.end(), ' '), word.end());
    if (word.empty()) fail(at, fmt::format("operands '{}': an empty operand", text));
    out.push_back(parse_operand(word, at));
    pos = comma + 1;
  }
  std::set<std::string> used;
  for (const OperandSpec& o : out) {
    const std::string key = o.role ? std::string(1, o.role) : o.kind;
    if (!used.insert(key).second) fail(at, fmt::format("operands '{}': '{}' twice", text, key));
  }
  if (out.size() > 4) fail(at, fmt::format("operands '{}': at most four", text));
  return out;
}

class Loader {
 public:
  explicit Loader(const std::string& file) : file_(file) {}

  IsaSpec load(const YAML::Node& root) {
    YamlMap r(root, "", file_);
    isa_.name = r.text("isa");
    isa_.version = static_cast<int>(r.number("version", 255));
    read_bundle(r);
    read_fields(r);
    read_dtypes(r);
    read_register_files(r);
    isa_.conditions = r.words_or("conditions", {});
    if (isa_.conditions.empty() || isa_.conditions.size() > 8) {
      r.fail("'conditions' must list 1 to 8 comparisons (three bits of the modifier)");
    }
    read_latencies(r);
    read_accuracy(r);
    read_ops(r);
    r.finish();
    return std::move(isa_);
  }

 private:
  void read_bundle(YamlMap& root) {
    YamlMap r(root.get("bundle"), "bundle", file_);
    isa_.bundle_bytes = static_cast<int>(r.number("bytes", 64));
    isa_.slot_bits = static_cast<int>(r.number("slot_bits", 64));
    isa_.slots = r.words_or("slots", {});
    isa_.immediate_bit = static_cast<int>(r.number("immediate_bit", 511));
    r.get("reserved_bits");
    const std::vector<std::string> expected = {"load", "spu", "vpu", "store"};
    if (isa_.slots != expected) r.fail("'slots' must be [load, spu, vpu, store]");
    if (isa_.immediate_bit < 4 * isa_.slot_bits ||
        isa_.immediate_bit + 32 > isa_.bundle_bytes * 8) {
      r.fail("the immediate must follow the four slot words inside the bundle");
    }
    r.finish();
  }

  void read_fields(YamlMap& root) {
    core::NameSet names("field");
    std::vector<bool> taken(static_cast<std::size_t>(isa_.slot_bits), false);
    for (const auto& item : root.items("fields")) {
      YamlMap r(item.first, item.second, file_);
      Field f;
      f.name = r.identifier("name");
      names.add(f.name, r);
      f.lsb = static_cast<int>(r.number("lsb", 63));
      f.bits = static_cast<int>(r.number("bits", 32));
      f.meaning = r.text("meaning");
      r.finish();
      if (f.bits == 0 || f.lsb + f.bits > isa_.slot_bits) {
        r.fail(
            fmt::format("field '{}' must lie inside the {}-bit slot word", f.name, isa_.slot_bits));
      }
      for (int b = f.lsb; b < f.lsb + f.bits; ++b) {
        if (taken[static_cast<std::size_t>(b)]) {
          r.fail(fmt::format("field '{}' overlaps another at bit {}", f.name, b));
        }
        taken[static_cast<std::size_t>(b)] = true;
      }
      isa_.fields.push_back(f);
    }
    for (const char* needed : {"opcode", "dtype", "dst", "src_a", "src_b", "src_c", "pred",
                               "pred_not", "pred_vector", "b_kind", "modifier"}) {
      if (std::none_of(isa_.fields.begin(), isa_.fields.end(),
                       [&](const Field& f) { return f.name == needed; })) {
        root.fail(fmt::format("'fields' lacks '{}'", needed));
      }
    }
  }

  void read_dtypes(YamlMap& root) {
    core::NameSet names("type");
    for (const auto& item : root.items("dtypes")) {
      YamlMap r(item.first, item.second, file_);
      DtypeSpec d;
      d.name = r.identifier("name");
      names.add(d.name, r);
      d.code = static_cast<int>(r.number("code", 15));
      d.bytes = static_cast<int>(r.number("bytes", 4));
      d.kind = r.text("kind");
      d.meaning = r.text_or("meaning", "");
      r.finish();
      if (d.code != static_cast<int>(isa_.dtypes.size())) {
        r.fail(fmt::format("type '{}' must have code {} (codes count up from 0)", d.name,
                           isa_.dtypes.size()));
      }
      if (d.bytes != 1 && d.bytes != 2 && d.bytes != 4) r.fail("bytes must be 1, 2 or 4");
      if (d.kind != "float" && d.kind != "signed" && d.kind != "unsigned") {
        r.fail("kind must be float, signed or unsigned");
      }
      isa_.dtypes.push_back(d);
    }
  }

  void read_register_files(YamlMap& root) {
    core::NameSet names("register file");
    for (const auto& item : root.items("register_files")) {
      YamlMap r(item.first, item.second, file_);
      RegisterFileSpec f;
      f.name = r.identifier("name");
      names.add(f.name, r);
      f.count = static_cast<int>(r.number("count", 64));
      f.bytes = static_cast<int>(r.number("bytes", 256));
      f.meaning = r.text("meaning");
      r.finish();
      isa_.register_files.push_back(f);
    }
    for (const char* needed : {"v", "s", "i", "vp", "sp"}) {
      if (file_count(needed) == 0) root.fail(fmt::format("no register file '{}'", needed));
    }
  }

  int file_count(const std::string& name) const {
    for (const RegisterFileSpec& f : isa_.register_files)
      if (f.name == name) return f.count;
    return 0;
  }

  void read_latencies(YamlMap& root) {
    core::NameSet names("latency class");
    for (const auto& item : root.items("latency_classes")) {
      YamlMap r(item.first, item.second, file_);
      LatencyClassSpec c;
      c.name = r.identifier("name");
      names.add(c.name, r);
      c.meaning = r.text("meaning");
      r.finish();
      isa_.latency_classes.push_back(c);
    }
    if (isa_.latency_classes.empty()) root.fail("'latency_classes' lists none");
    core::NameSet generations("generation");
    for (const auto& item : root.items("generations")) {
      YamlMap r(item.first, item.second, file_);
      GenerationSpec g;
      g.name = r.identifier("name");
      generations.add(g.name, r);
      g.meaning = r.text("meaning");
      YamlMap l(r.get("latencies"), r.child_path("latencies"), file_);
      for (const LatencyClassSpec& c : isa_.latency_classes) {
        const int cycles = static_cast<int>(l.number(c.name, kMaxLatency));
        if (cycles == 0) l.fail(fmt::format("class '{}' must take 1 cycle or more", c.name));
        g.latencies.push_back(cycles);
      }
      l.finish();
      r.finish();
      isa_.generations.push_back(g);
    }
    if (isa_.generations.empty()) root.fail("'generations' lists none");
  }

  bool has_latency_class(const std::string& name) const {
    return std::any_of(isa_.latency_classes.begin(), isa_.latency_classes.end(),
                       [&](const LatencyClassSpec& c) { return c.name == name; });
  }

  void read_accuracy(YamlMap& root) {
    core::NameSet names("accuracy entry");
    for (const auto& item : root.items("accuracy")) {
      YamlMap r(item.first, item.second, file_);
      AccuracySpec a;
      a.name = r.identifier("name");
      names.add(a.name, r);
      a.range = r.text("range");
      a.max_ulp = static_cast<int>(r.number("max_ulp", 1u << 20));
      a.method = r.text("method");
      r.finish();
      isa_.accuracy.push_back(a);
    }
  }

  std::vector<std::string> read_types(YamlMap& r, const std::string& key,
                                      const std::vector<std::string>& allowed) {
    std::vector<std::string> words = r.words_or(key, {});
    if (words.size() == 1 && words[0] == "all") words = allowed;
    for (const std::string& w : words) {
      if (std::find(allowed.begin(), allowed.end(), w) == allowed.end()) {
        r.fail(fmt::format("'{}' names '{}', which is not one of the allowed types", key, w));
      }
    }
    return words;
  }

  void read_ops(YamlMap& root) {
    std::vector<std::string> all_types;
    for (const DtypeSpec& d : isa_.dtypes) all_types.push_back(d.name);
    std::set<std::pair<std::string, int>> opcodes;
    std::set<std::pair<std::string, std::string>> names;
    for (const auto& item : root.items("ops")) {
      YamlMap r(item.first, item.second, file_);
      OpSpec op;
      op.name = r.identifier("name");
      op.slot = r.text("slot");
      if (!kSlots.count(op.slot)) r.fail(fmt::format("unknown slot '{}'", op.slot));
      if (!names.insert({op.slot, op.name}).second) {
        r.fail(fmt::format("'{}' twice in the {} slot", op.name, op.slot));
      }
      op.opcode = static_cast<int>(r.number("opcode", 127));
      if (op.opcode == 0) r.fail("opcode 0 is nop in every slot");
      if (!opcodes.insert({op.slot, op.opcode}).second) {
        r.fail(fmt::format("opcode {} is taken in the {} slot", op.opcode, op.slot));
      }
      op.operands_text = r.text("operands");
      op.operands = parse_operands(op.operands_text, r);
      op.suffix = r.text_or("suffix", "");
      if (!kSuffixes.count(op.suffix)) r.fail(fmt::format("unknown suffix '{}'", op.suffix));
      op.dtypes = read_types(r, "dtypes", all_types);
      op.rtl = read_types(r, "rtl", op.dtypes);
      if (!op.rtl.empty() && op.slot != "vpu") r.fail("only VPU operations have RTL types");
      op.latency = r.text("latency");
      if (!has_latency_class(op.latency)) r.fail(fmt::format("no latency class '{}'", op.latency));
      op.float_latency = r.text_or("float_latency", op.latency);
      op.increment = r.text_or("increment", "");
      if (!op.increment.empty() && !has_latency_class(op.increment))
        r.fail(fmt::format("no latency class '{}'", op.increment));
      if (!has_latency_class(op.float_latency))
        r.fail(fmt::format("no latency class '{}'", op.float_latency));
      op.memory = r.text_or("memory", "");
      if (!kMemory.count(op.memory)) r.fail(fmt::format("unknown memory class '{}'", op.memory));
      op.control = r.text_or("control", "");
      if (!kControl.count(op.control)) r.fail(fmt::format("unknown control '{}'", op.control));
      op.accuracy = r.text_or("accuracy", "");
      if (!op.accuracy.empty() && !has_accuracy(op.accuracy)) {
        r.fail(fmt::format("no accuracy entry '{}'", op.accuracy));
      }
      for (const std::string& flag : r.words_or("flags", {})) {
        if (flag != "reads_d") r.fail(fmt::format("unknown flag '{}'", flag));
        op.reads_d = true;
      }
      op.summary = r.text("summary");
      r.finish();
      check_op(op, r);
      isa_.ops.push_back(op);
    }
  }

  bool has_accuracy(const std::string& name) const {
    return std::any_of(isa_.accuracy.begin(), isa_.accuracy.end(),
                       [&](const AccuracySpec& a) { return a.name == name; });
  }

  static void check_op(const OpSpec& op, const YamlMap& r) {
    const auto has = [&](const std::string& kind) {
      return std::any_of(op.operands.begin(), op.operands.end(),
                         [&](const OperandSpec& o) { return o.kind == kind; });
    };
    const bool modifier_taken = has("dims") || has("dim");
    if (modifier_taken && !op.suffix.empty()) {
      r.fail("an operation with dims or dim has no modifier left for a suffix");
    }
    if ((op.control == "loop" || op.control == "jump") && !has("label")) {
      r.fail("a loop or jump needs a label operand");
    }
    if (op.suffix == "cvt" && op.memory.rfind("global", 0) != 0) {
      r.fail("the cvt suffix belongs to global loads and stores");
    }
  }

  const std::string& file_;
  IsaSpec isa_;
};

}  // namespace

IsaSpec load_isa_text(const std::string& text, const std::string& file) {
  try {
    return Loader(file).load(core::parse_yaml(text, file));
  } catch (const core::YamlError& e) {
    throw IsaError(e.what());
  }
}

IsaSpec load_isa_file(const std::string& path) {
  std::string text;
  try {
    text = core::read_text_file(path);
  } catch (const std::invalid_argument& e) {
    throw IsaError(e.what());
  }
  return load_isa_text(text, path);
}

}  // namespace podsim::tpc::isagen
