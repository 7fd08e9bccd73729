#include "hw/chip/spec/specgen/spec_emit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "core/codegen.h"

namespace podsim::chip::specgen {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string hex(std::uint64_t v) { return fmt::format("0x{:X}", v); }

// Keeps comment text from closing the comment it sits in.
std::string c_comment(std::string s) {
  for (std::size_t at = s.find("*/"); at != std::string::npos; at = s.find("*/")) s[at + 1] = ' ';
  return s;
}

// Escapes what would break a markdown table cell.
std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::uint64_t field_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

// Collects the header's text and refuses two macros with one name: the spec's names are unique
// per kind, but names of different kinds could still meet once prefixed.
class HeaderWriter {
 public:
  explicit HeaderWriter(const ChipSpec& spec) : spec_(spec) {}

  void line(const std::string& s = "") { out_ += s + "\n"; }
  void define(const std::string& name, const std::string& value, const std::string& comment = "") {
    claim(name);
    const std::string def = fmt::format("#define {} {}", name, value);
    line(comment.empty() ? def : fmt::format("{} /* {} */", def, c_comment(comment)));
  }
  void claim(const std::string& name) {
    if (!names_.insert(name).second) {
      throw std::invalid_argument(
          fmt::format("{}: two generated identifiers are both named '{}'", spec_.file, name));
    }
  }
  std::string P() const { return spec_.prefix; }         // macros
  std::string p() const { return lower(spec_.prefix); }  // functions and types
  const std::string& text() const { return out_; }

 private:
  const ChipSpec& spec_;
  std::string out_;
  std::set<std::string> names_;
};

std::string u32(std::uint64_t v) { return hex(v) + "u"; }
std::string u64(std::uint64_t v) { return hex(v) + "ULL"; }
// Counts read best in decimal, addresses and sizes in hex.
std::string readable(std::uint64_t v) { return v < 0x10000 ? fmt::format("{}", v) : hex(v); }
std::string constant(std::uint64_t v) {
  if (v < 0x10000) return readable(v) + "u";
  return v > 0xFFFFFFFF ? u64(v) : u32(v);
}

void emit_bit_helpers(HeaderWriter& w) {
  const std::string p = w.p();
  w.line("/* Packets are arrays of little-endian 32-bit words; a field may span words. */");
  w.line(fmt::format(
      "static inline void {}_put_bits(uint32_t *words, unsigned first_bit, unsigned width,\n"
      "                                uint64_t value) {{\n"
      "  while (width > 0u) {{\n"
      "    const unsigned shift = first_bit % 32u;\n"
      "    const unsigned n = (32u - shift < width) ? 32u - shift : width;\n"
      "    const uint32_t mask = (n == 32u ? 0xFFFFFFFFu : ((1u << n) - 1u)) << shift;\n"
      "    uint32_t *word = &words[first_bit / 32u];\n"
      "    *word = (*word & ~mask) | (((uint32_t)value << shift) & mask);\n"
      "    value >>= n;\n"
      "    first_bit += n;\n"
      "    width -= n;\n"
      "  }}\n"
      "}}\n",
      p));
  w.line(fmt::format(
      "static inline uint64_t {}_get_bits(const uint32_t *words, unsigned first_bit,\n"
      "                                   unsigned width) {{\n"
      "  uint64_t value = 0u;\n"
      "  unsigned done = 0u;\n"
      "  while (done < width) {{\n"
      "    const unsigned shift = first_bit % 32u;\n"
      "    const unsigned n = (32u - shift < width - done) ? 32u - shift : width - done;\n"
      "    const uint32_t mask = n == 32u ? 0xFFFFFFFFu : ((1u << n) - 1u);\n"
      "    value |= (uint64_t)((words[first_bit / 32u] >> shift) & mask) << done;\n"
      "    first_bit += n;\n"
      "    done += n;\n"
      "  }}\n"
      "  return value;\n"
      "}}\n",
      p));
}

void emit_field_macros(HeaderWriter& w, const std::string& stem, const FieldDef& f) {
  w.define(stem + "_BIT", fmt::format("{}u", f.first_bit()), f.meaning);
  w.define(stem + "_WORD", fmt::format("{}u", f.word));
  w.define(stem + "_SHIFT", fmt::format("{}u", f.bit));
  w.define(stem + "_WIDTH", fmt::format("{}u", f.width));
  if (f.bit + f.width <= 32) w.define(stem + "_MASK", u32(field_mask(f.width) << f.bit));
}

std::string param_type(const FieldDef& f) { return f.width > 32 ? "uint64_t" : "uint32_t"; }

void emit_packet_encoder(HeaderWriter& w, const ChipSpec& spec, const PacketDef& packet) {
  const std::string name = lower(packet.name);
  std::vector<std::string> params{"uint32_t *words"};
  for (const FieldDef& f : packet.fields) params.push_back(param_type(f) + " " + f.name);
  for (std::size_t i = 1; i < spec.header.size(); ++i) {
    params.push_back(param_type(spec.header[i]) + " " + spec.header[i].name);
  }
  w.claim(fmt::format("{}_encode_{}", w.p(), name));
  w.line(fmt::format("/* Writes the {}-byte fixed part of {}; values are cut to their widths.{} */",
                     packet.size, packet.name,
                     packet.tail.present() ? " The tail follows, written by the caller." : ""));
  w.line(fmt::format("static inline unsigned {}_encode_{}({}) {{", w.p(), name,
                     fmt::join(params, ", ")));
  w.line(
      fmt::format("  unsigned i;\n  for (i = 0u; i < {}u; ++i) words[i] = 0u;", packet.size / 4));
  const std::string put = w.p() + "_put_bits";
  w.line(fmt::format("  {}(words, {}_PKT_HDR_OPCODE_BIT, {}_PKT_HDR_OPCODE_WIDTH, {}_PACKET_{});",
                     put, w.P(), w.P(), w.P(), packet.name));
  for (std::size_t i = 1; i < spec.header.size(); ++i) {
    const std::string stem = fmt::format("{}_PKT_HDR_{}", w.P(), upper(spec.header[i].name));
    w.line(fmt::format("  {}(words, {}_BIT, {}_WIDTH, {});", put, stem, stem, spec.header[i].name));
  }
  for (const FieldDef& f : packet.fields) {
    const std::string stem = fmt::format("{}_PKT_{}_{}", w.P(), packet.name, upper(f.name));
    w.line(fmt::format("  {}(words, {}_BIT, {}_WIDTH, {});", put, stem, stem, f.name));
  }
  w.line(fmt::format("  return {}_PACKET_{}_SIZE;\n}}\n", w.P(), packet.name));
}

void emit_packets(HeaderWriter& w, const ChipSpec& spec) {
  w.line("/* ---- Packets ---- */");
  w.claim(w.p() + "_packet_id");
  w.line(fmt::format("enum {}_packet_id {{", w.p()));
  for (const PacketDef& packet : spec.packets) {
    w.claim(fmt::format("{}_PACKET_{}", w.P(), packet.name));
    w.line(fmt::format("  {}_PACKET_{} = {},", w.P(), packet.name, hex(packet.opcode)));
  }
  w.line("};");
  w.define(w.P() + "_PACKET_ID_LIMIT", fmt::format("{}u", 1u << spec.header.front().width),
           "opcodes are below this");
  w.line();
  for (const FieldDef& f : spec.header) {
    emit_field_macros(w, fmt::format("{}_PKT_HDR_{}", w.P(), upper(f.name)), f);
  }
  w.line();
  for (const PacketDef& packet : spec.packets) {
    w.define(fmt::format("{}_PACKET_{}_SIZE", w.P(), packet.name), fmt::format("{}u", packet.size),
             packet.meaning);
    if (packet.tail.present()) {
      w.define(fmt::format("{}_PACKET_{}_TAIL_UNIT", w.P(), packet.name),
               fmt::format("{}u", packet.tail.unit),
               fmt::format("bytes per {} unit: {}", packet.tail.count_field, packet.tail.meaning));
    }
    for (const FieldDef& f : packet.fields) {
      emit_field_macros(w, fmt::format("{}_PKT_{}_{}", w.P(), packet.name, upper(f.name)), f);
    }
    w.line();
  }
  emit_bit_helpers(w);
  for (const PacketDef& packet : spec.packets) emit_packet_encoder(w, spec, packet);
}

void emit_layouts(HeaderWriter& w, const ChipSpec& spec) {
  w.line("/* ---- Register value layouts ---- */");
  for (const LayoutDef& layout : spec.layouts) {
    w.line(fmt::format("/* {}: {} ({}) */", layout.name, c_comment(layout.meaning),
                       c_comment(layout.source)));
    std::vector<std::string> params, terms;
    for (const FieldDef& f : layout.fields) {
      const std::string stem = fmt::format("{}_{}_{}", w.P(), layout.name, upper(f.name));
      w.define(stem + "_SHIFT", fmt::format("{}u", f.bit), f.meaning);
      w.define(stem + "_WIDTH", fmt::format("{}u", f.width));
      w.define(stem + "_MASK", u32(field_mask(f.width) << f.bit));
      params.push_back("uint32_t " + f.name);
      terms.push_back(fmt::format("((uint32_t)({} << {}_SHIFT) & {}_MASK)", f.name, stem, stem));
    }
    const std::string fn = fmt::format("{}_make_{}", w.p(), lower(layout.name));
    w.claim(fn);
    w.line(fmt::format("static inline uint32_t {}({}) {{\n  return {};\n}}\n", fn,
                       fmt::join(params, ", "), fmt::join(terms, " |\n         ")));
  }
}

void emit_blocks(HeaderWriter& w, const ChipSpec& spec) {
  w.line("/* ---- Register blocks: NAME(base, i) is the address of element i ---- */");
  for (const BlockDef& block : spec.blocks) {
    w.line(fmt::format("/* {}: {} ({}) */", block.name, c_comment(block.meaning),
                       c_comment(block.source)));
    for (const RegisterDef& r : block.registers) {
      const std::string stem = fmt::format("{}_{}_{}", w.P(), block.name, r.name);
      w.define(stem + "_OFFSET", u32(r.offset), r.meaning);
      if (r.count > 1) {
        w.define(stem + "_COUNT", fmt::format("{}u", r.count));
        w.define(stem + "_STRIDE", u32(r.stride));
        w.define(stem + "(base, i)", fmt::format("((uint64_t)(base) + {} + (uint64_t)(i) * {})",
                                                 u32(r.offset), u32(r.stride)));
      } else {
        w.define(stem + "(base)", fmt::format("((uint64_t)(base) + {})", u32(r.offset)));
      }
    }
    for (const InstanceDef& n : block.instances) {
      w.define(fmt::format("{}_{}_BASE", w.P(), n.name), u64(n.base), block.name + " instance");
    }
    w.line();
  }
}

std::string queue_name(const EngineDef& e, unsigned stream) {
  return e.streams == 1 ? e.name : fmt::format("{}_{}", e.name, stream);
}

// A first id of 0 needs no lower bound (and an unsigned one would draw a warning).
std::string id_test(const EngineDef& e) {
  const std::string below = fmt::format("queue_id < {}u", e.first_id + e.streams);
  return e.first_id == 0 ? below : fmt::format("queue_id >= {}u && {}", e.first_id, below);
}

void emit_queues(HeaderWriter& w, const ChipSpec& spec) {
  w.line(fmt::format("/* ---- Queues ({}) ---- */", c_comment(spec.queue_source)));
  w.claim(w.p() + "_queue_id");
  w.line(fmt::format("enum {}_queue_id {{", w.p()));
  for (const EngineDef& e : spec.engines) {
    for (unsigned s = 0; s < e.streams; ++s) {
      const std::string name = fmt::format("{}_QUEUE_ID_{}", w.P(), queue_name(e, s));
      w.claim(name);
      w.line(fmt::format("  {} = {},", name, e.first_id + s));
    }
  }
  w.line(fmt::format("  {}_QUEUE_ID_SIZE = {}\n}};\n", w.P(), spec.queue_count()));
  w.claim(w.p() + "_queue_qman_base");
  w.line("/* Base of the QMAN serving a queue id; 0 for queues without a QMAN or unknown ids. */");
  w.line(fmt::format("static inline uint64_t {}_queue_qman_base(unsigned queue_id) {{", w.p()));
  for (const EngineDef& e : spec.engines) {
    if (e.qman.empty()) continue;
    w.line(fmt::format("  if ({}) return {}_{}_BASE;", id_test(e), w.P(), e.qman));
  }
  w.line("  return 0u;\n}\n");
  w.claim(w.p() + "_queue_stream");
  w.line("/* Stream (PQ index inside the QMAN) of a queue id; 0xFFFFFFFF for unknown ids. */");
  w.line(fmt::format("static inline unsigned {}_queue_stream(unsigned queue_id) {{", w.p()));
  for (const EngineDef& e : spec.engines) {
    w.line(fmt::format("  if ({}) return queue_id - {}u;", id_test(e), e.first_id));
  }
  w.line("  return 0xFFFFFFFFu;\n}\n");
}

std::string banner(const std::string& spec_path, const char* open, const char* close) {
  return fmt::format("{} Generated by podsim_specgen from {}. Do not edit: change the YAML file.{}",
                     open, spec_path, close);
}

}  // namespace

std::string emit_c_header(const ChipSpec& spec, const std::string& spec_path) {
  HeaderWriter w(spec);
  const std::string guard = "PODSIM_SPEC_" + upper(spec.chip) + "_H";
  w.line(banner(spec_path, "/*", " */"));
  w.line(
      fmt::format("/* Programming interface of {}: packets, address map, registers, queues.\n"
                  "   Facts from {}; tags are listed in docs/sources.md. */",
                  spec.chip, c_comment(spec.source)));
  w.line(fmt::format("#ifndef {0}\n#define {0}\n\n#include <stdint.h>\n", guard));
  w.line("#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
  w.line("/* ---- Constants ---- */");
  for (const ConstantDef& c : spec.constants) {
    w.define(fmt::format("{}_{}", w.P(), c.name), constant(c.value),
             fmt::format("{} {}", c.meaning, c.source));
  }
  w.line("\n/* ---- Address map ---- */");
  for (const RegionDef& r : spec.regions) {
    w.define(fmt::format("{}_REGION_{}_BASE", w.P(), r.name), u64(r.base), r.meaning);
    w.define(fmt::format("{}_REGION_{}_SIZE", w.P(), r.name), u64(r.size));
  }
  w.line();
  emit_packets(w, spec);
  emit_layouts(w, spec);
  emit_blocks(w, spec);
  emit_queues(w, spec);
  w.line(fmt::format("#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {} */", guard));
  return w.text();
}

std::string emit_codec_tables(const ChipSpec& spec, const std::string& spec_path) {
  std::string out = banner(spec_path, "//", "") + "\n";
  out +=
      "// Packet descriptions for the codec (hw/chip/spec/packet_codec.h): header fields first.\n";
  out += "namespace podsim::chip::spec::tables {\n\n";
  std::size_t max_fields = 0;
  for (const PacketDef& packet : spec.packets) {
    const auto fields = spec.all_fields(packet);
    max_fields = std::max(max_fields, fields.size());
    out += fmt::format("inline constexpr FieldSpec k{}Fields[] = {{\n", packet.name);
    for (const FieldDef& f : fields) {
      out += fmt::format("    {{\"{}\", {}, {}}},\n", f.name, f.first_bit(), f.width);
    }
    out += "};\n";
  }
  out += "\ninline constexpr PacketSpec kPackets[] = {\n";
  for (const PacketDef& packet : spec.packets) {
    const auto fields = spec.all_fields(packet);
    int tail_field = -1;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (packet.tail.present() && fields[i].name == packet.tail.count_field) {
        tail_field = static_cast<int>(i);
      }
    }
    out += fmt::format("    {{\"{}\", {}, {}, k{}Fields, {}, {}, {}}},\n", packet.name,
                       hex(packet.opcode), packet.size, packet.name, fields.size(), tail_field,
                       packet.tail.unit);
  }
  out += "};\n\n";
  out += fmt::format("inline constexpr std::size_t kMaxPacketFields = {};\n", max_fields);
  out += fmt::format("inline constexpr unsigned kOpcodeLimit = {};\n",
                     1u << spec.header.front().width);
  out += "\n}  // namespace podsim::chip::spec::tables\n";
  return out;
}

namespace {

std::string bits_text(const FieldDef& f) {
  return f.width == 1 ? fmt::format("{}", f.bit) : fmt::format("{}:{}", f.bit + f.width - 1, f.bit);
}

std::string field_row(const std::string& lead, const FieldDef& f) {
  return fmt::format("| {}{} | {} | {} | {} |\n", lead, f.name, f.word, bits_text(f),
                     md_cell(f.meaning));
}

}  // namespace

std::string emit_docs_packets(const ChipSpec& spec) {
  std::string out;
  out += fmt::format(
      "Every packet is a multiple of 32-bit little-endian words. Bits are counted inside the "
      "word named; a field wider than the rest of its word runs on into the next ones. All "
      "packets carry these header fields:\n\n");
  out += "| field | word | bits | meaning |\n|---|---|---|---|\n";
  for (const FieldDef& f : spec.header) out += field_row("", f);
  out += "\n| packet | opcode | bytes | field | word | bits | meaning |\n";
  out += "|---|---|---|---|---|---|---|\n";
  for (const PacketDef& packet : spec.packets) {
    const std::string head =
        fmt::format("| **{}** | {:#04x} | {} | ", packet.name, packet.opcode, packet.size);
    out += head + fmt::format("| | | {} |\n", md_cell(packet.meaning));
    for (const FieldDef& f : packet.fields) {
      out += fmt::format("| | | | {} | {} | {} | {} |\n", f.name, f.word, bits_text(f),
                         md_cell(f.meaning));
    }
    if (packet.tail.present()) {
      out += fmt::format("| | | + {} x {} | (tail) | {} | | {} |\n", packet.tail.count_field,
                         packet.tail.unit, packet.size / 4, md_cell(packet.tail.meaning));
    }
  }
  return out;
}

std::string emit_docs_registers(const ChipSpec& spec) {
  std::string out;
  out += "Device addresses (bytes):\n\n| region | base | size | meaning | source |\n";
  out += "|---|---|---|---|---|\n";
  for (const RegionDef& r : spec.regions) {
    out += fmt::format("| {} | {} | {} | {} | {} |\n", r.name, hex(r.base), hex(r.size),
                       md_cell(r.meaning), md_cell(r.source));
  }
  out += "\nConstants:\n\n| name | value | meaning | source |\n|---|---|---|---|\n";
  for (const ConstantDef& c : spec.constants) {
    out += fmt::format("| {} | {} | {} | {} |\n", c.name, readable(c.value), md_cell(c.meaning),
                       md_cell(c.source));
  }
  for (const BlockDef& block : spec.blocks) {
    out +=
        fmt::format("\n#### {}\n\n{} ({}). Instances: ", block.name, block.meaning, block.source);
    std::vector<std::string> instances;
    for (const InstanceDef& n : block.instances) {
      instances.push_back(fmt::format("{} {}", n.name, hex(n.base)));
    }
    out += fmt::format("{}.\n\n", fmt::join(instances, ", "));
    out += "| register | offset | count x stride | layout | meaning |\n|---|---|---|---|---|\n";
    for (const RegisterDef& r : block.registers) {
      const std::string repeat = r.count > 1 ? fmt::format("{} x {}", r.count, hex(r.stride)) : "";
      out += fmt::format("| {} | {} | {} | {} | {} |\n", r.name, hex(r.offset), repeat, r.layout,
                         md_cell(r.meaning));
    }
  }
  out +=
      "\n#### Register value layouts\n\n| layout | field | bits | meaning |\n|---|---|---|---|\n";
  for (const LayoutDef& layout : spec.layouts) {
    out += fmt::format("| **{}** | | | {} ({}) |\n", layout.name, md_cell(layout.meaning),
                       md_cell(layout.source));
    for (const FieldDef& f : layout.fields) {
      out += fmt::format("| | {} | {} | {} |\n", f.name, bits_text(f), md_cell(f.meaning));
    }
  }
  out += fmt::format("\n#### Queues\n\nQueue ids of the driver interface ({}):\n\n",
                     md_cell(spec.queue_source));
  out += "| engine | queue ids | streams | QMAN |\n|---|---|---|---|\n";
  for (const EngineDef& e : spec.engines) {
    out += fmt::format("| {} | {}-{} | {} | {} |\n", e.name, e.first_id, e.first_id + e.streams - 1,
                       e.streams, e.qman.empty() ? "-" : e.qman);
  }
  return out;
}

std::string update_docs(const std::string& doc, const ChipSpec& spec) {
  const std::string packets = core::replace_section(doc, "packets", emit_docs_packets(spec));
  return core::replace_section(packets, "registers", emit_docs_registers(spec));
}

}  // namespace podsim::chip::specgen
