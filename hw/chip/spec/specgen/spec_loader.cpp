#include "hw/chip/spec/specgen/spec_loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace podsim::chip::specgen {
namespace {

using MapReader = core::YamlMap;
using core::NameSet;

FieldDef read_field(const std::pair<YAML::Node, std::string>& item, bool in_packet,
                    const std::string& file) {
  MapReader r(item.first, item.second, file);
  FieldDef f;
  f.where = r.where();
  f.name = r.identifier("name");
  if (in_packet) f.word = static_cast<unsigned>(r.number("word", 63));
  f.bit = static_cast<unsigned>(r.number("bit", 31));
  f.width = static_cast<unsigned>(r.number("width", 64));
  if (f.width == 0) r.fail(fmt::format("field '{}' has width 0", f.name));
  f.meaning = r.text("meaning");
  r.finish();
  return f;
}

std::string bit_range(const FieldDef& f) {
  return fmt::format("bits {}..{}", f.first_bit(), f.end_bit() - 1);
}

// Fields must fit in `bits` and must not overlap one another; `fixed` fields (the packet
// header) are checked against too but reported as already placed.
void check_fields(const std::vector<FieldDef>& fields, const std::vector<FieldDef>& fixed,
                  unsigned bits, const std::string& container, const std::string& path) {
  std::vector<FieldDef> placed = fixed;
  NameSet names("field");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const FieldDef& f = fields[i];
    const std::string key = fmt::format("{}.fields[{}]", path, i);
    if (f.end_bit() > bits) {
      throw SpecError(f.where, key,
                      fmt::format("field '{}' ({}) lies beyond the {} ({} bits)", f.name,
                                  bit_range(f), container, bits));
    }
    for (const FieldDef& other : placed) {
      if (other.name == f.name) {
        throw SpecError(f.where, key, fmt::format("duplicate field '{}'", f.name));
      }
      if (f.first_bit() < other.end_bit() && other.first_bit() < f.end_bit()) {
        throw SpecError(f.where, key,
                        fmt::format("field '{}' ({}) overlaps field '{}' ({})", f.name,
                                    bit_range(f), other.name, bit_range(other)));
      }
    }
    placed.push_back(f);
  }
}

std::vector<FieldDef> read_fields(MapReader& r, bool in_packet) {
  std::vector<FieldDef> fields;
  for (const auto& item : r.items("fields"))
    fields.push_back(read_field(item, in_packet, r.file()));
  return fields;
}

class Loader {
 public:
  Loader(const std::string& file) : file_(file) {}

  ChipSpec load(const YAML::Node& root) {
    MapReader r(root, "", file_);
    spec_.file = file_;
    spec_.chip = r.identifier("chip");
    spec_.prefix = r.identifier("prefix");
    spec_.source = r.text("source");
    read_constants(r);
    read_regions(r);
    read_header(r);
    read_packets(r);
    read_layouts(r);
    read_blocks(r);
    check_instances_disjoint();
    read_queues(r);
    r.finish();
    return std::move(spec_);
  }

 private:
  void read_constants(MapReader& root) {
    NameSet names("constant");
    for (const auto& item : root.items("constants")) {
      MapReader r(item.first, item.second, file_);
      ConstantDef c;
      c.name = r.identifier("name");
      names.add(c.name, r);
      c.value = r.number("value", UINT64_MAX);
      c.meaning = r.text("meaning");
      c.source = r.text_or("source", spec_.source);
      r.finish();
      spec_.constants.push_back(c);
    }
  }

  void read_regions(MapReader& root) {
    NameSet names("region");
    for (const auto& item : root.items("regions")) {
      MapReader r(item.first, item.second, file_);
      RegionDef g;
      g.name = r.identifier("name");
      names.add(g.name, r);
      g.base = r.number("base", UINT64_MAX);
      g.size = r.number("size", UINT64_MAX);
      if (g.size == 0) r.fail(fmt::format("region '{}' has size 0", g.name));
      g.meaning = r.text("meaning");
      g.source = r.text_or("source", spec_.source);
      r.finish();
      for (const RegionDef& other : spec_.regions) {
        if (g.base < other.base + other.size && other.base < g.base + g.size) {
          r.fail(fmt::format("region '{}' overlaps region '{}'", g.name, other.name));
        }
      }
      spec_.regions.push_back(g);
    }
  }

  void read_header(MapReader& root) {
    MapReader r(root.get("packet_header"), "packet_header", file_);
    spec_.header = read_fields(r, true);
    r.finish();
    check_fields(spec_.header, {}, 64, "first 8 bytes", r.path());
    const auto opcode = std::find_if(spec_.header.begin(), spec_.header.end(),
                                     [](const FieldDef& f) { return f.name == "opcode"; });
    if (opcode == spec_.header.end()) r.fail("the packet header needs a field named 'opcode'");
    if (opcode != spec_.header.begin()) r.fail("'opcode' must be the header's first field");
  }

  void read_packets(MapReader& root) {
    NameSet names("packet");
    std::map<unsigned, std::string> opcodes;
    const unsigned opcode_limit = 1u << spec_.header.front().width;
    for (const auto& item : root.items("packets")) {
      MapReader r(item.first, item.second, file_);
      PacketDef p;
      p.where = r.where();
      p.name = r.identifier("name");
      names.add(p.name, r);
      p.opcode = static_cast<unsigned>(r.number("opcode", opcode_limit - 1));
      if (!opcodes.emplace(p.opcode, p.name).second) {
        r.fail_at(item.first["opcode"], fmt::format("duplicate opcode {:#x}: '{}' and '{}'",
                                                    p.opcode, opcodes[p.opcode], p.name));
      }
      p.size = static_cast<unsigned>(r.number("size", 4096));
      if (p.size < 8 || p.size % 4 != 0) {
        r.fail_at(item.first["size"], fmt::format("packet size {} must be a multiple of 4, at "
                                                  "least 8 (the header)",
                                                  p.size));
      }
      p.meaning = r.text("meaning");
      p.fields = read_fields(r, true);
      check_fields(p.fields, spec_.header, p.size * 8, fmt::format("{}-byte packet", p.size),
                   r.path());
      if (r.has("tail")) p.tail = read_tail(r, p);
      r.finish();
      spec_.packets.push_back(p);
    }
  }

  TailDef read_tail(MapReader& packet, const PacketDef& p) {
    MapReader r(packet.get("tail"), packet.child_path("tail"), file_);
    TailDef t;
    t.count_field = r.identifier("count_field");
    t.unit = static_cast<unsigned>(r.number("unit", 4096));
    if (t.unit == 0 || t.unit % 4 != 0) r.fail("tail unit must be a positive multiple of 4");
    t.meaning = r.text("meaning");
    r.finish();
    const bool known = std::any_of(p.fields.begin(), p.fields.end(),
                                   [&](const FieldDef& f) { return f.name == t.count_field; });
    if (!known)
      r.fail(fmt::format("count_field '{}' is not a field of '{}'", t.count_field, p.name));
    return t;
  }

  void read_layouts(MapReader& root) {
    NameSet names("layout");
    for (const auto& item : root.items("layouts")) {
      MapReader r(item.first, item.second, file_);
      LayoutDef l;
      l.name = r.identifier("name");
      names.add(l.name, r);
      l.meaning = r.text("meaning");
      l.source = r.text_or("source", spec_.source);
      l.fields = read_fields(r, false);
      check_fields(l.fields, {}, 32, "32-bit register", r.path());
      r.finish();
      spec_.layouts.push_back(l);
    }
  }

  void read_blocks(MapReader& root) {
    NameSet names("block");
    for (const auto& item : root.items("blocks")) {
      MapReader r(item.first, item.second, file_);
      BlockDef b;
      b.name = r.identifier("name");
      names.add(b.name, r);
      b.meaning = r.text("meaning");
      b.source = r.text_or("source", spec_.source);
      read_registers(r, b);
      read_instances(r, b);
      r.finish();
      spec_.blocks.push_back(b);
    }
  }

  void read_registers(MapReader& block, BlockDef& b) {
    NameSet names("register");
    std::map<std::uint64_t, std::string> addresses;  // offset -> "NAME[i]"
    for (const auto& item : block.items("registers")) {
      MapReader r(item.first, item.second, file_);
      RegisterDef g;
      g.name = r.identifier("name");
      names.add(g.name, r);
      g.offset = r.number("offset", 0xFFFFFFFF);
      g.count = static_cast<unsigned>(r.number_or("count", 1, 1u << 20));
      g.stride = static_cast<unsigned>(r.number_or("stride", 4, 1u << 20));
      if (g.offset % 4 != 0) r.fail(fmt::format("offset {:#x} is not 4-byte aligned", g.offset));
      if (g.count == 0) r.fail("count must be at least 1");
      if (g.stride < 4 || g.stride % 4 != 0) r.fail("stride must be a positive multiple of 4");
      g.layout = r.text_or("layout", "");
      if (!g.layout.empty() && !find_layout(g.layout)) {
        r.fail_at(item.first["layout"], fmt::format("unknown layout '{}'", g.layout));
      }
      g.meaning = r.text("meaning");
      r.finish();
      for (unsigned i = 0; i < g.count; ++i) {
        const std::uint64_t at = g.offset + std::uint64_t{i} * g.stride;
        const std::string label = fmt::format("{}[{}]", g.name, i);
        const auto [it, fresh] = addresses.emplace(at, label);
        if (!fresh) {
          r.fail(fmt::format("duplicate register address: {} and {} are both at offset {:#x}",
                             it->second, label, at));
        }
      }
      b.registers.push_back(g);
    }
  }

  void read_instances(MapReader& block, BlockDef& b) {
    for (const auto& item : block.items("instances")) {
      MapReader r(item.first, item.second, file_);
      InstanceDef n;
      n.where = r.where();
      n.name = r.identifier("name");
      instance_names_.add(n.name, r);
      n.base = r.number("base", UINT64_MAX);
      if (n.base % 4 != 0) r.fail(fmt::format("base {:#x} is not 4-byte aligned", n.base));
      r.finish();
      b.instances.push_back(n);
    }
  }

  // Two instances sharing an address would make one register answer for two.
  void check_instances_disjoint() const {
    struct Span {
      std::uint64_t begin, end;
      const InstanceDef* instance;
      std::string key;
    };
    std::vector<Span> spans;
    for (std::size_t b = 0; b < spec_.blocks.size(); ++b) {
      const BlockDef& block = spec_.blocks[b];
      for (std::size_t i = 0; i < block.instances.size(); ++i) {
        const InstanceDef& n = block.instances[i];
        spans.push_back(
            {n.base, n.base + block.extent(), &n, fmt::format("blocks[{}].instances[{}]", b, i)});
      }
    }
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
    for (std::size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].begin < spans[i - 1].end) {
        const Span& later = spans[i];
        throw SpecError(later.instance->where, later.key,
                        fmt::format("duplicate register address: instance '{}' at {:#x} overlaps "
                                    "instance '{}' ({:#x}..{:#x})",
                                    later.instance->name, later.begin, spans[i - 1].instance->name,
                                    spans[i - 1].begin, spans[i - 1].end - 1));
      }
    }
  }

  void read_queues(MapReader& root) {
    MapReader r(root.get("queues"), "queues", file_);
    spec_.queue_streams = static_cast<unsigned>(r.number("streams", 64));
    spec_.queue_source = r.text("source");
    NameSet names("engine");
    std::map<unsigned, std::string> ids;
    for (const auto& item : r.items("engines")) {
      MapReader e(item.first, item.second, file_);
      EngineDef d;
      d.name = e.identifier("name");
      names.add(d.name, e);
      d.first_id = static_cast<unsigned>(e.number("first_id", 1u << 16));
      d.streams = static_cast<unsigned>(e.number_or("streams", spec_.queue_streams, 64));
      d.qman = e.text_or("qman", "");
      if (!d.qman.empty() && !spec_.find_instance(d.qman)) {
        e.fail_at(item.first["qman"], fmt::format("unknown block instance '{}'", d.qman));
      }
      e.finish();
      for (unsigned s = 0; s < d.streams; ++s) {
        const auto [it, fresh] = ids.emplace(d.first_id + s, d.name);
        if (!fresh) {
          e.fail(fmt::format("queue id {} of '{}' is already used by '{}'", d.first_id + s, d.name,
                             it->second));
        }
      }
      spec_.engines.push_back(d);
    }
    r.finish();
  }

  const LayoutDef* find_layout(const std::string& name) const {
    for (const LayoutDef& l : spec_.layouts) {
      if (l.name == name) return &l;
    }
    return nullptr;
  }

  const std::string& file_;
  ChipSpec spec_;
  NameSet instance_names_{"block instance"};
};

}  // namespace

ChipSpec load_spec_text(const std::string& text, const std::string& file) {
  return Loader(file).load(core::parse_yaml(text, file));
}

ChipSpec load_spec_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(Location{path, 0, 0}, "", "cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_spec_text(text.str(), path);
}

}  // namespace podsim::chip::specgen
