// The TPC assembler and disassembler: text to bundles and back (docs/tpc/isa.md, "Assembly").
// A line holds one bundle, its slot instructions separated by ';' (exposed-pipeline code, as the
// hardware runs it). Between .sched and .endsched each instruction is read with sequential
// meaning (a result is there for the next instruction) and the scheduler (scheduler.h) packs
// them into bundles, waiting out every latency. Labels name bundles; {NAME} is replaced by a
// definition the caller gives (a kernel built for several types); .rep COUNT NAME ... .endrep
// repeats lines with a counter, and braces hold integer expressions of counters and definitions
// (an unrolled loop's registers and offsets).
// Every error names line and column; malformed input never crashes the assembler.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/tpc/isa.h"

namespace podsim::tpc {

class AsmError : public std::runtime_error {
 public:
  AsmError(std::string source, int line, int column, const std::string& message);
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  int line_, column_;
  std::string message_;
};

struct AssembleOptions {
  std::string source_name = "<input>";  // names the text in messages
  std::map<std::string, std::string> defines;
  // The cores the code is scheduled for: .sched blocks wait out this generation's latencies.
  Generation generation = Generation::kGaudi2;
};

struct Assembly {
  std::string kernel_name;                      // from .kernel, or empty
  Generation generation = Generation::kGaudi2;  // what it was scheduled for
  std::vector<Bundle> bundles;
  std::vector<int> lines;  // per bundle, the source line it came from (0: scheduler padding)
};

// Throws AsmError for malformed input.
Assembly assemble(const std::string& text, const AssembleOptions& options = {});

// One instruction as text ("add.f32 v1, v2, 1.5", "(!sp2) jmp L3"); labels are written L<n>
// for bundle n.
std::string disassemble_instruction(const Instruction& in, std::uint32_t immediate);
// Whole programs: one bundle per line, L<n>: before every bundle a jump or loop names.
// assemble(disassemble(b)).bundles == b for every checked program b.
std::string disassemble(const std::vector<Bundle>& bundles);

}  // namespace podsim::tpc
