// Reading the build's YAML specifications (hw/chip/spec/gaudi1.yaml, hw/tpc/isa.yaml) strictly:
// a map reader that remembers which keys were asked for, so that unknown keys (typos) are
// errors, and errors that name file:line:column and the key path, e.g.
//   gaudi1.yaml:120:9: key 'packets[3].fields[1]': field 'mask' overlaps 'sid'
// Plain C++ for host tools (no SystemC); part of podsim_codegen.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace podsim::core {

// Where a key was written, for error messages (1-based line and column).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

class YamlError : public std::runtime_error {
 public:
  YamlError(const SourceLocation& where, const std::string& key, const std::string& message);
  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  SourceLocation where_;
  std::string key_;
};

SourceLocation location_of(const YAML::Node& node, const std::string& file);
bool is_identifier(const std::string& s);
// Parses `text`; a syntax error becomes a YamlError at its place.
YAML::Node parse_yaml(const std::string& text, const std::string& file);

// A YAML map being read.
class YamlMap {
 public:
  // Throws YamlError when `node` is not a map.
  YamlMap(YAML::Node node, std::string path, const std::string& file);

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_at(const YAML::Node& node, const std::string& message) const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  SourceLocation where() const { return location_of(node_, file_); }

  bool has(const std::string& key) const { return static_cast<bool>(node_[key]); }
  YAML::Node get(const std::string& key);
  std::string text(const std::string& key);
  std::string text_or(const std::string& key, const std::string& fallback);
  std::string identifier(const std::string& key);
  // Decimal or 0x-hex, at most `max`.
  std::uint64_t number(const std::string& key, std::uint64_t max);
  std::uint64_t number_or(const std::string& key, std::uint64_t fallback, std::uint64_t max);
  // A sequence of scalars ("[a, b]"), or `fallback` when the key is absent.
  std::vector<std::string> words_or(const std::string& key, std::vector<std::string> fallback);
  // Items of a sequence under `key`, each with its own path ("packets[3]").
  std::vector<std::pair<YAML::Node, std::string>> items(const std::string& key);
  std::string child_path(const std::string& key) const { return prefix() + key; }
  // Rejects keys that were never asked for: typos must not pass silently.
  void finish() const;

 private:
  std::string prefix() const { return path_.empty() ? std::string() : path_ + "."; }

  YAML::Node node_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> used_;
};

// Names must be unique within a scope.
class NameSet {
 public:
  explicit NameSet(std::string what) : what_(std::move(what)) {}
  void add(const std::string& name, const YamlMap& at);

 private:
  std::string what_;
  std::set<std::string> seen_;
};

}  // namespace podsim::core
