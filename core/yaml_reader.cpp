#include "core/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace podsim::core {
namespace {

bool parse_number(const std::string& s, std::uint64_t& out) {
  if (s.empty()) return false;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const std::string digits = hex ? s.substr(2) : s;
  const auto valid = [hex](char c) {
    return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0
               : std::isdigit(static_cast<unsigned char>(c)) != 0;
  };
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), valid)) return false;
  if (digits.size() > (hex ? 16u : 20u)) return false;
  try {
    out = std::stoull(digits, nullptr, hex ? 16 : 10);
  } catch (const std::out_of_range&) {
    return false;
  }
  return true;
}

}  // namespace

YamlError::YamlError(const SourceLocation& where, const std::string& key,
                     const std::string& message)
    : std::runtime_error(fmt::format("{}:{}:{}: key '{}': {}", where.file, where.line, where.column,
                                     key, message)),
      where_(where),
      key_(key) {}

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  return SourceLocation{file, mark.line + 1, mark.column + 1};
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw YamlError(SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, "", e.msg);
  }
}

YamlMap::YamlMap(YAML::Node node, std::string path, const std::string& file)
    : node_(std::move(node)), path_(std::move(path)), file_(file) {
  if (!node_.IsMap()) fail("expected a map");
}

void YamlMap::fail(const std::string& message) const { fail_at(node_, message); }

void YamlMap::fail_at(const YAML::Node& node, const std::string& message) const {
  throw YamlError(location_of(node, file_), path_, message);
}

YAML::Node YamlMap::get(const std::string& key) {
  used_.insert(key);
  YAML::Node value = node_[key];
  if (!value) fail(fmt::format("missing key '{}'", key));
  return value;
}

std::string YamlMap::text(const std::string& key) {
  YAML::Node value = get(key);
  if (!value.IsScalar()) fail_at(value, fmt::format("'{}' must be a scalar", key));
  return value.Scalar();
}

std::string YamlMap::text_or(const std::string& key, const std::string& fallback) {
  return has(key) ? text(key) : (used_.insert(key), fallback);
}

std::string YamlMap::identifier(const std::string& key) {
  const std::string value = text(key);
  if (!is_identifier(value)) fail_at(node_[key], fmt::format("'{}' is not an identifier", value));
  return value;
}

std::uint64_t YamlMap::number(const std::string& key, std::uint64_t max) {
  const YAML::Node value = get(key);
  const std::string s = value.IsScalar() ? value.Scalar() : std::string();
  std::uint64_t parsed = 0;
  if (!parse_number(s, parsed)) {
    fail_at(value, fmt::format("'{}' must be a decimal or 0x-hex number, not '{}'", key, s));
  }
  if (parsed > max) fail_at(value, fmt::format("'{}' = {} exceeds {}", key, s, max));
  return parsed;
}

std::uint64_t YamlMap::number_or(const std::string& key, std::uint64_t fallback,
                                 std::uint64_t max) {
  return has(key) ? number(key, max) : (used_.insert(key), fallback);
}

std::vector<std::string> YamlMap::words_or(const std::string& key,
                                           std::vector<std::string> fallback) {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  const YAML::Node value = get(key);
  if (value.IsScalar()) return {value.Scalar()};
  if (!value.IsSequence()) fail_at(value, fmt::format("'{}' must be a list of words", key));
  std::vector<std::string> out;
  for (const YAML::Node& item : value) {
    if (!item.IsScalar()) fail_at(item, fmt::format("'{}' must be a list of words", key));
    out.push_back(item.Scalar());
  }
  return out;
}

std::vector<std::pair<YAML::Node, std::string>> YamlMap::items(const std::string& key) {
  const YAML::Node seq = get(key);
  if (!seq.IsSequence()) fail_at(seq, fmt::format("'{}' must be a sequence", key));
  std::vector<std::pair<YAML::Node, std::string>> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    out.emplace_back(seq[i], fmt::format("{}{}[{}]", prefix(), key, i));
  }
  return out;
}

void YamlMap::finish() const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (!used_.count(key)) {
      throw YamlError(location_of(entry.first, file_), prefix() + key,
                      fmt::format("unknown key '{}'", key));
    }
  }
}

void NameSet::add(const std::string& name, const YamlMap& at) {
  if (!seen_.insert(name).second) at.fail(fmt::format("duplicate {} '{}'", what_, name));
}

}  // namespace podsim::core
