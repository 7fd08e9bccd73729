#include "core/config_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace podsim::core {

std::string detail::join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// Decimal, or hexadecimal after "0x" (ids, offsets and masks are written that way).
std::optional<long long> parse_integer(const std::string& text, std::string* error) {
  long long value = 0;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.data() + (hex ? 2 : 0);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value, hex ? 16 : 10);
  if (ec == std::errc() && ptr == end && begin != end) return value;
  if (error) {
    *error = ec == std::errc::result_out_of_range
                 ? fmt::format("'{}' is too large for an integer", text)
                 : fmt::format("'{}' is not an integer", text);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Value types

std::optional<bool> FieldTraits<bool>::parse(const std::string& text, std::string* error) {
  if (text == "true") return true;
  if (text == "false") return false;
  if (error) *error = fmt::format("'{}' is not a boolean (use true or false)", text);
  return std::nullopt;
}
std::string FieldTraits<bool>::print(const bool& v) { return v ? "true" : "false"; }
double FieldTraits<bool>::numeric(const bool& v) { return v ? 1 : 0; }
bool FieldTraits<bool>::from_numeric(double v) { return v != 0; }

std::optional<double> FieldTraits<double>::parse(const std::string& text, std::string* error) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(v)) return v;
  if (error) *error = fmt::format("'{}' is not a number", text);
  return std::nullopt;
}
std::string FieldTraits<double>::print(const double& v) { return fmt::format("{}", v); }
double FieldTraits<double>::numeric(const double& v) { return v; }
double FieldTraits<double>::from_numeric(double v) { return v; }

std::optional<std::string> FieldTraits<std::string>::parse(const std::string& text, std::string*) {
  return text;
}
std::string FieldTraits<std::string>::print(const std::string& v) { return v; }
double FieldTraits<std::string>::numeric(const std::string&) { return 0; }
std::string FieldTraits<std::string>::from_numeric(double) { return {}; }

#define PODSIM_QUANTITY_TRAITS(Type, parser, member, cast)                                    \
  std::optional<Type> FieldTraits<Type>::parse(const std::string& text, std::string* error) { \
    return parser(text, error);                                                               \
  }                                                                                           \
  std::string FieldTraits<Type>::print(const Type& v) { return to_string(v); }                \
  double FieldTraits<Type>::numeric(const Type& v) { return static_cast<double>(v.member); }  \
  Type FieldTraits<Type>::from_numeric(double v) { return Type{cast(v)}; }

PODSIM_QUANTITY_TRAITS(Duration, parse_duration, ps, std::llround)
PODSIM_QUANTITY_TRAITS(ByteSize, parse_byte_size, bytes, static_cast<std::uint64_t>)
PODSIM_QUANTITY_TRAITS(Bandwidth, parse_bandwidth, bits_per_second, )
PODSIM_QUANTITY_TRAITS(Frequency, parse_frequency, hertz, )
PODSIM_QUANTITY_TRAITS(Length, parse_length, meters, )
PODSIM_QUANTITY_TRAITS(ComputeRate, parse_compute_rate, flops, )
PODSIM_QUANTITY_TRAITS(Address, parse_address, value, static_cast<std::uint64_t>)
#undef PODSIM_QUANTITY_TRAITS

// ---------------------------------------------------------------------------------------------
// Checks

void ConfigChecks::fail(const std::string& key, const std::string& message) {
  const std::string path = detail::join_path(prefix_, key);
  if (!diagnostics_) throw std::invalid_argument(path + ": " + message);
  // Point at the key itself, or at the nearest section that exists in the tree.
  std::string probe = path;
  const ConfigNode* node = root_->find_path(probe);
  while (!node && !probe.empty()) {
    const auto dot = probe.rfind('.');
    probe = dot == std::string::npos ? "" : probe.substr(0, dot);
    node = probe.empty() ? root_ : root_->find_path(probe);
  }
  diagnostics_->push_back({node ? node->where() : SourceLocation{}, path, message});
}

ConfigChecks ConfigChecks::nested(const std::string& key) const {
  ConfigChecks child = *this;
  child.prefix_ = detail::join_path(prefix_, key);
  return child;
}

// ---------------------------------------------------------------------------------------------
// Reading

const ConfigNode* ConfigReader::lookup(const std::string& key, const Spec& spec, const char* kind) {
  declared_.push_back(key);
  const ConfigNode* n = node_.find(key);
  if (!n || n->kind() == ConfigNode::Kind::kNull) {
    if (spec.is_required()) {
      report(n ? n->where() : node_.where(), key,
             fmt::format("required key is missing ({}: {})", kind, spec.doc()));
    }
    return nullptr;
  }
  if (!n->is_scalar()) {
    report(n->where(), key,
           fmt::format("expected a {}, found a {}", kind, n->is_map() ? "section" : "list"));
    return nullptr;
  }
  return n;
}

void ConfigReader::report(const SourceLocation& where, const std::string& key,
                          const std::string& message) {
  diagnostics_.push_back({where, detail::join_path(path_, key), message});
}

void ConfigReader::finish() {
  for (const auto& [key, value] : node_.entries()) {
    if (std::find(declared_.begin(), declared_.end(), key) != declared_.end()) continue;
    const std::string guess = closest_match(key, declared_);
    std::string known;
    for (const auto& d : declared_) known += (known.empty() ? "" : ", ") + d;
    diagnostics_.push_back({value.key_where(), detail::join_path(path_, key),
                            guess.empty() ? fmt::format("unknown key (known keys here: {})", known)
                                          : fmt::format("unknown key; did you mean '{}'?", guess)});
  }
}

// ---------------------------------------------------------------------------------------------
// Printing and schema

namespace {
std::string yaml_scalar(const std::string& text) {
  const bool plain = !text.empty() &&
                     text.find_first_of(":#{}[],&*!|>'\"%@`") == std::string::npos &&
                     text.front() != ' ' && text.back() != ' ' && text.front() != '-';
  if (plain) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return quoted + "\"";
}
}  // namespace

void ConfigPrinter::line(const std::string& key, const std::string& default_text) {
  const ConfigNode* n = node_ ? node_->find(key) : nullptr;
  const std::string pad(static_cast<std::size_t>(indent_), ' ');
  if (n && n->is_scalar()) {
    out_ += pad + key + ": " + yaml_scalar(n->text()) + "\n";
  } else {
    out_ += pad + key + ": " + yaml_scalar(default_text) + "  # default\n";
  }
}

void SchemaCollector::add(const std::string& key, std::string kind, std::string default_text,
                          const Spec& spec, std::string range) {
  rows_.push_back({detail::join_path(path_, key), std::move(kind),
                   spec.is_required() ? "" : std::move(default_text), spec.is_required(),
                   spec.doc(), spec.source_text(), std::move(range)});
}

}  // namespace podsim::core
