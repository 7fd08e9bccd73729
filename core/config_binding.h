// Binds configuration trees to typed config structs, and describes those structs for docs.
//
// Each config struct lists its keys once, in a `describe` member template:
//
//   struct NicConfig {
//     int ports = 24;
//     Bandwidth port_speed{100e9};
//     template <class V> void describe(V& v) {
//       v.field("ports", ports, Spec("NIC ports per chip").min(1).max(256));
//       v.field("port_speed", port_speed, Spec("line rate of one port").positive());
//     }
//     void check(ConfigChecks& c) const;  // optional: rules that span several keys
//   };
//
// Visitors then bind it from a ConfigNode (with file:line:column errors, unknown-key
// suggestions and range checks), validate a struct built in code, print it back as YAML with
// defaults filled in, or list its schema for docs/configuration.md. Keeping one list per struct
// means a key cannot be parsed, documented and printed three different ways.
#pragma once

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config_tree.h"
#include "core/units.h"

namespace podsim::core {

// What a key means and which values it accepts.
class Spec {
 public:
  explicit Spec(std::string doc) : doc_(std::move(doc)) {}
  Spec& required() {
    required_ = true;
    return *this;
  }
  Spec& min(double v) {
    min_ = v;
    return *this;
  }
  Spec& max(double v) {
    max_ = v;
    return *this;
  }
  Spec& range(double lo, double hi) { return min(lo).max(hi); }
  Spec& positive() {
    positive_ = true;
    return *this;
  }
  // Where the default value (or a preset's value) comes from, a tag of docs/sources.md, e.g.
  // "[S4]".
  Spec& source(std::string s) {
    source_ = std::move(s);
    return *this;
  }

  const std::string& doc() const { return doc_; }
  bool is_required() const { return required_; }
  const std::optional<double>& min_value() const { return min_; }
  const std::optional<double>& max_value() const { return max_; }
  bool is_positive() const { return positive_; }
  const std::string& source_text() const { return source_; }

 private:
  std::string doc_, source_;
  bool required_ = false, positive_ = false;
  std::optional<double> min_, max_;
};

// How each value type is read, printed and range-checked. `numeric` and `from_numeric` map a
// value to the number a Spec's bounds are written in (base units: bytes, ps, bit/s, Hz, m).
template <class T, class Enable = void>
struct FieldTraits;

std::optional<long long> parse_integer(const std::string& text, std::string* error);

template <class T>
struct FieldTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static constexpr const char* kind = "integer";
  static std::optional<T> parse(const std::string& text, std::string* error) {
    const auto v = parse_integer(text, error);
    if (!v) return std::nullopt;
    if (*v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        (*v > 0 && static_cast<unsigned long long>(*v) > std::numeric_limits<T>::max())) {
      if (error) *error = "'" + text + "' is out of range for this integer";
      return std::nullopt;
    }
    return static_cast<T>(*v);
  }
  static std::string print(T v) { return std::to_string(v); }
  static double numeric(T v) { return static_cast<double>(v); }
  static T from_numeric(double v) { return static_cast<T>(v); }
};

#define PODSIM_FIELD_TRAITS(Type, kind_name)                                       \
  template <>                                                                      \
  struct FieldTraits<Type> {                                                       \
    static constexpr const char* kind = kind_name;                                 \
    static std::optional<Type> parse(const std::string& text, std::string* error); \
    static std::string print(const Type& v);                                       \
    static double numeric(const Type& v);                                          \
    static Type from_numeric(double v);                                            \
  };
PODSIM_FIELD_TRAITS(bool, "boolean")
PODSIM_FIELD_TRAITS(double, "number")
PODSIM_FIELD_TRAITS(std::string, "string")
PODSIM_FIELD_TRAITS(Duration, "duration")
PODSIM_FIELD_TRAITS(ByteSize, "size")
PODSIM_FIELD_TRAITS(Bandwidth, "bandwidth")
PODSIM_FIELD_TRAITS(Frequency, "frequency")
PODSIM_FIELD_TRAITS(Length, "length")
PODSIM_FIELD_TRAITS(ComputeRate, "compute rate")
PODSIM_FIELD_TRAITS(Address, "address")
#undef PODSIM_FIELD_TRAITS

// An enumerated key's accepted names.
template <class E>
using Choices = std::vector<std::pair<std::string, E>>;

// The Spec's range rule applied to a value; empty when the value is acceptable.
template <class T>
std::string range_problem(const T& value, const Spec& spec) {
  using Traits = FieldTraits<T>;
  const double v = Traits::numeric(value);
  const auto bound = [](double b) { return Traits::print(Traits::from_numeric(b)); };
  if (spec.is_positive() && !(v > 0)) {
    return "must be greater than zero, got " + Traits::print(value);
  }
  if (spec.min_value() && v < *spec.min_value()) {
    return "must be at least " + bound(*spec.min_value()) + ", got " + Traits::print(value);
  }
  if (spec.max_value() && v > *spec.max_value()) {
    return "must be at most " + bound(*spec.max_value()) + ", got " + Traits::print(value);
  }
  return {};
}

template <class E>
std::string choice_name(const Choices<E>& choices, E value) {
  for (const auto& [name, v] : choices) {
    if (v == value) return name;
  }
  return "?";
}

template <class E>
std::string choice_list(const Choices<E>& choices) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c.first;
  return list;
}

// Rules that span several keys report through this, naming keys relative to the struct that
// checks them; the full path and the key's source location are filled in.
class ConfigChecks {
 public:
  // With a root, problems are collected as diagnostics located in the tree; without one (a
  // struct built in code) the first problem throws std::invalid_argument.
  ConfigChecks(const ConfigNode* root, std::vector<Diagnostic>* diagnostics)
      : root_(root), diagnostics_(diagnostics) {}
  void fail(const std::string& key, const std::string& message);
  ConfigChecks nested(const std::string& key) const;

 private:
  const ConfigNode* root_;
  std::vector<Diagnostic>* diagnostics_;
  std::string prefix_;
};

namespace detail {
template <class C, class = void>
struct HasCheck : std::false_type {};
template <class C>
struct HasCheck<
    C, std::void_t<decltype(std::declval<const C&>().check(std::declval<ConfigChecks&>()))>>
    : std::true_type {};

std::string join_path(const std::string& path, const std::string& key);
}  // namespace detail

// Reads a struct from a mapping, collecting every problem.
class ConfigReader {
 public:
  ConfigReader(const ConfigNode& node, std::string path, std::vector<Diagnostic>& diagnostics)
      : node_(node), path_(std::move(path)), diagnostics_(diagnostics) {}

  template <class T>
  void field(const std::string& key, T& value, const Spec& spec) {
    const ConfigNode* n = lookup(key, spec, FieldTraits<T>::kind);
    if (!n) return;
    std::string error;
    const auto parsed = FieldTraits<T>::parse(n->text(), &error);
    if (!parsed) return report(n->where(), key, error);
    if (const auto problem = range_problem(*parsed, spec); !problem.empty()) {
      return report(n->where(), key, problem);
    }
    value = *parsed;
  }

  template <class E>
  void choice(const std::string& key, E& value, const Choices<E>& choices, const Spec& spec) {
    const ConfigNode* n = lookup(key, spec, "name");
    if (!n) return;
    for (const auto& [name, v] : choices) {
      if (name == n->text()) {
        value = v;
        return;
      }
    }
    report(n->where(), key,
           "'" + n->text() + "' is not one of: " + choice_list(choices) +
               suggestion(n->text(), choices));
  }

  template <class S>
  void section(const std::string& key, S& value, const Spec& spec) {
    declared_.push_back(key);
    const ConfigNode* n = node_.find(key);
    if (n && !n->is_map()) return report(n->where(), key, "expected a section of keys");
    const ConfigNode empty = ConfigNode::map(node_.where());
    ConfigReader child(n ? *n : empty, detail::join_path(path_, key), diagnostics_);
    if (!n && spec.is_required()) return report(node_.where(), key, "required section is missing");
    value.describe(child);
    child.finish();
  }

  template <class S>
  void list(const std::string& key, std::vector<S>& items, const Spec& spec) {
    declared_.push_back(key);
    const ConfigNode* n = node_.find(key);
    if (!n) {
      if (spec.is_required()) report(node_.where(), key, "required list is missing");
      return;
    }
    if (!n->is_sequence()) return report(n->where(), key, "expected a list");
    items.clear();
    for (std::size_t i = 0; i < n->items().size(); ++i) {
      const ConfigNode& item = n->items()[i];
      const std::string item_path = detail::join_path(path_, key) + "." + std::to_string(i);
      if (!item.is_map()) {
        diagnostics_.push_back({item.where(), item_path, "expected a section of keys"});
        continue;
      }
      ConfigReader child(item, item_path, diagnostics_);
      items.emplace_back();
      items.back().describe(child);
      child.finish();
    }
  }

  // Reports keys that no field declared, with the closest declared key as a suggestion.
  void finish();

 private:
  const ConfigNode* lookup(const std::string& key, const Spec& spec, const char* kind);
  void report(const SourceLocation& where, const std::string& key, const std::string& message);
  template <class E>
  static std::string suggestion(const std::string& text, const Choices<E>& choices) {
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.first);
    const auto guess = closest_match(text, names);
    return guess.empty() ? "" : "; did you mean '" + guess + "'?";
  }

  const ConfigNode& node_;
  std::string path_;
  std::vector<Diagnostic>& diagnostics_;
  std::vector<std::string> declared_;
};

// Runs every struct's range rules and cross-key checks on values built in code.
class ConfigValidator {
 public:
  ConfigValidator(ConfigChecks checks) : checks_(std::move(checks)) {}
  template <class T>
  void field(const std::string& key, const T& value, const Spec& spec) {
    if (const auto problem = range_problem(value, spec); !problem.empty())
      checks_.fail(key, problem);
  }
  template <class E>
  void choice(const std::string&, const E&, const Choices<E>&, const Spec&) {}
  template <class S>
  void section(const std::string& key, const S& value, const Spec&) {
    visit(value, checks_.nested(key));
  }
  template <class S>
  void list(const std::string& key, const std::vector<S>& items, const Spec&) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      visit(items[i], checks_.nested(key + "." + std::to_string(i)));
    }
  }
  template <class S>
  static void visit(const S& value, ConfigChecks checks) {
    ConfigValidator v(checks);
    const_cast<S&>(value).describe(v);  // describe only reads through this visitor
    if constexpr (detail::HasCheck<S>::value) value.check(checks);
  }

 private:
  ConfigChecks checks_;
};

// Block YAML of a struct: values as written in the tree where present, else the struct's value
// marked "# default".
class ConfigPrinter {
 public:
  ConfigPrinter(const ConfigNode* node, int indent, std::string& out)
      : node_(node), indent_(indent), out_(out) {}
  template <class T>
  void field(const std::string& key, const T& value, const Spec&) {
    line(key, FieldTraits<T>::print(value));
  }
  template <class E>
  void choice(const std::string& key, const E& value, const Choices<E>& choices, const Spec&) {
    line(key, choice_name(choices, value));
  }
  template <class S>
  void section(const std::string& key, const S& value, const Spec&) {
    out_ += std::string(indent_, ' ') + key + ":\n";
    ConfigPrinter child(node_ ? node_->find(key) : nullptr, indent_ + 2, out_);
    const_cast<S&>(value).describe(child);
  }
  template <class S>
  void list(const std::string& key, const std::vector<S>& items, const Spec&);

 private:
  void line(const std::string& key, const std::string& default_text);
  const ConfigNode* node_;
  int indent_;
  std::string& out_;
};

// One row of the schema: a key path with its type, default, meaning and source.
struct SchemaRow {
  std::string path;          // "chip.nic.ports"; list items appear as "tiers[].ports"
  std::string kind;          // "integer", "bandwidth", "one of: a, b", ...
  std::string default_text;  // empty when required
  bool required = false;
  std::string doc, source, range;
};

class SchemaCollector {
 public:
  SchemaCollector(std::string path, std::vector<SchemaRow>& rows)
      : path_(std::move(path)), rows_(rows) {}
  template <class T>
  void field(const std::string& key, const T& value, const Spec& spec) {
    add(key, FieldTraits<T>::kind, FieldTraits<T>::print(value), spec, range_text<T>(spec));
  }
  template <class E>
  void choice(const std::string& key, const E& value, const Choices<E>& choices, const Spec& spec) {
    add(key, "one of: " + choice_list(choices), choice_name(choices, value), spec, "");
  }
  template <class S>
  void section(const std::string& key, const S& value, const Spec&) {
    SchemaCollector child(detail::join_path(path_, key), rows_);
    const_cast<S&>(value).describe(child);
  }
  template <class S>
  void list(const std::string& key, const std::vector<S>& items, const Spec& spec) {
    add(key, "list", std::to_string(items.size()) + " items", spec, "");
    S item{};
    SchemaCollector child(detail::join_path(path_, key) + "[]", rows_);
    item.describe(child);
  }

 private:
  template <class T>
  static std::string range_text(const Spec& spec) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
      return "";
    } else {
      using Traits = FieldTraits<T>;
      std::string text = spec.is_positive() ? "> 0" : "";
      const auto add_bound = [&](const char* op, const std::optional<double>& b) {
        if (b)
          text += (text.empty() ? "" : ", ") + std::string(op) +
                  Traits::print(Traits::from_numeric(*b));
      };
      add_bound(">= ", spec.min_value());
      add_bound("<= ", spec.max_value());
      return text;
    }
  }
  void add(const std::string& key, std::string kind, std::string default_text, const Spec& spec,
           std::string range);
  std::string path_;
  std::vector<SchemaRow>& rows_;
};

template <class S>
void ConfigPrinter::list(const std::string& key, const std::vector<S>& items, const Spec&) {
  const ConfigNode* seq = node_ ? node_->find(key) : nullptr;
  out_ += std::string(indent_, ' ') + key + ":" + (items.empty() ? " []\n" : "\n");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const ConfigNode* item =
        seq && seq->is_sequence() && i < seq->items().size() ? &seq->items()[i] : nullptr;
    std::string body;
    ConfigPrinter child(item, indent_ + 4, body);
    const_cast<S&>(items[i]).describe(child);
    body.replace(static_cast<std::size_t>(indent_), 2, "- ");
    out_ += body;
  }
}

// ---------------------------------------------------------------------------------------------
// Entry points

enum class BindChecks { kAll, kKeysOnly };

// Rules that span several keys, located in the tree the config was bound from.
template <class C>
std::vector<Diagnostic> cross_key_problems(const C& config, const ConfigNode& root) {
  std::vector<Diagnostic> diagnostics;
  ConfigValidator::visit(config, ConfigChecks(&root, &diagnostics));
  return diagnostics;
}

// Binds a whole tree; throws ConfigError listing every problem, each once. kKeysOnly checks each
// key on its own (types, units, ranges, unknown and missing keys) but not rules across keys.
template <class C>
C bind_config(const ConfigNode& root, BindChecks checks = BindChecks::kAll) {
  std::vector<Diagnostic> diagnostics;
  C config{};
  ConfigReader reader(root, "", diagnostics);
  config.describe(reader);
  reader.finish();
  if (diagnostics.empty() && checks == BindChecks::kAll) {
    diagnostics = cross_key_problems(config, root);
  }
  if (!diagnostics.empty()) throw ConfigError(std::move(diagnostics));
  return config;
}

// Checks a struct built in code; throws std::invalid_argument naming the key. Returns the
// struct, so that a constructor can check its config in its member initializer.
template <class C>
const C& validate_config(const C& config) {
  ConfigValidator::visit(config, ConfigChecks(nullptr, nullptr));
  return config;
}

// The struct as YAML, with keys the tree does not set shown at their defaults.
template <class C>
std::string print_config(const C& config, const ConfigNode& root) {
  std::string out;
  ConfigPrinter printer(&root, 0, out);
  const_cast<C&>(config).describe(printer);
  return out;
}

template <class C>
std::vector<SchemaRow> config_schema(const std::string& prefix = "") {
  std::vector<SchemaRow> rows;
  C defaults{};
  SchemaCollector collector(prefix, rows);
  defaults.describe(collector);
  return rows;
}

}  // namespace podsim::core
