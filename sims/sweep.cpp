#include "sims/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/config_tree.h"

namespace podsim::sims {

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

[[noreturn]] void fail(const core::SourceLocation& where, const std::string& key,
                       const std::string& message) {
  throw core::ConfigError(core::Diagnostic{where, key, message});
}

// A scalar or a sequence of scalars: at least one value.
std::vector<std::string> values_of(const core::ConfigNode& node, const std::string& key) {
  std::vector<std::string> out;
  if (node.is_scalar()) out.push_back(node.text());
  for (const auto& item : node.items()) {
    if (!item.is_scalar()) fail(item.where(), key, "values must be scalars");
    out.push_back(item.text());
  }
  if (out.empty()) fail(node.where(), key, "give one value or a list");
  return out;
}

std::string cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      in_quotes = !in_quotes;
    } else if (c == ',' && !in_quotes) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

nlohmann::ordered_json value_of(const std::string& text) {
  if (text.empty()) return nullptr;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size()) return number;
  return text;
}

}  // namespace

std::string SweepPoint::describe() const {
  std::string out;
  for (const auto& [name, value] : values) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

SweepSpec load_sweep(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the sweep file", file));
  std::stringstream text;
  text << in.rdbuf();
  return parse_sweep(text.str(), file);
}

SweepSpec parse_sweep(const std::string& text, const std::string& file) {
  const core::ConfigNode top = core::parse_yaml(text, file);
  if (!top.is_map()) fail(top.where(), "", "a sweep file is a map with 'command' and 'axes'");
  for (const auto& [key, node] : top.entries()) {
    if (key != "command" && key != "axes") {
      fail(node.key_where(), key, "unknown key (a sweep file has 'command' and 'axes')");
    }
  }
  const core::ConfigNode* command = top.find("command");
  const core::ConfigNode* axes = top.find("axes");
  if (!command || !axes) fail(top.where(), "", "a sweep file needs 'command' and 'axes'");
  SweepSpec spec;
  if (command->is_scalar()) spec.command = words(command->text());
  for (const auto& item : command->items()) spec.command.push_back(item.text());
  if (spec.command.empty() || spec.command.front().rfind("-", 0) == 0) {
    fail(command->where(), "command",
         "give a podsim command and its options, e.g. 'collective --timing-only'");
  }
  if (spec.command.front() == "sweep" || spec.command.front() == "serve") {
    fail(command->where(), "command", fmt::format("'{}' cannot be swept", spec.command.front()));
  }
  if (!axes->is_map() || axes->entries().empty()) {
    fail(axes->where(), "axes", "give at least one axis: an option's values, or 'set' keys'");
  }
  for (const auto& [key, node] : axes->entries()) {
    const std::string path = "axes." + key;
    if (key == "set") {
      if (!node.is_map()) fail(node.where(), path, "map configuration keys to their values");
      for (const auto& [name, values] : node.entries()) {
        spec.axes.push_back({name, "--set", values_of(values, path + "." + name)});
      }
      continue;
    }
    if (key.empty() || key.front() == '-' || key.find_first_of(" =") != std::string::npos) {
      fail(node.key_where(), path, "an axis is an option's long name without dashes ('sizes')");
    }
    spec.axes.push_back({key, "--" + key, values_of(node, path)});
  }
  return spec;
}

std::vector<SweepPoint> sweep_points(const SweepSpec& spec) {
  std::vector<SweepPoint> points(1);
  for (const SweepAxis& axis : spec.axes) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points) {
      for (const std::string& value : axis.values) {
        SweepPoint q = p;
        q.values.emplace_back(axis.name, value);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    SweepPoint& p = points[i];
    p.index = static_cast<int>(i);
    p.args = spec.command;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string& value = p.values[a].second;
      p.args.push_back(spec.axes[a].flag);
      p.args.push_back(spec.axes[a].flag == "--set" ? spec.axes[a].name + "=" + value : value);
    }
  }
  return points;
}

std::vector<nlohmann::ordered_json> point_rows(const SweepPoint& point,
                                               const nlohmann::ordered_json& result) {
  nlohmann::ordered_json lead;
  lead["point"] = point.index;
  for (const auto& [name, value] : point.values) lead[name] = value;
  std::vector<nlohmann::ordered_json> rows;
  if (result.contains("rows") && result["rows"].is_array()) {
    for (const auto& r : result["rows"]) rows.push_back(r);
  } else {
    rows.push_back(nlohmann::ordered_json::object());
  }
  std::vector<nlohmann::ordered_json> out;
  for (const auto& r : rows) {
    nlohmann::ordered_json row = lead;
    for (const auto& [key, value] : r.items()) {
      if (!row.contains(key)) row[key] = value;
    }
    for (const auto& [key, value] : result.items()) {
      // The simulator's own CPU time would make two runs of one sweep differ.
      if (value.is_primitive() && !row.contains(key) && key != "cpu_seconds") row[key] = value;
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string rows_to_csv(const std::vector<nlohmann::ordered_json>& rows) {
  std::vector<std::string> columns;
  for (const auto& row : rows) {
    for (const auto& item : row.items()) {
      if (std::find(columns.begin(), columns.end(), item.key()) == columns.end())
        columns.push_back(item.key());
    }
  }
  std::string out;
  for (std::size_t c = 0; c < columns.size(); ++c) out += (c ? "," : "") + csv_cell(columns[c]);
  out += "\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto it = row.find(columns[c]);
      out += (c ? "," : "") + csv_cell(it == row.end() ? "" : cell(*it));
    }
    out += "\n";
  }
  return out;
}

std::vector<nlohmann::ordered_json> rows_from_csv(const std::string& text,
                                                  const std::string& file) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(file + ": empty, no header line");
  const auto columns = split_csv_line(line);
  std::vector<nlohmann::ordered_json> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto cells = split_csv_line(line);
    if (cells.size() != columns.size()) {
      throw std::runtime_error(fmt::format("{}:{}: {} cells where the header has {}", file, number,
                                           cells.size(), columns.size()));
    }
    nlohmann::ordered_json row;
    for (std::size_t c = 0; c < cells.size(); ++c) row[columns[c]] = value_of(cells[c]);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace podsim::sims
