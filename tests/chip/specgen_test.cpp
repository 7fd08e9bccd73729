#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/codegen.h"
#include "hw/chip/spec/specgen/spec_emit.h"
#include "hw/chip/spec/specgen/spec_loader.h"

namespace podsim::chip::specgen {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A small valid spec; the tests break one line at a time (line numbers are in the comments).
const std::string kValid = R"(chip: demo
prefix: DEMO
source: "[U]"
constants:
  - {name: ANSWER, value: 42, meaning: "a constant"}
regions:
  - {name: RAM, base: 0x0, size: 0x1000, meaning: "memory"}
packet_header:
  fields:
    - {name: opcode, word: 1, bit: 24, width: 5, meaning: "id"}
    - {name: barrier, word: 1, bit: 31, width: 1, meaning: "barrier"}
packets:
  - name: WRITE
    opcode: 0x1
    size: 8
    meaning: "write"
    fields:
      - {name: value, word: 0, bit: 0, width: 32, meaning: "value"}
      - {name: offset, word: 1, bit: 0, width: 16, meaning: "offset"}
  - name: LONG
    opcode: 0x2
    size: 16
    meaning: "long"
    fields:
      - {name: addr, word: 2, bit: 0, width: 64, meaning: "address"}
layouts:
  - name: OBJ
    meaning: "object"
    fields:
      - {name: val, bit: 0, width: 15, meaning: "value"}
blocks:
  - name: BLK
    meaning: "block"
    registers:
      - {name: A, offset: 0x0, count: 4, stride: 8, layout: OBJ, meaning: "a"}
      - {name: B, offset: 0x4, count: 4, stride: 8, meaning: "b"}
    instances:
      - {name: BLK0, base: 0x10000}
      - {name: BLK1, base: 0x20000}
queues:
  streams: 2
  source: "[U]"
  engines:
    - {name: ENG_0, first_id: 0, qman: BLK0}
    - {name: ENG_1, first_id: 2, qman: BLK1}
)";

std::string with(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("test text lacks: " + from);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    load_spec_text(text, "test.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SpecGen, ValidSpecLoads) {
  const ChipSpec spec = load_spec_text(kValid, "test.yaml");
  EXPECT_EQ(spec.packets.size(), 2u);
  EXPECT_EQ(spec.blocks.at(0).extent(), 0x20u);
  EXPECT_EQ(spec.queue_count(), 4u);
  EXPECT_EQ(spec.all_fields(spec.packets[1]).front().name, "opcode");
}

TEST(SpecGen, OverlappingFieldsNameFileLineColumnAndKey) {
  EXPECT_EQ(error_of(with("{name: offset, word: 1, bit: 0", "{name: offset, word: 0, bit: 16")),
            "test.yaml:19:9: key 'packets[0].fields[1]': field 'offset' (bits 16..31) overlaps "
            "field 'value' (bits 0..31)");
}

TEST(SpecGen, FieldOverlappingTheHeaderIsRejected) {
  EXPECT_THAT(error_of(with("{name: offset, word: 1, bit: 0", "{name: offset, word: 1, bit: 16")),
              HasSubstr("overlaps field 'opcode' (bits 56..60)"));
}

TEST(SpecGen, FieldBeyondThePacketIsRejected) {
  EXPECT_EQ(error_of(with("{name: addr, word: 2", "{name: addr, word: 3")),
            "test.yaml:25:9: key 'packets[1].fields[0]': field 'addr' (bits 96..159) lies beyond "
            "the 16-byte packet (128 bits)");
}

TEST(SpecGen, DuplicateOpcodeIsRejected) {
  EXPECT_EQ(error_of(with("opcode: 0x2", "opcode: 0x1")),
            "test.yaml:21:13: key 'packets[1]': duplicate opcode 0x1: 'WRITE' and 'LONG'");
}

TEST(SpecGen, DuplicateRegisterAddressIsRejected) {
  EXPECT_EQ(error_of(with("{name: B, offset: 0x4", "{name: B, offset: 0x8")),
            "test.yaml:36:9: key 'blocks[0].registers[1]': duplicate register address: A[1] and "
            "B[0] are both at offset 0x8");
}

TEST(SpecGen, OverlappingInstancesAreRejected) {
  EXPECT_THAT(error_of(with("base: 0x20000", "base: 0x10010")),
              AllOf(StartsWith("test.yaml:39:9: key 'blocks[0].instances[1]'"),
                    HasSubstr("instance 'BLK1' at 0x10010 overlaps instance 'BLK0'")));
}

TEST(SpecGen, UnknownKeyIsRejected) {
  EXPECT_THAT(error_of(with("width: 32, meaning", "width: 32, colour: red, meaning")),
              AllOf(StartsWith("test.yaml:18:"),
                    HasSubstr("key 'packets[0].fields[0].colour': unknown key 'colour'")));
}

TEST(SpecGen, BadNumbersAndMissingKeysAreRejected) {
  EXPECT_THAT(error_of(with("width: 32,", "width: wide,")),
              HasSubstr("'width' must be a decimal or 0x-hex number, not 'wide'"));
  EXPECT_THAT(error_of(with("width: 32,", "width: 65,")), HasSubstr("'width' = 65 exceeds 64"));
  EXPECT_THAT(
      error_of(with("    size: 8\n", "")),
      AllOf(StartsWith("test.yaml:13:5: key 'packets[0]'"), HasSubstr("missing key 'size'")));
  EXPECT_THAT(error_of(with("layout: OBJ", "layout: NOPE")), HasSubstr("unknown layout 'NOPE'"));
  EXPECT_THAT(error_of(with("qman: BLK1", "qman: BLK9")),
              HasSubstr("unknown block instance 'BLK9'"));
  EXPECT_THAT(error_of(with("first_id: 2", "first_id: 1")),
              HasSubstr("queue id 1 of 'ENG_1' is already used by 'ENG_0'"));
}

TEST(SpecGen, YamlSyntaxErrorNamesTheLine) {
  EXPECT_THAT(error_of(with("{name: ANSWER, value: 42,", "{name: ANSWER, value: [42,")),
              StartsWith("test.yaml:5:"));
}

TEST(SpecGen, Gaudi1SpecLoadsAndGeneratesDeterministically) {
  const ChipSpec spec = load_spec_file(PODSIM_GAUDI1_SPEC);
  EXPECT_EQ(spec.packets.size(), 14u);
  EXPECT_EQ(spec.queue_count(), 113u);
  const std::string header = emit_c_header(spec, "gaudi1.yaml");
  EXPECT_EQ(header, emit_c_header(load_spec_file(PODSIM_GAUDI1_SPEC), "gaudi1.yaml"));
  EXPECT_THAT(header, HasSubstr("#define PODSIM_GAUDI1_SYNC_MNGR_E_N_BASE 0x7FFC4F1000ULL"));
  EXPECT_THAT(emit_codec_tables(spec, "gaudi1.yaml"),
              HasSubstr("{\"MSG_SHORT\", 0x4, 8, kMSG_SHORTFields, 10, -1, 0}"));
}

TEST(SpecGen, DocsSectionsAreReplacedBetweenTheirMarkers) {
  const ChipSpec spec = load_spec_text(kValid, "test.yaml");
  const std::string doc = "intro\n" + core::section_begin("packets", "podsim_specgen") + "old\n" +
                          core::section_end("packets") + "\nmiddle\n" +
                          core::section_begin("registers", "podsim_specgen") +
                          core::section_end("registers") + "\nend\n";
  const std::string updated = update_docs(doc, spec);
  EXPECT_THAT(updated, HasSubstr("| **WRITE** | 0x01 | 8 |"));
  EXPECT_THAT(updated, HasSubstr("| BLK0 |"));
  EXPECT_THAT(updated, StartsWith("intro\n"));
  EXPECT_THAT(updated, HasSubstr("\nmiddle\n"));
  EXPECT_EQ(update_docs(updated, spec), updated);
  EXPECT_EQ(core::find_section(updated, "packets"), emit_docs_packets(spec));
  EXPECT_THROW(update_docs("no markers\n", spec), std::invalid_argument);
}

}  // namespace
}  // namespace podsim::chip::specgen
