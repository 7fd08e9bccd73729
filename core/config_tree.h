// Configuration text as a tree that remembers where every value came from, so that any error
// found later (binding, range checks, cross-field checks) can name file:line:column and the full
// key path. Captures YAML files, `extends:` inheritance between presets and files, and
// `--set a.b.c=value` overrides. Ignores YAML anchors' identity and tags: values are plain text.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podsim::core {

// Where a value was written: a file position, or a command-line override.
struct SourceLocation {
  std::string file;    // path, or "--set" for command-line overrides
  int line = 0;        // 1-based; 0 when unknown
  int column = 0;      // 1-based
  std::string detail;  // for overrides: the whole "--set" argument
  std::string to_string() const;
};

// One problem in a configuration, reported as "file:line:col: key 'a.b': message".
struct Diagnostic {
  SourceLocation where;
  std::string key_path;
  std::string message;
  std::string to_string(std::string_view severity = "error") const;
};

// Every problem found in one pass over a configuration; what() lists them one per line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  explicit ConfigError(Diagnostic diagnostic);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

class ConfigNode {
 public:
  enum class Kind { kNull, kScalar, kMap, kSequence };
  using Entry = std::pair<std::string, ConfigNode>;

  static ConfigNode scalar(std::string text, SourceLocation where);
  static ConfigNode map(SourceLocation where);
  static ConfigNode null(SourceLocation where);
  // Points this node (not its children) at another source, e.g. a command-line override.
  void relocate(const SourceLocation& where);
  static ConfigNode sequence(SourceLocation where);

  Kind kind() const { return kind_; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  const std::string& text() const { return text_; }
  const SourceLocation& where() const { return where_; }
  // Where the key of this entry was written (for "unknown key" messages); same as where() for
  // roots and sequence items.
  const SourceLocation& key_where() const { return key_where_; }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::vector<ConfigNode>& items() const { return items_; }
  std::vector<ConfigNode>& items() { return items_; }
  std::vector<Entry>& entries() { return entries_; }
  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  // Inserts or replaces `key`, keeping the original position of a replaced key.
  ConfigNode& set(const std::string& key, ConfigNode value, SourceLocation key_where);
  bool erase(std::string_view key);
  // Looks up a dotted path ("chip.nic.ports", "tiers.0.ports"); nullptr when absent.
  const ConfigNode* find_path(std::string_view dotted) const;

  // Block-style YAML of this tree, values exactly as written.
  std::string to_yaml() const;

 private:
  Kind kind_ = Kind::kNull;
  std::string text_;
  SourceLocation where_, key_where_;
  std::vector<Entry> entries_;
  std::vector<ConfigNode> items_;
};

// Parses YAML text; `file` names it in locations. Throws ConfigError on malformed YAML or a
// key that appears twice in one mapping.
ConfigNode parse_yaml(const std::string& text, const std::string& file);

// Loads configuration files and presets and resolves `extends:`.
//
// Presets live in <config dir>/<category>/<name>.yaml (categories: "chips", "systems").
// A mapping with `extends: NAME|FILE` starts from that preset or file and overrides it key by
// key (mappings merge recursively; scalars and sequences replace). Some keys of a category hold a
// configuration of another category (a system's `chip` is a chip): `nest()` declares them, and a
// scalar there (`chip: gaudi2`) is shorthand for `{extends: gaudi2}`.
class ConfigLoader {
 public:
  explicit ConfigLoader(std::vector<std::filesystem::path> config_dirs);
  // The directories from $PODSIM_CONFIG_DIR (colon-separated), then the source tree's configs/.
  static std::vector<std::filesystem::path> default_config_dirs();

  void nest(const std::string& category, const std::string& key, const std::string& nested);

  // `name_or_file` is a preset name, or a path when it contains '/' or ends in .yaml/.yml.
  // Overrides ("a.b=value") apply before `extends` is resolved, so they reach inherited keys.
  ConfigNode load(const std::string& category, const std::string& name_or_file,
                  const std::vector<std::string>& overrides = {}) const;

  std::vector<std::string> presets(const std::string& category) const;

 private:
  ConfigNode read(const std::string& category, const std::string& name_or_file,
                  const SourceLocation& requested_at) const;
  ConfigNode resolve(ConfigNode node, const std::string& category,
                     std::vector<std::string>& chain) const;
  void expand_shorthand(ConfigNode& node, const std::string& category) const;

  std::vector<std::filesystem::path> dirs_;
  std::map<std::string, std::map<std::string, std::string>> nested_;
};

// Applies one "a.b.c=value" override (value in YAML flow syntax) to a tree. Throws ConfigError.
void apply_override(ConfigNode& root, const std::string& assignment);

// Edit distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace podsim::core
