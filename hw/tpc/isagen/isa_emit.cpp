// Emits the TPC ISA table as C++ (hw/tpc/isa.h's generated half) and as docs/tpc/isa.md's tables.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/codegen.h"
#include "hw/tpc/isagen/isa_spec.h"

namespace podsim::tpc::isagen {
namespace {

const char* const kTool = "podsim_tpc_isagen";

std::string camel(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string enum_name(const OpSpec& op) { return "k" + camel(op.slot) + camel(op.name); }

std::string kind_enum(const std::string& kind) {
  if (kind == "t") return "OperandKind::kTensor";
  return "OperandKind::k" + camel(kind);
}

std::string role_enum(char role) {
  switch (role) {
    case 'd':
      return "Role::kD";
    case 'a':
      return "Role::kA";
    case 'b':
      return "Role::kB";
    case 'c':
      return "Role::kC";
    default:
      return "Role::kNone";
  }
}

int class_index(const IsaSpec& isa, const std::string& name) {
  for (std::size_t i = 0; i < isa.latency_classes.size(); ++i)
    if (isa.latency_classes[i].name == name) return static_cast<int>(i);
  return -1;
}

int dtype_mask(const IsaSpec& isa, const std::vector<std::string>& names) {
  int mask = 0;
  for (const std::string& n : names) {
    for (const DtypeSpec& d : isa.dtypes)
      if (d.name == n) mask |= 1 << d.code;
  }
  return mask;
}

std::string cpp_op(const IsaSpec& isa, const OpSpec& op) {
  std::string operands;
  for (std::size_t i = 0; i < 4; ++i) {
    if (i < op.operands.size()) {
      const OperandSpec& o = op.operands[i];
      operands += fmt::format("{{{}, {}, {}}}", role_enum(o.role), kind_enum(o.kind),
                              o.optional ? "true" : "false");
    } else {
      operands += "{}";
    }
    if (i < 3) operands += ", ";
  }
  return fmt::format(
      "    {{\"{}\", Slot::k{}, {}, {{{{{}}}}}, {}, Suffix::k{}, 0x{:03X}, 0x{:03X}, {}, {}, {}, "
      "MemoryClass::k{}, Control::k{}, {}}},\n",
      op.name, camel(op.slot), op.opcode, operands, op.operands.size(),
      op.suffix.empty() ? "None" : camel(op.suffix), dtype_mask(isa, op.dtypes),
      dtype_mask(isa, op.rtl), class_index(isa, op.latency), class_index(isa, op.float_latency),
      op.increment.empty() ? 255 : class_index(isa, op.increment),
      op.memory.empty() ? "None" : camel(op.memory),
      op.control.empty() ? "None" : camel(op.control), op.reads_d ? "true" : "false");
}

// A table row; a '|' inside a cell is escaped so that it does not split the cell.
std::string md_row(std::initializer_list<std::string> cells) {
  std::string row = "|";
  for (const std::string& c : cells) {
    std::string cell;
    for (char ch : c) cell += ch == '|' ? std::string("\\|") : std::string(1, ch);
    row += " " + cell + " |";
  }
  return row + "\n";
}

std::string type_list(const IsaSpec& isa, const std::vector<std::string>& types) {
  if (types.empty()) return "-";
  if (types.size() == isa.dtypes.size()) return "all";
  std::string out;
  for (const std::string& t : types) out += (out.empty() ? "" : " ") + t;
  return out;
}

std::string docs_encoding(const IsaSpec& isa) {
  std::string out = fmt::format(
      "A bundle is {} bytes, little-endian: the {} slot words of {} bits each from bit 0 ({}), "
      "then the 32-bit immediate at bit {}; the bits above it are reserved and must be zero.\n\n",
      isa.bundle_bytes, isa.slots.size(), isa.slot_bits, "load, SPU, VPU, store",
      isa.immediate_bit);
  out += md_row({"field", "bits", "meaning"});
  out += md_row({"---", "---", "---"});
  for (const Field& f : isa.fields) {
    out += md_row({f.name, fmt::format("{}..{}", f.lsb, f.lsb + f.bits - 1), f.meaning});
  }
  return out;
}

std::string docs_types(const IsaSpec& isa) {
  std::string out = md_row({"type", "code", "bytes", "lanes", "kind", "meaning"});
  out += md_row({"---", "---", "---", "---", "---", "---"});
  for (const DtypeSpec& d : isa.dtypes) {
    out += md_row({d.name, std::to_string(d.code), std::to_string(d.bytes),
                   std::to_string(256 / d.bytes), d.kind, d.meaning.empty() ? "-" : d.meaning});
  }
  std::string conds;
  for (std::size_t i = 0; i < isa.conditions.size(); ++i) {
    conds += fmt::format("{}`{}` = {}", i ? ", " : "", isa.conditions[i], i);
  }
  return out + "\nComparisons (modifier bits 0..2): " + conds + ".\n";
}

std::string docs_registers(const IsaSpec& isa) {
  std::string out = md_row({"file", "registers", "bytes each", "meaning"});
  out += md_row({"---", "---", "---", "---"});
  for (const RegisterFileSpec& f : isa.register_files) {
    out += md_row({f.name, fmt::format("{}0..{}{}", f.name, f.name, f.count - 1),
                   std::to_string(f.bytes), f.meaning});
  }
  return out;
}

std::string docs_ops(const IsaSpec& isa) {
  std::string out;
  for (const std::string& slot : isa.slots) {
    out += fmt::format("\n#### {} slot\n\n", slot == "spu" || slot == "vpu"
                                                 ? std::string(slot == "spu" ? "SPU" : "VPU")
                                                 : camel(slot));
    out +=
        md_row({"op", "opcode", "operands", "suffix", "types", "latency", "RTL", "what it does"});
    out += md_row({"---", "---", "---", "---", "---", "---", "---", "---"});
    for (const OpSpec& op : isa.ops) {
      if (op.slot != slot) continue;
      out += md_row({"`" + op.name + "`", std::to_string(op.opcode),
                     op.operands_text.empty() ? "-" : "`" + op.operands_text + "`",
                     op.suffix.empty() ? "-" : op.suffix, type_list(isa, op.dtypes),
                     op.float_latency == op.latency ? op.latency
                                                    : op.latency + ", floats " + op.float_latency,
                     type_list(isa, op.rtl), op.summary});
    }
  }
  return out;
}

std::string docs_latencies(const IsaSpec& isa) {
  std::string out = "| class |";
  std::string rule = "|---|";
  for (const GenerationSpec& g : isa.generations) {
    out += " " + g.name + " |";
    rule += "---|";
  }
  out += " meaning |\n" + rule + "---|\n";
  for (std::size_t c = 0; c < isa.latency_classes.size(); ++c) {
    out += "| " + isa.latency_classes[c].name + " |";
    for (const GenerationSpec& g : isa.generations) out += fmt::format(" {} |", g.latencies[c]);
    out += " " + isa.latency_classes[c].meaning + " |\n";
  }
  out += "\nGenerations: ";
  for (std::size_t i = 0; i < isa.generations.size(); ++i) {
    out += fmt::format("{}`{}` {}", i ? "; " : "", isa.generations[i].name,
                       isa.generations[i].meaning);
  }
  return out + ".\n";
}

std::string docs_accuracy(const IsaSpec& isa) {
  std::string out = md_row({"function", "range tested", "max error (f32 ulp)", "method"});
  out += md_row({"---", "---", "---", "---"});
  for (const AccuracySpec& a : isa.accuracy) {
    out += md_row({a.name, a.range, std::to_string(a.max_ulp), a.method});
  }
  return out;
}

}  // namespace

std::string emit_cpp_table(const IsaSpec& isa, const std::string& source_name) {
  std::string out = fmt::format(
      "// Generated by {} from {}: do not edit.\n"
      "// clang-format off\n"
      "namespace podsim::tpc {{\n\n"
      "inline constexpr int kIsaVersion = {};\n"
      "inline constexpr int kBundleBytes = {};\n"
      "inline constexpr int kSlotBits = {};\n"
      "inline constexpr int kImmediateBit = {};\n\n",
      kTool, source_name, isa.version, isa.bundle_bytes, isa.slot_bits, isa.immediate_bit);
  out += "// Slot-word fields: lsb and width.\nnamespace field {\n";
  for (const Field& f : isa.fields) {
    out += fmt::format("inline constexpr BitField k{}{{{}, {}}};\n", camel(f.name), f.lsb, f.bits);
  }
  out += "}  // namespace field\n\nenum class Dtype : std::uint8_t {\n";
  for (const DtypeSpec& d : isa.dtypes) out += fmt::format("  k{} = {},\n", camel(d.name), d.code);
  out += fmt::format("}};\ninline constexpr int kDtypeCount = {};\n", isa.dtypes.size());
  out += "inline constexpr DtypeInfo kDtypes[kDtypeCount] = {\n";
  for (const DtypeSpec& d : isa.dtypes) {
    out += fmt::format("    {{\"{}\", {}, DtypeKind::k{}}},\n", d.name, d.bytes, camel(d.kind));
  }
  out += "};\n\nenum class Cond : std::uint8_t {";
  for (const std::string& c : isa.conditions) out += fmt::format(" k{},", camel(c));
  out += " };\n";
  out += fmt::format("inline constexpr int kCondCount = {};\n", isa.conditions.size());
  out += "inline constexpr const char* kCondNames[kCondCount] = {";
  for (const std::string& c : isa.conditions) out += fmt::format("\"{}\", ", c);
  out += "};\n\n";
  for (const RegisterFileSpec& f : isa.register_files) {
    out += fmt::format("inline constexpr int k{}Registers = {};\n", camel(f.name), f.count);
  }
  out += "\n// Latency classes and the cycles each generation gives them.\n";
  out += "enum class LatencyClass : std::uint8_t {";
  for (const LatencyClassSpec& c : isa.latency_classes) out += fmt::format(" k{},", camel(c.name));
  out += " };\n";
  out += fmt::format("inline constexpr int kLatencyClassCount = {};\n", isa.latency_classes.size());
  out += "enum class Generation : std::uint8_t {";
  for (const GenerationSpec& g : isa.generations) out += fmt::format(" k{},", camel(g.name));
  out += " };\n";
  out += fmt::format("inline constexpr int kGenerationCount = {};\n", isa.generations.size());
  out += "inline constexpr const char* kGenerationNames[kGenerationCount] = {";
  for (const GenerationSpec& g : isa.generations) out += fmt::format("\"{}\", ", g.name);
  out += "};\n";
  out += "inline constexpr std::uint8_t kLatencies[kGenerationCount][kLatencyClassCount] = {\n";
  for (const GenerationSpec& g : isa.generations) {
    out += "    {";
    for (int cycles : g.latencies) out += fmt::format("{}, ", cycles);
    out += "},\n";
  }
  out += "};\n";
  out += "\nenum class Op : std::uint8_t {\n";
  for (const OpSpec& op : isa.ops) out += fmt::format("  {},\n", enum_name(op));
  out += fmt::format("}};\ninline constexpr int kOpCount = {};\n\n", isa.ops.size());
  out += "inline constexpr OpInfo kOps[kOpCount] = {\n";
  for (const OpSpec& op : isa.ops) out += cpp_op(isa, op);
  out += "};\n\ninline constexpr AccuracyInfo kAccuracy[] = {\n";
  for (const AccuracySpec& a : isa.accuracy) {
    out += fmt::format("    {{\"{}\", {}}},\n", a.name, a.max_ulp);
  }
  out += "};\n\n}  // namespace podsim::tpc\n// clang-format on\n";
  return out;
}

std::string update_docs(const std::string& doc, const IsaSpec& isa) {
  std::string out = doc;
  const std::pair<const char*, std::string> sections[] = {{"encoding", docs_encoding(isa)},
                                                          {"types", docs_types(isa)},
                                                          {"registers", docs_registers(isa)},
                                                          {"latencies", docs_latencies(isa)},
                                                          {"ops", docs_ops(isa)},
                                                          {"accuracy", docs_accuracy(isa)}};
  for (const auto& [name, content] : sections) out = core::replace_section(out, name, content);
  return out;
}

}  // namespace podsim::tpc::isagen
