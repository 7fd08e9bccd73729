// podsim_tpc_isagen's model of hw/tpc/isa.yaml: the TPC instruction set as plain data, loaded
// and checked from the YAML (every error names file:line:column), and emitted as the C++ table
// that hw/tpc/isa.h includes and as the generated tables of docs/tpc/isa.md.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace podsim::tpc::isagen {

class IsaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Field {
  std::string name;
  int lsb = 0, bits = 0;
  std::string meaning;
};
struct DtypeSpec {
  std::string name;
  int code = 0, bytes = 0;
  std::string kind, meaning;
};
struct RegisterFileSpec {
  std::string name;
  int count = 0, bytes = 0;
  std::string meaning;
};
// One operand of an operation's assembly form: "d:v", "b?:vsi", "label", "dims", "dim".
struct OperandSpec {
  char role = 0;  // 'd', 'a', 'b', 'c'; 0 for label, dims and dim (immediate and modifier)
  std::string kind;
  bool optional = false;
};
struct OpSpec {
  std::string name, slot;
  int opcode = 0;
  std::string operands_text;
  std::vector<OperandSpec> operands;
  std::string suffix;               // "", cond, cvt, srctype, step
  std::vector<std::string> dtypes;  // empty: the operation takes no type
  std::vector<std::string> rtl;
  std::string latency, float_latency;  // latency classes (float_latency: the float types')
  std::string increment;               // the class of b's auto-increment, or empty
  std::string memory, control, accuracy;
  bool reads_d = false;
  std::string summary;
};
struct LatencyClassSpec {
  std::string name, meaning;
};
// One generation of the TPC and its cycles per latency class, in the classes' order.
struct GenerationSpec {
  std::string name, meaning;
  std::vector<int> latencies;
};
struct AccuracySpec {
  std::string name, range, method;
  int max_ulp = 0;
};

struct IsaSpec {
  std::string name;
  int version = 0;
  int bundle_bytes = 0, slot_bits = 0, immediate_bit = 0;
  std::vector<std::string> slots;
  std::vector<Field> fields;
  std::vector<DtypeSpec> dtypes;
  std::vector<RegisterFileSpec> register_files;
  std::vector<std::string> conditions;
  std::vector<LatencyClassSpec> latency_classes;
  std::vector<GenerationSpec> generations;
  std::vector<OpSpec> ops;
  std::vector<AccuracySpec> accuracy;
};

// Throw IsaError naming file:line:column and what is wrong.
IsaSpec load_isa_text(const std::string& text, const std::string& file);
IsaSpec load_isa_file(const std::string& path);

// The C++ table (enums, constants, the operation table) hw/tpc/isa.h includes.
std::string emit_cpp_table(const IsaSpec& isa, const std::string& source_name);
// docs/tpc/isa.md with its generated sections (encoding, types, registers, ops, accuracy) redone.
std::string update_docs(const std::string& doc, const IsaSpec& isa);

}  // namespace podsim::tpc::isagen
