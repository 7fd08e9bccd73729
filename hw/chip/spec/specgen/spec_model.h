// The chip programming interface as the generator sees it after loading and checking the YAML
// file (hw/chip/spec/gaudi1.yaml documents the format): packets and their bit fields, the
// address map, register blocks with their instances, register value layouts and the queue
// numbering. Captures positions, sizes and names; ignores access rights and reset values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/yaml_reader.h"

namespace podsim::chip::specgen {

// Where a key was written, for error messages (1-based line and column).
using Location = core::SourceLocation;

struct FieldDef {
  std::string name;
  unsigned word = 0;  // 32-bit word index; always 0 in register layouts
  unsigned bit = 0;   // offset inside `word`
  unsigned width = 0;
  std::string meaning;
  Location where;
  unsigned first_bit() const { return word * 32 + bit; }
  unsigned end_bit() const { return first_bit() + width; }
};

// A variable part after a packet's fixed bytes: `count_field` units of `unit` bytes.
struct TailDef {
  std::string count_field;
  unsigned unit = 0;
  std::string meaning;
  bool present() const { return unit != 0; }
};

struct PacketDef {
  std::string name;
  unsigned opcode = 0;
  unsigned size = 0;  // bytes of the fixed part
  std::string meaning;
  std::vector<FieldDef> fields;  // the packet's own fields, header excluded
  TailDef tail;
  Location where;
};

struct ConstantDef {
  std::string name;
  std::uint64_t value = 0;
  std::string meaning;
  std::string source;
};

struct RegionDef {
  std::string name;
  std::uint64_t base = 0;
  std::uint64_t size = 0;
  std::string meaning;
  std::string source;
};

struct LayoutDef {
  std::string name;
  std::string meaning;
  std::string source;
  std::vector<FieldDef> fields;
};

struct RegisterDef {
  std::string name;
  std::uint64_t offset = 0;
  unsigned count = 1;
  unsigned stride = 4;
  std::string layout;  // empty: a plain 32-bit value
  std::string meaning;
  std::uint64_t last_offset() const { return offset + std::uint64_t{count - 1} * stride; }
};

struct InstanceDef {
  std::string name;
  std::uint64_t base = 0;
  Location where;
};

struct BlockDef {
  std::string name;
  std::string meaning;
  std::string source;
  std::vector<RegisterDef> registers;
  std::vector<InstanceDef> instances;
  // Bytes from an instance's base to the end of its last register.
  std::uint64_t extent() const;
};

struct EngineDef {
  std::string name;
  unsigned first_id = 0;
  unsigned streams = 0;
  std::string qman;  // a block instance; empty for queues without a QMAN (the CPU queue)
};

struct ChipSpec {
  std::string chip;
  std::string prefix;  // of generated C identifiers, e.g. PODSIM_GAUDI1
  std::string source;
  std::string file;  // the YAML file, as given to the loader
  std::vector<ConstantDef> constants;
  std::vector<RegionDef> regions;
  std::vector<FieldDef> header;  // fields common to every packet
  std::vector<PacketDef> packets;
  std::vector<LayoutDef> layouts;
  std::vector<BlockDef> blocks;
  unsigned queue_streams = 0;
  std::string queue_source;
  std::vector<EngineDef> engines;

  // Header fields first, then the packet's own: the codec's field order.
  std::vector<FieldDef> all_fields(const PacketDef& packet) const;
  unsigned queue_count() const;  // one past the highest queue id
  const InstanceDef* find_instance(const std::string& name) const;
};

}  // namespace podsim::chip::specgen
