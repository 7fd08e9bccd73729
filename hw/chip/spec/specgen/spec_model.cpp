#include "hw/chip/spec/specgen/spec_model.h"

#include <algorithm>

namespace podsim::chip::specgen {

std::uint64_t BlockDef::extent() const {
  std::uint64_t end = 0;
  for (const RegisterDef& r : registers) end = std::max(end, r.last_offset() + 4);
  return end;
}

std::vector<FieldDef> ChipSpec::all_fields(const PacketDef& packet) const {
  std::vector<FieldDef> fields = header;
  fields.insert(fields.end(), packet.fields.begin(), packet.fields.end());
  return fields;
}

unsigned ChipSpec::queue_count() const {
  unsigned end = 0;
  for (const EngineDef& e : engines) end = std::max(end, e.first_id + e.streams);
  return end;
}

const InstanceDef* ChipSpec::find_instance(const std::string& name) const {
  for (const BlockDef& b : blocks) {
    for (const InstanceDef& n : b.instances) {
      if (n.name == name) return &n;
    }
  }
  return nullptr;
}

}  // namespace podsim::chip::specgen
