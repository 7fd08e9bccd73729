#include "core/config_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace podsim::core {
namespace fs = std::filesystem;

std::string SourceLocation::to_string() const {
  if (file == "--set") return fmt::format("command line (--set {})", detail);
  if (!detail.empty()) return detail;
  if (line == 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string Diagnostic::to_string(std::string_view severity) const {
  if (key_path.empty()) return fmt::format("{}: {}: {}", where.to_string(), severity, message);
  return fmt::format("{}: {}: key '{}': {}", where.to_string(), severity, key_path, message);
}

namespace {
std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const auto& d : diagnostics) text += (text.empty() ? "" : "\n") + d.to_string();
  return text;
}
}  // namespace

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

ConfigError::ConfigError(Diagnostic diagnostic)
    : ConfigError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

// ---------------------------------------------------------------------------------------------
// ConfigNode

ConfigNode ConfigNode::scalar(std::string text, SourceLocation where) {
  ConfigNode n;
  n.kind_ = Kind::kScalar;
  n.text_ = std::move(text);
  n.where_ = where;
  n.key_where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::null(SourceLocation where) {
  ConfigNode n;
  n.where_ = where;
  n.key_where_ = std::move(where);
  return n;
}

void ConfigNode::relocate(const SourceLocation& where) { where_ = key_where_ = where; }

ConfigNode ConfigNode::map(SourceLocation where) {
  ConfigNode n;
  n.kind_ = Kind::kMap;
  n.where_ = where;
  n.key_where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::sequence(SourceLocation where) {
  ConfigNode n = map(std::move(where));
  n.kind_ = Kind::kSequence;
  return n;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  return const_cast<ConfigNode*>(static_cast<const ConfigNode*>(this)->find(key));
}

ConfigNode& ConfigNode::set(const std::string& key, ConfigNode value, SourceLocation key_where) {
  kind_ = Kind::kMap;
  value.key_where_ = std::move(key_where);
  if (ConfigNode* existing = find(key)) return *existing = std::move(value);
  entries_.emplace_back(key, std::move(value));
  return entries_.back().second;
}

bool ConfigNode::erase(std::string_view key) {
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& e) { return e.first == key; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

namespace {
// Index of a sequence item named by a path segment, or -1.
long sequence_index(std::string_view segment, std::size_t size) {
  if (segment.empty() || segment.find_first_not_of("0123456789") != std::string_view::npos) {
    return -1;
  }
  unsigned long index = 0;
  const auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
  if (ec != std::errc() || end != segment.data() + segment.size()) return -1;
  return index < size ? static_cast<long>(index) : -1;
}
}  // namespace

const ConfigNode* ConfigNode::find_path(std::string_view dotted) const {
  const ConfigNode* node = this;
  while (node && !dotted.empty()) {
    const auto dot = dotted.find('.');
    const std::string_view segment = dotted.substr(0, dot);
    dotted = dot == std::string_view::npos ? std::string_view() : dotted.substr(dot + 1);
    if (node->is_sequence()) {
      const long index = sequence_index(segment, node->items_.size());
      node = index < 0 ? nullptr : &node->items_[static_cast<std::size_t>(index)];
    } else {
      node = node->find(segment);
    }
  }
  return node;
}

namespace {
void emit(YAML::Emitter& out, const ConfigNode& node) {
  switch (node.kind()) {
    case ConfigNode::Kind::kNull:
      out << YAML::Null;
      break;
    case ConfigNode::Kind::kScalar:
      out << node.text();
      break;
    case ConfigNode::Kind::kMap:
      out << YAML::BeginMap;
      for (const auto& [key, value] : node.entries()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, value);
      }
      out << YAML::EndMap;
      break;
    case ConfigNode::Kind::kSequence:
      out << YAML::BeginSeq;
      for (const auto& item : node.items()) emit(out, item);
      out << YAML::EndSeq;
      break;
  }
}
}  // namespace

std::string ConfigNode::to_yaml() const {
  YAML::Emitter out;
  emit(out, *this);
  return std::string(out.c_str()) + "\n";
}

// ---------------------------------------------------------------------------------------------
// YAML parsing

namespace {

SourceLocation location_of(const YAML::Mark& mark, const std::string& file) {
  return SourceLocation{file, mark.line + 1, mark.column + 1, ""};
}

ConfigNode convert(const YAML::Node& node, const std::string& file, const std::string& path) {
  const SourceLocation where = location_of(node.Mark(), file);
  if (node.IsScalar()) return ConfigNode::scalar(node.Scalar(), where);
  if (node.IsSequence()) {
    ConfigNode seq = ConfigNode::sequence(where);
    std::size_t i = 0;
    for (const auto& item : node) {
      seq.items().push_back(
          convert(item, file, path + (path.empty() ? "" : ".") + std::to_string(i++)));
    }
    return seq;
  }
  if (node.IsMap()) {
    ConfigNode map = ConfigNode::map(where);
    for (const auto& kv : node) {
      const SourceLocation key_where = location_of(kv.first.Mark(), file);
      if (!kv.first.IsScalar()) {
        throw ConfigError(Diagnostic{key_where, path, "mapping keys must be plain names"});
      }
      const std::string key = kv.first.Scalar();
      const std::string key_path = path.empty() ? key : path + "." + key;
      if (const ConfigNode* first = map.find(key)) {
        throw ConfigError(Diagnostic{key_where, key_path,
                                     fmt::format("appears twice in one mapping (first at line {})",
                                                 first->key_where().line)});
      }
      map.set(key, convert(kv.second, file, key_path), key_where);
    }
    return map;
  }
  return ConfigNode::null(where);
}

}  // namespace

ConfigNode parse_yaml(const std::string& text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(
        Diagnostic{location_of(e.mark, file), "", "malformed YAML: " + std::string(e.msg)});
  }
  if (!root.IsDefined() || root.IsNull()) return ConfigNode::map(SourceLocation{file, 1, 1, ""});
  if (!root.IsMap()) {
    throw ConfigError(Diagnostic{location_of(root.Mark(), file), "",
                                 "a configuration file must be a mapping of keys to values"});
  }
  return convert(root, file, "");
}

// ---------------------------------------------------------------------------------------------
// Overrides

void apply_override(ConfigNode& root, const std::string& assignment) {
  const SourceLocation where{"--set", 0, 0, assignment};
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(
        Diagnostic{where, "", "expected KEY.PATH=VALUE, for example chip.nic.ports=20"});
  }
  const std::string path = assignment.substr(0, eq);
  ConfigNode value;
  try {
    value = *parse_yaml("v: " + assignment.substr(eq + 1), "--set").find("v");
  } catch (const ConfigError& e) {
    throw ConfigError(Diagnostic{where, path, "malformed value: " + e.diagnostics()[0].message});
  }
  // Every position inside the value points back at the whole argument.
  std::vector<ConfigNode*> stack{&value};
  while (!stack.empty()) {
    ConfigNode* n = stack.back();
    stack.pop_back();
    n->relocate(where);
    for (auto& item : n->items()) stack.push_back(&item);
    for (auto& entry : n->entries()) stack.push_back(&entry.second);
  }

  ConfigNode* node = &root;
  std::string walked;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string segment = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (segment.empty()) throw ConfigError(Diagnostic{where, path, "empty key in the path"});
    if (dot == std::string::npos) {
      if (node->is_sequence()) {
        const long index = sequence_index(segment, node->items().size());
        if (index < 0) {
          throw ConfigError(
              Diagnostic{where, path,
                         fmt::format("'{}' is a list of {} items; '{}' is not an index in it",
                                     walked, node->items().size(), segment)});
        }
        node->items()[static_cast<std::size_t>(index)] = std::move(value);
      } else {
        node->set(segment, std::move(value), where);
      }
      return;
    }
    walked += (walked.empty() ? "" : ".") + segment;
    if (node->is_sequence()) {
      const long index = sequence_index(segment, node->items().size());
      if (index < 0) {
        throw ConfigError(
            Diagnostic{where, path, fmt::format("'{}' is not an index of the list", segment)});
      }
      node = &node->items()[static_cast<std::size_t>(index)];
    } else {
      ConfigNode* next = node->find(segment);
      if (next && next->is_scalar()) {
        throw ConfigError(
            Diagnostic{where, path, fmt::format("'{}' holds a value, not a section", walked)});
      }
      node = next ? next : &node->set(segment, ConfigNode::map(where), where);
    }
    start = dot + 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Loading and extends

ConfigLoader::ConfigLoader(std::vector<fs::path> config_dirs) : dirs_(std::move(config_dirs)) {}

std::vector<fs::path> ConfigLoader::default_config_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("PODSIM_CONFIG_DIR"); env && *env) {
    std::stringstream list(env);
    for (std::string dir; std::getline(list, dir, ':');) {
      if (!dir.empty()) dirs.emplace_back(dir);
    }
  }
#ifdef PODSIM_DEFAULT_CONFIG_DIR
  dirs.emplace_back(PODSIM_DEFAULT_CONFIG_DIR);
#endif
  return dirs;
}

void ConfigLoader::nest(const std::string& category, const std::string& key,
                        const std::string& nested) {
  nested_[category][key] = nested;
}

std::vector<std::string> ConfigLoader::presets(const std::string& category) const {
  std::set<std::string> names;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir / category, ec)) {
      if (entry.path().extension() == ".yaml") names.insert(entry.path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

namespace {
bool looks_like_file(const std::string& name) {
  const auto ext = fs::path(name).extension();
  return name.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml";
}

std::string singular(const std::string& category) {
  return category.empty() || category.back() != 's' ? category
                                                    : category.substr(0, category.size() - 1);
}
}  // namespace

ConfigNode ConfigLoader::read(const std::string& category, const std::string& name_or_file,
                              const SourceLocation& requested_at) const {
  fs::path file;
  if (looks_like_file(name_or_file)) {
    file = name_or_file;
    if (!fs::is_regular_file(file)) {
      throw ConfigError(
          Diagnostic{requested_at, "",
                     fmt::format("cannot open {} file '{}'", singular(category), name_or_file)});
    }
  } else {
    for (const auto& dir : dirs_) {
      if (fs::is_regular_file(dir / category / (name_or_file + ".yaml"))) {
        file = dir / category / (name_or_file + ".yaml");
        break;
      }
    }
    if (file.empty()) {
      const auto known = presets(category);
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      const std::string guess = closest_match(name_or_file, known);
      throw ConfigError(Diagnostic{
          requested_at, "",
          fmt::format("unknown {} preset '{}'{}; presets: {}", singular(category), name_or_file,
                      guess.empty() ? "" : "; did you mean '" + guess + "'?",
                      list.empty() ? "(none found; set PODSIM_CONFIG_DIR)" : list)});
    }
  }
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    throw ConfigError(Diagnostic{requested_at, "", fmt::format("cannot read '{}'", file.string())});
  }
  ConfigNode node = parse_yaml(text.str(), file.lexically_normal().string());
  expand_shorthand(node, category);
  return node;
}

void ConfigLoader::expand_shorthand(ConfigNode& node, const std::string& category) const {
  const auto nested = nested_.find(category);
  if (nested == nested_.end() || !node.is_map()) return;
  for (const auto& [key, sub_category] : nested->second) {
    ConfigNode* child = node.find(key);
    if (!child) continue;
    if (child->is_scalar()) {
      ConfigNode expanded = ConfigNode::map(child->where());
      expanded.set("extends", *child, child->where());
      const SourceLocation key_where = child->key_where();
      node.set(key, std::move(expanded), key_where);
    } else {
      expand_shorthand(*child, sub_category);
    }
  }
}

namespace {
// Overlays `top` on `base`: mappings merge key by key; anything else replaces. A nested mapping
// that names its own `extends` replaces the inherited one instead of merging into it.
void merge_into(ConfigNode& base, const ConfigNode& top) {
  for (const auto& [key, value] : top.entries()) {
    ConfigNode* existing = base.find(key);
    if (existing && existing->is_map() && value.is_map() && !value.find("extends")) {
      merge_into(*existing, value);
    } else {
      base.set(key, value, value.key_where());
    }
  }
}
}  // namespace

ConfigNode ConfigLoader::resolve(ConfigNode node, const std::string& category,
                                 std::vector<std::string>& chain) const {
  if (const ConfigNode* extends = node.find("extends")) {
    if (!extends->is_scalar() || extends->text().empty()) {
      throw ConfigError(Diagnostic{extends->where(), "extends",
                                   "must name a preset or a file, such as 'extends: hls1'"});
    }
    const std::string base_name = extends->text();
    if (std::find(chain.begin(), chain.end(), base_name) != chain.end()) {
      throw ConfigError(Diagnostic{extends->where(), "extends",
                                   fmt::format("'{}' extends itself through a cycle", base_name)});
    }
    chain.push_back(base_name);
    ConfigNode base = resolve(read(category, base_name, extends->where()), category, chain);
    chain.pop_back();
    node.erase("extends");
    merge_into(base, node);
    node = std::move(base);
  }
  if (const auto nested = nested_.find(category); nested != nested_.end()) {
    for (const auto& [key, sub_category] : nested->second) {
      ConfigNode* child = node.find(key);
      if (!child || !child->is_map()) continue;
      std::vector<std::string> sub_chain;
      const SourceLocation key_where = child->key_where();
      ConfigNode resolved = resolve(*child, sub_category, sub_chain);
      node.set(key, std::move(resolved), key_where);
    }
  }
  return node;
}

ConfigNode ConfigLoader::load(const std::string& category, const std::string& name_or_file,
                              const std::vector<std::string>& overrides) const {
  const SourceLocation requested{"", 0, 0, "--" + singular(category) + " " + name_or_file};
  ConfigNode root = read(category, name_or_file, requested);
  for (const auto& assignment : overrides) apply_override(root, assignment);
  expand_shorthand(root, category);
  std::vector<std::string> chain{name_or_file};
  return resolve(std::move(root), category, chain);
}

// ---------------------------------------------------------------------------------------------
// Suggestions

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace podsim::core
