// Loads a chip programming-interface YAML file into a ChipSpec and checks it: unknown or missing
// keys, numbers out of range, overlapping fields, fields beyond the packet or register, duplicate
// opcodes, names and register addresses, overlapping block instances. Every error names
// file:line:column and the key path, e.g.
//   gaudi1.yaml:120:9: key 'packets[3].fields[1]': field 'mask' (bits 8..15) overlaps 'sid' ...
#pragma once

#include <string>

#include "core/yaml_reader.h"
#include "hw/chip/spec/specgen/spec_model.h"

namespace podsim::chip::specgen {

using SpecError = core::YamlError;

// `file` names the text in messages. Throws SpecError.
ChipSpec load_spec_text(const std::string& text, const std::string& file);
// Throws SpecError, also when the file cannot be read.
ChipSpec load_spec_file(const std::string& path);

}  // namespace podsim::chip::specgen
