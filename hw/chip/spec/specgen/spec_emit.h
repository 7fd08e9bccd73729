// Turns a checked ChipSpec into the generated artefacts: the C header (usable from C and C++),
// the packet tables of the C++ codec, and the markdown tables of docs/chip.md. Output is a pure
// function of the spec, so regenerating an unchanged spec gives byte-identical files.
#pragma once

#include <string>

#include "hw/chip/spec/specgen/spec_model.h"

namespace podsim::chip::specgen {

// `spec_path` is printed in the banner (relative, so the output does not depend on the tree).
std::string emit_c_header(const ChipSpec& spec, const std::string& spec_path);
std::string emit_codec_tables(const ChipSpec& spec, const std::string& spec_path);
std::string emit_docs_packets(const ChipSpec& spec);
std::string emit_docs_registers(const ChipSpec& spec);

// `doc` (a markdown page) with its generated "packets" and "registers" sections rewritten;
// throws std::invalid_argument when a section's markers are missing.
std::string update_docs(const std::string& doc, const ChipSpec& spec);

}  // namespace podsim::chip::specgen
