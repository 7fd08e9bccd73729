#include "hw/tpc/assembler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "hw/tpc/numerics.h"
#include "hw/tpc/scheduler.h"

namespace podsim::tpc {

AsmError::AsmError(std::string source, int line, int column, const std::string& message)
    : std::runtime_error(fmt::format("{}:{}:{}: {}", source, line, column, message)),
      line_(line),
      column_(column),
      message_(message) {}

namespace {

// ---------------------------------------------------------------- text

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!is_ident_char(c)) return false;
  return true;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The register a token names, if it names one: "v3" -> (kV, 3).
std::optional<std::pair<OperandKind, int>> parse_register(const std::string& t) {
  static const std::pair<const char*, OperandKind> files[] = {{"vp", OperandKind::kVp},
                                                              {"sp", OperandKind::kSp},
                                                              {"v", OperandKind::kV},
                                                              {"s", OperandKind::kS},
                                                              {"i", OperandKind::kI}};
  for (const auto& [prefix, kind] : files) {
    const std::size_t n = std::strlen(prefix);
    if (t.size() <= n || t.size() > n + 3 || t.compare(0, n, prefix) != 0) continue;
    const std::string digits = t.substr(n);
    if (!std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    return std::make_pair(kind, std::stoi(digits));
  }
  return std::nullopt;
}

// A number literal: integers (decimal, 0x, 0b, with a sign), floats (with '.', an exponent, inf,
// nan) and raw binary32 bits (0f followed by eight hex digits).
struct Number {
  bool is_float = false;
  std::int64_t integer = 0;
  float real = 0;
};

std::optional<Number> parse_number(const std::string& t) {
  if (t.empty()) return std::nullopt;
  Number n;
  const bool negative = t[0] == '-';
  const std::string body = (t[0] == '-' || t[0] == '+') ? t.substr(1) : t;
  if (body.empty()) return std::nullopt;
  if (body == "inf" || body == "nan") {
    n.is_float = true;
    n.real = body == "inf" ? INFINITY : float_of(kCanonicalNanF32);
    if (negative) n.real = -n.real;
    return n;
  }
  if (!negative && body.size() == 10 && body[0] == '0' && body[1] == 'f') {
    char* end = nullptr;
    const unsigned long bits = std::strtoul(body.c_str() + 2, &end, 16);
    if (*end != '\0' || !std::isxdigit(static_cast<unsigned char>(body[2]))) return std::nullopt;
    n.is_float = true;
    n.real = float_of(static_cast<std::uint32_t>(bits));
    return n;
  }
  const bool hex = body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X');
  const bool bin = body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'B');
  if (hex || bin) {
    const std::string digits = body.substr(2);
    if (digits.size() > (hex ? 8u : 32u)) return std::nullopt;
    for (char c : digits) {
      if (hex ? !std::isxdigit(static_cast<unsigned char>(c)) : (c != '0' && c != '1'))
        return std::nullopt;
    }
    n.integer = static_cast<std::int64_t>(std::stoull(digits, nullptr, hex ? 16 : 2));
    if (negative) n.integer = -n.integer;
    return n;
  }
  if (!std::isdigit(static_cast<unsigned char>(body[0])) && body[0] != '.') return std::nullopt;
  const bool looks_float = body.find_first_of(".eE") != std::string::npos;
  if (!looks_float) {
    if (body.size() > 10 || !std::all_of(body.begin(), body.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        }))
      return std::nullopt;
    n.integer = std::stoll(body);
    if (negative) n.integer = -n.integer;
    return n;
  }
  char* end = nullptr;
  errno = 0;
  const float value = std::strtof(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') return std::nullopt;
  n.is_float = true;
  n.real = value;
  return n;
}

// ---------------------------------------------------------------- one instruction

// An instruction as parsed, before labels are known.
struct Parsed {
  Instruction instruction;
  std::optional<std::uint32_t> immediate;
  std::string label;  // a label operand to resolve
  int label_column = 0;
  int line = 0, column = 0;
};

struct Failure {
  int column;
  std::string message;
};

class InstructionParser {
 public:
  InstructionParser(const std::string& text, int column) : text_(text), base_(column) {}

  // Throws Failure.
  Parsed parse() {
    Parsed p;
    std::size_t pos = skip_space(0);
    p.column = col(pos);
    if (pos < text_.size() && text_[pos] == '(') pos = parse_predicate(pos, p.instruction);
    pos = skip_space(pos);
    const std::size_t mnemonic_start = pos;
    while (pos < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos]))) ++pos;
    const std::string mnemonic = text_.substr(mnemonic_start, pos - mnemonic_start);
    if (mnemonic.empty()) throw Failure{col(mnemonic_start), "an instruction is missing"};
    const std::vector<Token> operands = split_operands(pos);
    std::vector<std::string> suffixes;
    std::string name = mnemonic;
    if (const std::size_t dot = mnemonic.find('.'); dot != std::string::npos) {
      name = mnemonic.substr(0, dot);
      std::size_t start = dot + 1;
      while (true) {
        const std::size_t next = mnemonic.find('.', start);
        suffixes.push_back(
            mnemonic.substr(start, next == std::string::npos ? std::string::npos : next - start));
        if (next == std::string::npos) break;
        start = next + 1;
      }
    }
    return choose(name, suffixes, operands, p, col(mnemonic_start));
  }

 private:
  int col(std::size_t pos) const { return base_ + static_cast<int>(pos); }
  std::size_t skip_space(std::size_t pos) const {
    while (pos < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos]))) ++pos;
    return pos;
  }

  std::size_t parse_predicate(std::size_t pos, Instruction& in) {
    const std::size_t close = text_.find(')', pos);
    if (close == std::string::npos) throw Failure{col(pos), "a predicate lacks its ')'"};
    std::string inner = trim(text_.substr(pos + 1, close - pos - 1));
    if (!inner.empty() && inner[0] == '!') {
      in.pred_not = true;
      inner = trim(inner.substr(1));
    }
    const auto reg = parse_register(inner);
    if (!reg || (reg->first != OperandKind::kSp && reg->first != OperandKind::kVp)) {
      throw Failure{col(pos + 1),
                    fmt::format("'{}' is not a predicate register (sp0..sp15, vp0..vp15)", inner)};
    }
    if (reg->second >= 16)
      throw Failure{col(pos + 1), fmt::format("predicate {} does not exist", inner)};
    in.pred = static_cast<std::uint8_t>(reg->second);
    in.pred_vector = reg->first == OperandKind::kVp;
    return close + 1;
  }

  std::vector<Token> split_operands(std::size_t pos) const {
    std::vector<Token> out;
    pos = skip_space(pos);
    if (pos >= text_.size()) return out;
    while (true) {
      const std::size_t comma = text_.find(',', pos);
      const std::size_t end = comma == std::string::npos ? text_.size() : comma;
      const std::size_t start = skip_space(pos);
      const std::string word = trim(text_.substr(pos, end - pos));
      if (word.empty()) throw Failure{col(start), "an empty operand"};
      out.push_back(Token{word, col(start)});
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return out;
  }

  Parsed choose(const std::string& name, const std::vector<std::string>& suffixes,
                const std::vector<Token>& operands, Parsed base, int column) {
    const std::vector<Op> candidates = find_ops(name);
    if (candidates.empty()) throw Failure{column, fmt::format("unknown operation '{}'", name)};
    std::optional<Failure> chosen;
    bool chosen_fits = false;
    for (Op op : candidates) {
      try {
        Parsed p = base;
        build(op, suffixes, operands, p, column);
        return p;
      } catch (const Failure& f) {
        // Report the form whose first operand is of the register file written: "add v1, v2,
        // v40" is a VPU add with a bad operand, not an SPU add.
        const bool fits = first_operand_fits(op, operands);
        if (!chosen || (fits && !chosen_fits)) chosen = f, chosen_fits = fits;
      }
    }
    if (candidates.size() == 1 || chosen_fits || operands.empty()) throw *chosen;
    std::string forms;
    for (Op op : candidates) {
      forms += fmt::format("{}{} {} ({})", forms.empty() ? "" : "; ", name, operand_forms(op),
                           slot_name(info(op).slot));
    }
    throw Failure{column, fmt::format("the operands fit no form of {}: {}", name, forms)};
  }

  static bool first_operand_fits(Op op, const std::vector<Token>& operands) {
    if (operands.empty() || info(op).operand_count == 0) return false;
    const auto reg = parse_register(operands[0].text);
    return reg && reg->first == info(op).operands[0].kind;
  }

  static std::string operand_forms(Op op) {
    static const char* const kinds[] = {"v",       "s",     "i",     "vp",     "sp",
                                        "v|s|imm", "s|imm", "s|int", "tensor", "lane",
                                        "label",   "dims",  "dim"};
    static const char* const roles[] = {"", "d:", "a:", "b:", "c:"};
    std::string out;
    const OpInfo& o = info(op);
    for (int i = 0; i < o.operand_count; ++i) {
      const OperandSpec& s = o.operands[static_cast<std::size_t>(i)];
      out += fmt::format("{}{}{}{}", i ? ", " : "", roles[static_cast<int>(s.role)],
                         kinds[static_cast<int>(s.kind)], s.optional ? "?" : "");
    }
    return out;
  }

  static Dtype dtype_named(const std::string& s, int column) {
    const auto t = find_dtype(s);
    if (!t) throw Failure{column, fmt::format("'{}' is not a type", s)};
    return *t;
  }

  // Applies the suffixes: type, comparison, conversion, loop step.
  static void apply_suffixes(Op op, const std::vector<std::string>& suffixes, Instruction& in,
                             int column) {
    const OpInfo& o = info(op);
    std::vector<std::string> rest = suffixes;
    switch (o.suffix) {
      case Suffix::kCond: {
        if (rest.empty())
          throw Failure{column, fmt::format("{} needs a comparison: {}.lt, ...", o.name, o.name)};
        const auto cond = find_cond(rest[0]);
        if (!cond)
          throw Failure{column,
                        fmt::format("'{}' is not a comparison (eq ne lt le gt ge)", rest[0])};
        in.modifier = static_cast<std::uint8_t>(*cond);
        rest.erase(rest.begin());
        break;
      }
      case Suffix::kCvt:
        if (rest.size() == 2) {
          const bool load = o.memory == MemoryClass::kGlobalLoad;
          const std::string& reg = load ? rest[0] : rest[1];
          if (reg != "f32") {
            throw Failure{
                column, fmt::format("{} converts between the memory type and f32 lanes: {}", o.name,
                                    load ? "ld_tnsr.f32.<mem>" : "st_tnsr.<mem>.f32")};
          }
          in.modifier = 1;
          rest = {load ? rest[1] : rest[0]};
        }
        break;
      case Suffix::kSrcType:
        if (rest.size() != 2)
          throw Failure{column, fmt::format("{} is written {}.<to>.<from>", o.name, o.name)};
        in.modifier = static_cast<std::uint8_t>(dtype_named(rest[1], column));
        rest.pop_back();
        break;
      case Suffix::kStep: {
        in.modifier = 1;
        const bool numeric = !rest.empty() && !find_dtype(rest[0]);
        if (numeric) {
          const auto n = parse_number(rest[0]);
          if (!n || n->is_float || n->integer == 0 || n->integer < -16 || n->integer > 15) {
            throw Failure{column,
                          fmt::format("loop step '{}': a whole number in -16..15, not 0", rest[0])};
          }
          in.modifier = static_cast<std::uint8_t>(n->integer & 31);
          rest.erase(rest.begin());
        }
        break;
      }
      case Suffix::kNone:
        break;
    }
    if (o.dtypes == 0) {
      if (!rest.empty()) throw Failure{column, fmt::format("{} takes no type", o.name)};
      return;
    }
    if (rest.size() > 1) throw Failure{column, fmt::format("too many suffixes on {}", o.name)};
    in.dtype =
        rest.empty() ? static_cast<Dtype>(__builtin_ctz(o.dtypes)) : dtype_named(rest[0], column);
    if (!takes(op, in.dtype)) {
      throw Failure{column, fmt::format("{} does not take type {}", o.name, info(in.dtype).name)};
    }
  }

  static std::uint8_t* field_for(Instruction& in, Role role) {
    switch (role) {
      case Role::kD:
        return &in.dst;
      case Role::kA:
        return &in.a;
      case Role::kB:
        return &in.b;
      case Role::kC:
        return &in.c;
      case Role::kNone:
        return nullptr;
    }
    return nullptr;
  }

  // The immediate bits of a literal for an operand of the operation's type.
  static std::uint32_t value_bits(const Number& n, Dtype t, bool integer_only, const Token& tok) {
    const bool float_type = !integer_only && is_float(t);
    if (float_type) return bits_of(n.is_float ? n.real : static_cast<float>(n.integer));
    if (n.is_float)
      throw Failure{tok.column, fmt::format("'{}': an integer is needed here", tok.text)};
    if (n.integer < INT32_MIN || n.integer > UINT32_MAX) {
      throw Failure{tok.column, fmt::format("'{}' does not fit in 32 bits", tok.text)};
    }
    return static_cast<std::uint32_t>(n.integer);
  }

  static std::int64_t literal(const Token& tok, std::int64_t lo, std::int64_t hi,
                              const char* what) {
    const auto n = parse_number(tok.text);
    if (!n || n->is_float || n->integer < lo || n->integer > hi) {
      throw Failure{tok.column, fmt::format("'{}': {} must be a whole number in {}..{}", tok.text,
                                            what, lo, hi)};
    }
    return n->integer;
  }

  static void operand(const OperandSpec& spec, const Token& tok, Instruction& in, Parsed& p) {
    std::uint8_t* field = field_for(in, spec.role);
    const auto reg = parse_register(tok.text);
    const auto want_register = [&](OperandKind kind) {
      if (!reg || reg->first != kind) {
        throw Failure{tok.column,
                      fmt::format("'{}': a {} register is needed here", tok.text,
                                  kind == OperandKind::kV    ? "vector (v)"
                                  : kind == OperandKind::kS  ? "scalar (s)"
                                  : kind == OperandKind::kI  ? "index (i)"
                                  : kind == OperandKind::kVp ? "vector predicate (vp)"
                                                             : "scalar predicate (sp)")};
      }
      if (reg->second >= register_count(kind)) {
        throw Failure{tok.column, fmt::format("'{}' does not exist ({} registers)", tok.text,
                                              register_count(kind))};
      }
      *field = static_cast<std::uint8_t>(reg->second);
    };
    switch (spec.kind) {
      case OperandKind::kV:
      case OperandKind::kS:
      case OperandKind::kI:
      case OperandKind::kVp:
      case OperandKind::kSp:
        return want_register(spec.kind);
      case OperandKind::kVsi:
      case OperandKind::kSi:
      case OperandKind::kUi: {
        if (reg) {
          const bool vector_ok = spec.kind == OperandKind::kVsi;
          if (reg->first == OperandKind::kV && vector_ok) {
            in.b_kind = BKind::kRegister;
            return want_register(OperandKind::kV);
          }
          if (reg->first == OperandKind::kS) {
            in.b_kind = vector_ok ? BKind::kScalar : BKind::kRegister;
            return want_register(OperandKind::kS);
          }
          throw Failure{tok.column,
                        fmt::format("'{}': a {} is needed here", tok.text,
                                    vector_ok ? "vector, scalar or number" : "scalar or number")};
        }
        const auto n = parse_number(tok.text);
        if (!n)
          throw Failure{tok.column,
                        fmt::format("'{}' is neither a register nor a number", tok.text)};
        in.b_kind = BKind::kImmediate;
        p.immediate = value_bits(*n, in.dtype, spec.kind == OperandKind::kUi, tok);
        return;
      }
      case OperandKind::kTensor:
        *field = static_cast<std::uint8_t>(literal(tok, 0, 15, "a tensor"));
        return;
      case OperandKind::kLane:
        *field = static_cast<std::uint8_t>(literal(tok, 0, 3, "a lane group"));
        return;
      case OperandKind::kDims:
        in.modifier = static_cast<std::uint8_t>(literal(tok, 1, 31, "a dimension mask"));
        return;
      case OperandKind::kDim:
        in.modifier = static_cast<std::uint8_t>(literal(tok, 0, 4, "a dimension"));
        return;
      case OperandKind::kLabel:
        if (!is_identifier(tok.text) || reg) {
          throw Failure{tok.column, fmt::format("'{}' is not a label name", tok.text)};
        }
        p.label = tok.text;
        p.label_column = tok.column;
        return;
    }
  }

  void build(Op op, const std::vector<std::string>& suffixes, const std::vector<Token>& operands,
             Parsed& p, int column) {
    Instruction& in = p.instruction;
    in.nop = false;
    in.op = op;
    apply_suffixes(op, suffixes, in, column);
    const OpInfo& o = info(op);
    int required = 0;
    for (int i = 0; i < o.operand_count; ++i)
      required += o.operands[static_cast<std::size_t>(i)].optional ? 0 : 1;
    if (static_cast<int>(operands.size()) < required ||
        static_cast<int>(operands.size()) > o.operand_count) {
      throw Failure{column,
                    fmt::format("{} takes {}{} operands ({}), not {}", o.name,
                                required == o.operand_count ? "" : fmt::format("{} to ", required),
                                o.operand_count, operand_forms(op), operands.size())};
    }
    for (std::size_t i = 0; i < operands.size(); ++i) operand(o.operands[i], operands[i], in, p);
    // What only the whole instruction can tell: conversions, read-only predicates, ranges.
    DecodedBundle single;
    single.bundle.slot(o.slot) = in;
    single.bundle.immediate = p.immediate.value_or(p.label.empty() ? 0 : 1);
    if (auto problem = check_bundle(single)) throw Failure{column, *problem};
  }

  const std::string& text_;
  int base_;
};

// ---------------------------------------------------------------- the program

// What the program is made of, in order: explicit bundles and scheduled blocks.
struct Chunk {
  bool scheduled = false;
  std::vector<std::string> labels;   // naming the chunk's first bundle
  std::vector<Parsed> instructions;  // an explicit bundle's, or a block's
  int line = 0;
};

class Assembler {
 public:
  Assembler(const std::string& text, const AssembleOptions& options)
      : text_(text), options_(options) {}

  Assembly run() {
    read_lines();
    if (in_sched_) fail(sched_line_, 1, ".sched is never closed by .endsched");
    lay_out();
    if (out_.bundles.empty()) fail(1, 1, "the program has no instructions");
    if (out_.bundles.size() > kMaxBundles) fail(1, 1, "the program has too many bundles");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(int line, int column, const std::string& message) const {
    throw AsmError(options_.source_name, line, column, message);
  }

  // {NAME} is a definition the caller gave or a .rep counter; anything else between braces is an
  // integer expression over them (+ - * / % and parentheses): {J*256}, {TLANES*(J+1)}.
  std::string substitute(const std::string& line, int number,
                         const std::map<std::string, long>& counters) const {
    std::string out;
    std::size_t pos = 0;
    while (true) {
      const std::size_t open = line.find('{', pos);
      if (open == std::string::npos) break;
      const std::size_t close = line.find('}', open);
      if (close == std::string::npos) fail(number, static_cast<int>(open) + 1, "'{' without '}'");
      const std::string name = line.substr(open + 1, close - open - 1);
      const auto it = options_.defines.find(name);
      std::string value;
      if (it != options_.defines.end()) {
        value = it->second;
      } else if (is_identifier(name) && !counters.count(name)) {
        fail(number, static_cast<int>(open) + 1, fmt::format("'{{{}}}' is not defined", name));
      } else {
        value = std::to_string(evaluate(name, number, static_cast<int>(open) + 1, counters));
      }
      out += line.substr(pos, open - pos) + value;
      pos = close + 1;
    }
    return out + line.substr(pos);
  }

  // An integer expression of .rep counters, numeric definitions and literals.
  long evaluate(const std::string& text, int number, int column,
                const std::map<std::string, long>& counters) const {
    std::size_t at = 0;
    const auto skip = [&] {
      while (at < text.size() && text[at] == ' ') ++at;
    };
    const auto bad = [&](const std::string& why) -> long {
      fail(number, column, fmt::format("'{{{}}}': {}", text, why));
    };
    std::function<long()> sum;
    std::function<long()> atom = [&]() -> long {
      skip();
      if (at < text.size() && text[at] == '(') {
        ++at;
        const long v = sum();
        skip();
        if (at >= text.size() || text[at] != ')') return bad("a '(' without ')'");
        ++at;
        return v;
      }
      if (at < text.size() && text[at] == '-') {
        ++at;
        return -atom();
      }
      const std::size_t begin = at;
      while (at < text.size() && is_ident_char(text[at])) ++at;
      const std::string word = text.substr(begin, at - begin);
      if (word.empty()) return bad("a value is missing");
      if (std::isdigit(static_cast<unsigned char>(word[0]))) {
        char* end = nullptr;
        const long v = std::strtol(word.c_str(), &end, 0);
        if (*end != '\0') return bad(fmt::format("'{}' is not a number", word));
        return v;
      }
      if (const auto c = counters.find(word); c != counters.end()) return c->second;
      if (const auto d = options_.defines.find(word); d != options_.defines.end()) {
        char* end = nullptr;
        const long v = std::strtol(d->second.c_str(), &end, 0);
        if (d->second.empty() || *end != '\0')
          return bad(fmt::format("'{}' is '{}', not a number", word, d->second));
        return v;
      }
      return bad(fmt::format("'{}' is not defined", word));
    };
    const std::function<long()> product = [&]() -> long {
      long v = atom();
      for (;;) {
        skip();
        if (at < text.size() && (text[at] == '*' || text[at] == '/' || text[at] == '%')) {
          const char op = text[at++];
          const long r = atom();
          if (op != '*' && r == 0) return bad("a division by 0");
          v = op == '*' ? v * r : op == '/' ? v / r : v % r;
        } else {
          return v;
        }
      }
    };
    sum = [&]() -> long {
      long v = product();
      for (;;) {
        skip();
        if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
          const char op = text[at++];
          const long r = product();
          v = op == '+' ? v + r : v - r;
        } else {
          return v;
        }
      }
    };
    const long v = sum();
    skip();
    if (at != text.size()) return bad(fmt::format("'{}' is left over", text.substr(at)));
    return v;
  }

  struct Line {
    std::string text;
    int number;
  };

  // Expands lines[from, to) with the counters given, .rep blocks repeated (nested ones too).
  void expand(const std::vector<Line>& lines, std::size_t from, std::size_t to,
              std::map<std::string, long>& counters) {
    for (std::size_t i = from; i < to; ++i) {
      const std::string text = substitute(lines[i].text, lines[i].number, counters);
      const std::string t = trim(strip_comment(text));
      if (t.rfind(".endrep", 0) == 0) fail(lines[i].number, 1, ".endrep without .rep");
      if (t.rfind(".rep", 0) != 0 || (t.size() > 4 && t[4] != ' ')) {
        read_line(text, lines[i].number);
        continue;
      }
      // .rep COUNT NAME: the lines up to the matching .endrep, COUNT times, NAME from 0.
      std::istringstream words(t.substr(4));
      std::string count_text, name, extra;
      words >> count_text >> name >> extra;
      char* end = nullptr;
      const long count = std::strtol(count_text.c_str(), &end, 10);
      if (count_text.empty() || *end != '\0' || count < 0 || count > 4096 || !is_identifier(name) ||
          !extra.empty()) {
        fail(lines[i].number, 1, ".rep takes a count (0 to 4096) and a counter name");
      }
      if (counters.count(name) || options_.defines.count(name))
        fail(lines[i].number, 1, fmt::format(".rep counter '{}' is already a name", name));
      int depth = 1;
      std::size_t close = i + 1;
      for (; close < to; ++close) {
        const std::string u = trim(strip_comment(lines[close].text));
        if (u.rfind(".rep ", 0) == 0) ++depth;
        if (u.rfind(".endrep", 0) == 0 && --depth == 0) break;
      }
      if (close == to) fail(lines[i].number, 1, ".rep is never closed by .endrep");
      for (long n = 0; n < count; ++n) {
        counters[name] = n;
        expand(lines, i + 1, close, counters);
      }
      counters.erase(name);
      i = close;
    }
  }

  static std::string strip_comment(std::string line) {
    for (const char* comment : {"//", "#"}) {
      const std::size_t at = line.find(comment);
      if (at != std::string::npos) line.resize(at);
    }
    return line;
  }

  void read_lines() {
    std::vector<Line> lines;
    int number = 0;
    std::size_t start = 0;
    while (start <= text_.size()) {
      std::size_t end = text_.find('\n', start);
      if (end == std::string::npos) end = text_.size();
      lines.push_back({text_.substr(start, end - start), ++number});
      start = end + 1;
    }
    std::map<std::string, long> counters;
    expand(lines, 0, lines.size(), counters);
  }

  void read_line(std::string line, int number) {
    for (char& c : line) {
      if (c == '\t' || c == '\r') c = ' ';
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7E) {
        fail(number, static_cast<int>(&c - line.data()) + 1,
             "a character that is not printable ASCII");
      }
    }
    for (const char* comment : {"//", "#"}) {
      const std::size_t at = line.find(comment);
      if (at != std::string::npos) line.resize(at);
    }
    std::size_t pos = 0;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos == line.size()) return;
    if (line[pos] == '.') return directive(line, pos, number);
    // Labels: "name:" at the start, perhaps several.
    while (true) {
      std::size_t end = pos;
      while (end < line.size() && is_ident_char(line[end])) ++end;
      if (end > pos && end < line.size() && line[end] == ':') {
        label(line.substr(pos, end - pos), number, static_cast<int>(pos) + 1);
        pos = end + 1;
        while (pos < line.size() && line[pos] == ' ') ++pos;
        if (pos == line.size()) return;
        continue;
      }
      break;
    }
    std::vector<Parsed> parsed;
    std::size_t at = pos;
    while (true) {
      const std::size_t semi = line.find(';', at);
      const std::size_t end = semi == std::string::npos ? line.size() : semi;
      const std::string piece = line.substr(at, end - at);
      if (trim(piece) == "nop") {
        // an empty slot, nothing to add
      } else if (trim(piece).empty()) {
        fail(number, static_cast<int>(at) + 1, "an empty instruction between ';'");
      } else {
        try {
          Parsed p = InstructionParser(piece, static_cast<int>(at) + 1).parse();
          p.line = number;
          parsed.push_back(std::move(p));
        } catch (const Failure& f) {
          fail(number, f.column, f.message);
        }
      }
      if (semi == std::string::npos) break;
      at = semi + 1;
    }
    in_sched_ ? add_scheduled(std::move(parsed), number) : add_bundle(std::move(parsed), number);
  }

  void directive(const std::string& line, std::size_t pos, int number) {
    std::size_t end = pos + 1;
    while (end < line.size() && is_ident_char(line[end])) ++end;
    const std::string name = line.substr(pos, end - pos);
    const std::string rest = trim(line.substr(end));
    const int column = static_cast<int>(pos) + 1;
    if (name == ".kernel") {
      if (!is_identifier(rest)) fail(number, column, ".kernel needs a name");
      out_.kernel_name = rest;
    } else if (name == ".sched") {
      if (in_sched_) fail(number, column, ".sched inside .sched");
      in_sched_ = true;
      sched_line_ = number;
      open_block(number);
    } else if (name == ".endsched") {
      if (!in_sched_) fail(number, column, ".endsched without .sched");
      in_sched_ = false;
    } else {
      fail(number, column,
           fmt::format("unknown directive '{}' (.kernel, .sched, .endsched)", name));
    }
    if ((name == ".sched" || name == ".endsched") && !rest.empty()) {
      fail(number, column, fmt::format("{} takes nothing after it", name));
    }
  }

  void label(const std::string& name, int number, int column) {
    if (parse_register(name))
      fail(number, column, fmt::format("'{}' is a register, not a label", name));
    if (!labels_seen_.insert(name).second)
      fail(number, column, fmt::format("label '{}' twice", name));
    pending_labels_.push_back(name);
    if (in_sched_) open_block(number);
  }

  void open_block(int number) {
    Chunk c;
    c.scheduled = true;
    c.line = number;
    c.labels = std::move(pending_labels_);
    pending_labels_.clear();
    chunks_.push_back(std::move(c));
    ended_ = false;
  }

  void add_scheduled(std::vector<Parsed> parsed, int number) {
    for (Parsed& p : parsed) {
      if (!chunks_.back().scheduled || ended_) open_block(number);
      ended_ = false;
      const bool control = info(p.instruction.op).control != Control::kNone;
      chunks_.back().instructions.push_back(std::move(p));
      if (control) ended_ = true;  // what follows starts a new block
    }
  }

  void add_bundle(std::vector<Parsed> parsed, int number) {
    Chunk c;
    c.line = number;
    c.labels = std::move(pending_labels_);
    pending_labels_.clear();
    std::array<bool, kSlotCount> used{};
    std::optional<std::uint32_t> immediate;
    bool label_immediate = false;
    for (const Parsed& p : parsed) {
      const int slot = static_cast<int>(info(p.instruction.op).slot);
      if (used[static_cast<std::size_t>(slot)]) {
        fail(number, p.column,
             fmt::format("two instructions for the {} slot in one bundle",
                         slot_name(static_cast<Slot>(slot))));
      }
      used[static_cast<std::size_t>(slot)] = true;
      const bool clash = label_immediate || (!p.label.empty() && immediate) ||
                         (p.immediate && immediate && *immediate != *p.immediate);
      if ((p.immediate || !p.label.empty()) && clash) {
        fail(number, p.column, "the bundle's one immediate is already taken by another value");
      }
      if (p.immediate) immediate = p.immediate;
      if (!p.label.empty()) label_immediate = true;
    }
    c.instructions = std::move(parsed);
    chunks_.push_back(std::move(c));
    ended_ = true;
  }

  // Whether chunk `ci` is a loop's whole body, scheduled to run again right after itself: a
  // block that follows a loop instruction and ends where that loop's label is, a label no other
  // loop ends at (where loops end together, the outer ones go round from the inner one's last
  // bundle, so their next pass needs every result landed).
  bool loop_body(std::size_t ci, const std::map<std::string, int>& loop_ends) const {
    if (ci == 0 || ci + 1 >= chunks_.size() || !chunks_[ci].scheduled) return false;
    const Chunk& before = chunks_[ci - 1];
    if (before.instructions.empty()) return false;
    const Parsed& loop = before.instructions.back();
    if (info(loop.instruction.op).control != Control::kLoop) return false;
    const Chunk& after = chunks_[ci + 1];
    if (std::find(after.labels.begin(), after.labels.end(), loop.label) == after.labels.end())
      return false;
    for (const std::string& l : after.labels) {
      const auto it = loop_ends.find(l);
      if (it != loop_ends.end() && (l != loop.label || it->second != 1)) return false;
    }
    return true;
  }

  void lay_out() {
    // Pass 1: place every chunk, learn where labels point.
    struct Laid {
      std::uint32_t first;
      std::vector<int> bundle_of;
      int bundles;
    };
    std::vector<Laid> laid;
    std::map<std::string, std::uint32_t> where;
    std::uint32_t next = 0;
    // How many loops end at each label.
    std::map<std::string, int> loop_ends;
    for (const Chunk& c : chunks_)
      for (const Parsed& p : c.instructions)
        if (info(p.instruction.op).control == Control::kLoop) ++loop_ends[p.label];
    int pad = 0;  // bundles the next chunk starts with: what the loop before it leaves landing
    for (std::size_t ci = 0; ci < chunks_.size(); ++ci) {
      const Chunk& c = chunks_[ci];
      for (const std::string& l : c.labels) where[l] = next;
      Laid l{next, {}, 0};
      if (c.scheduled) {
        std::vector<ScheduleItem> items;
        for (const Parsed& p : c.instructions) {
          items.push_back(ScheduleItem{p.instruction, p.immediate, !p.label.empty()});
        }
        const bool body = loop_body(ci, loop_ends);
        const BlockSchedule s = schedule_block(items, options_.generation, body);
        l.bundle_of = s.bundle_of;
        for (int& b : l.bundle_of) b += pad;
        l.bundles = s.bundles + pad;
        pad = s.residual;
      } else {
        l.bundle_of.assign(c.instructions.size(), 0);
        l.bundles = 1;
      }
      if (!c.scheduled && pad > 0) {
        // An explicit bundle after a loop body: the padding goes before it.
        l.bundle_of.assign(c.instructions.size(), pad);
        l.bundles = 1 + pad;
        pad = 0;
      }
      next += static_cast<std::uint32_t>(l.bundles);
      laid.push_back(std::move(l));
      if (next > kMaxBundles) fail(c.line, 1, "the program has too many bundles");
    }
    next += static_cast<std::uint32_t>(pad);
    for (const std::string& l : pending_labels_) where[l] = next;
    // Pass 2: fill the bundles, resolving labels.
    out_.bundles.assign(next, Bundle{});
    out_.lines.assign(next, 0);
    for (std::size_t ci = 0; ci < chunks_.size(); ++ci) {
      const Chunk& c = chunks_[ci];
      for (std::size_t i = 0; i < c.instructions.size(); ++i) {
        const Parsed& p = c.instructions[i];
        const std::uint32_t b = laid[ci].first + static_cast<std::uint32_t>(laid[ci].bundle_of[i]);
        Bundle& bundle = out_.bundles[b];
        bundle.slot(info(p.instruction.op).slot) = p.instruction;
        if (out_.lines[b] == 0) out_.lines[b] = p.line;
        if (p.immediate) bundle.immediate = *p.immediate;
        if (!p.label.empty()) {
          const auto it = where.find(p.label);
          if (it == where.end())
            fail(p.line, p.label_column, fmt::format("label '{}' is not defined", p.label));
          bundle.immediate = it->second;
          check_target(p, b, it->second, next);
        }
      }
    }
  }

  void check_target(const Parsed& p, std::uint32_t at, std::uint32_t target,
                    std::uint32_t count) const {
    const Control control = info(p.instruction.op).control;
    if (control == Control::kLoop && target <= at + 1) {
      fail(p.line, p.label_column,
           fmt::format("the loop's body is empty: '{}' is the next bundle", p.label));
    }
    if (control == Control::kJump && target >= count) {
      fail(p.line, p.label_column, fmt::format("'{}' is past the last bundle", p.label));
    }
  }

  const std::string& text_;
  const AssembleOptions& options_;
  Assembly out_;
  std::vector<Chunk> chunks_;
  std::vector<std::string> pending_labels_;
  std::set<std::string> labels_seen_;
  bool in_sched_ = false, ended_ = true;
  int sched_line_ = 0;
};

// ---------------------------------------------------------------- disassembly

std::string float_text(std::uint32_t bits) {
  const float f = float_of(bits);
  if (f != f) return fmt::format("0f{:08X}", bits);
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (bits == 0x80000000u) return "-0.0";
  std::string s = fmt::format("{:.9g}", f);
  return s;
}

std::string immediate_text(std::uint32_t bits, Dtype t, OperandKind kind) {
  if (kind != OperandKind::kUi && is_float(t)) return float_text(bits);
  if (kind != OperandKind::kUi && info(t).kind == DtypeKind::kSigned) {
    return std::to_string(static_cast<std::int32_t>(bits));
  }
  return std::to_string(bits);
}

std::string register_text(OperandKind kind, int n) {
  static const char* const prefix[] = {"v", "s", "i", "vp", "sp"};
  return fmt::format("{}{}", prefix[static_cast<int>(kind)], n);
}

std::string mnemonic_text(const Instruction& in) {
  const OpInfo& o = info(in.op);
  std::string m = o.name;
  const std::string type = o.dtypes ? std::string(".") + info(in.dtype).name : "";
  switch (o.suffix) {
    case Suffix::kCond:
      return m + "." + kCondNames[in.modifier] + type;
    case Suffix::kCvt:
      if (!(in.modifier & 1)) return m + type;
      return o.memory == MemoryClass::kGlobalLoad ? m + ".f32" + type : m + type + ".f32";
    case Suffix::kSrcType:
      return m + type + "." + info(static_cast<Dtype>(in.modifier)).name;
    case Suffix::kStep: {
      const int step = static_cast<std::int8_t>(in.modifier << 3) >> 3;
      return step == 1 ? m + type : m + "." + std::to_string(step) + type;
    }
    case Suffix::kNone:
      return m + type;
  }
  return m;
}

}  // namespace

Assembly assemble(const std::string& text, const AssembleOptions& options) {
  Assembly a = Assembler(text, options).run();
  a.generation = options.generation;
  return a;
}

std::string disassemble_instruction(const Instruction& in, std::uint32_t immediate) {
  if (in.nop) return "nop";
  const OpInfo& o = info(in.op);
  std::string out;
  if (in.pred != 0 || in.pred_not || in.pred_vector) {
    out = fmt::format("({}{}{}) ", in.pred_not ? "!" : "", in.pred_vector ? "vp" : "sp", in.pred);
  }
  out += mnemonic_text(in);
  const auto field = [&](Role r) -> int {
    return r == Role::kD ? in.dst : r == Role::kA ? in.a : r == Role::kB ? in.b : in.c;
  };
  std::vector<std::string> operands;
  for (int i = 0; i < o.operand_count; ++i) {
    const OperandSpec& s = o.operands[static_cast<std::size_t>(i)];
    if (s.optional) {
      bool later_set = false;
      for (int j = i; j < o.operand_count; ++j) {
        later_set = later_set || field(o.operands[static_cast<std::size_t>(j)].role) != 0;
      }
      if (!later_set) break;
    }
    switch (s.kind) {
      case OperandKind::kVsi:
      case OperandKind::kSi:
      case OperandKind::kUi:
        if (in.b_kind == BKind::kImmediate) {
          operands.push_back(immediate_text(immediate, in.dtype, s.kind));
        } else {
          const bool vector = s.kind == OperandKind::kVsi && in.b_kind == BKind::kRegister;
          operands.push_back(register_text(vector ? OperandKind::kV : OperandKind::kS, in.b));
        }
        break;
      case OperandKind::kTensor:
      case OperandKind::kLane:
        operands.push_back(std::to_string(field(s.role)));
        break;
      case OperandKind::kDims:
        operands.push_back(fmt::format("0b{:05b}", in.modifier));
        break;
      case OperandKind::kDim:
        operands.push_back(std::to_string(in.modifier));
        break;
      case OperandKind::kLabel:
        operands.push_back(fmt::format("L{}", immediate));
        break;
      default:
        operands.push_back(register_text(s.kind, field(s.role)));
        break;
    }
  }
  for (std::size_t i = 0; i < operands.size(); ++i) out += (i ? ", " : " ") + operands[i];
  return out;
}

std::string disassemble(const std::vector<Bundle>& bundles) {
  std::set<std::uint32_t> targets;
  for (const Bundle& b : bundles) {
    for (const Instruction& in : b.slots) {
      if (in.nop) continue;
      const OpInfo& o = info(in.op);
      for (int i = 0; i < o.operand_count; ++i)
        if (o.operands[static_cast<std::size_t>(i)].kind == OperandKind::kLabel)
          targets.insert(b.immediate);
    }
  }
  std::string out;
  for (std::uint32_t pc = 0; pc <= bundles.size(); ++pc) {
    if (targets.count(pc)) out += fmt::format("L{}:\n", pc);
    if (pc == bundles.size()) break;
    std::string line;
    for (const Instruction& in : bundles[pc].slots) {
      if (in.nop) continue;
      line += (line.empty() ? "" : " ; ") + disassemble_instruction(in, bundles[pc].immediate);
    }
    out += "  " + (line.empty() ? std::string("nop") : line) + "\n";
  }
  return out;
}

}  // namespace podsim::tpc
