#include "sims/calibration.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/config_tree.h"

namespace podsim::sims {
namespace {

const std::set<std::string> kCalibrationUnits = {"TFLOP/s", "samples/s", "ms", "tokens/s"};

[[noreturn]] void refuse_row(const core::SourceLocation& where, const std::string& key,
                             const std::string& message) {
  throw core::ConfigError(core::Diagnostic{where, key, message});
}

// A mapping's keys, each looked up at most once; finish() refuses the ones never asked for.
class TableReader {
 public:
  TableReader(const core::ConfigNode& node, std::string path)
      : node_(node), path_(std::move(path)) {
    if (!node.is_map()) refuse_row(node.where(), path_, "expected a mapping");
  }
  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  const core::ConfigNode* find(const std::string& k) {
    seen_.insert(k);
    return node_.find(k);
  }
  std::string text(const std::string& k) {
    const core::ConfigNode* n = find(k);
    if (!n) refuse_row(node_.where(), key(k), "missing");
    if (!n->is_scalar()) refuse_row(n->where(), key(k), "expected a value");
    return n->text();
  }
  std::string text_or(const std::string& k, const std::string& fallback) {
    return node_.find(k) ? text(k) : (seen_.insert(k), fallback);
  }
  std::vector<std::string> words(const std::string& k) {
    std::vector<std::string> out;
    const core::ConfigNode* n = find(k);
    if (!n) return out;
    if (!n->is_sequence()) refuse_row(n->where(), key(k), "expected a list");
    for (const auto& item : n->items()) {
      if (!item.is_scalar()) refuse_row(item.where(), key(k), "expected values");
      out.push_back(item.text());
    }
    return out;
  }
  const core::ConfigNode& node() const { return node_; }
  void finish() const {
    for (const auto& [k, n] : node_.entries())
      if (!seen_.count(k)) refuse_row(n.key_where(), key(k), "unknown key");
  }

 private:
  const core::ConfigNode& node_;
  std::string path_;
  std::set<std::string> seen_;
};

std::uint32_t positive_count(const core::SourceLocation& where, const std::string& key,
                             const std::string& text) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v == 0 || v > 0xFFFFFFFFul || text[0] == '-')
    refuse_row(where, key, fmt::format("'{}' is not a whole number from 1 up", text));
  return static_cast<std::uint32_t>(v);
}

CalibrationRow read_row(const core::ConfigNode& node, const std::string& path) {
  TableReader r(node, path);
  CalibrationRow row;
  row.line = node.where().line;
  row.name = r.text("name");
  if (row.name.empty() || row.name.find_first_of(" ,") != std::string::npos)
    refuse_row(node.where(), r.key("name"), fmt::format("'{}' must be one word", row.name));
  row.what = r.text("what");
  row.source = r.text("source");
  row.conditions = r.text("conditions");
  const core::ConfigNode* measured = r.find("measured");
  if (!measured) refuse_row(node.where(), r.key("measured"), "missing");
  TableReader m(*measured, r.key("measured"));
  const std::string value = m.text("value");
  char* end = nullptr;
  row.measured = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(row.measured > 0))
    refuse_row(measured->where(), m.key("value"),
               fmt::format("'{}' is not a positive number", value));
  row.unit = m.text("unit");
  if (!kCalibrationUnits.count(row.unit))
    refuse_row(measured->where(), m.key("unit"),
               fmt::format("'{}' is not TFLOP/s, samples/s, tokens/s or ms", row.unit));
  m.finish();
  row.blocked = r.text_or("blocked", "");
  row.kind = r.text_or("kind", "");
  if (row.blocked.empty() == row.kind.empty())
    refuse_row(node.where(), path,
               "a row has either a kind (gemm or train) or says why it is blocked");
  if (row.kind == "gemm") {
    row.system = r.text("system");
    for (const std::string& s : r.words("shape"))
      row.shape.push_back(positive_count(node.where(), r.key("shape"), s));
    if (row.shape.size() != 3)
      refuse_row(node.where(), r.key("shape"), "a gemm's shape is M, N, K");
    row.dtype = r.text_or("dtype", "bf16");
    if (row.unit != "TFLOP/s")
      refuse_row(node.where(), r.key("measured.unit"), "a gemm is TFLOP/s");
  } else if (row.kind == "train") {
    row.system = r.text("system");
    row.args = r.words("args");
    if (row.unit != "samples/s" && row.unit != "ms")
      refuse_row(node.where(), r.key("measured.unit"), "a train row is samples/s or ms (a step)");
  } else if (!row.kind.empty()) {
    refuse_row(node.where(), r.key("kind"), fmt::format("'{}' is not gemm or train", row.kind));
  }
  r.finish();
  return row;
}

}  // namespace

std::vector<std::string> CalibrationRow::command(const std::string& json_file) const {
  std::vector<std::string> out;
  if (kind == "gemm") {
    out = {"--system", system,    "kernel",
           "gemm",     "--shape", fmt::format("{},{},{}", shape[0], shape[1], shape[2]),
           "--dtype",  dtype,     "--timing-only"};
  } else {
    out = {"--system", system, "train"};
    out.insert(out.end(), args.begin(), args.end());
  }
  out.insert(out.end(), {"--json", json_file, "-q"});
  return out;
}

double CalibrationRow::model_value(const std::string& json_text) const {
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded()) throw std::runtime_error("its --json output is not JSON");
  try {
    if (kind == "gemm") {
      return j.at("flops").get<double>() / (j.at("time_ps").get<double>() * 1e-12) / 1e12;
    }
    const nlohmann::json& last = j.at("steps").back();
    if (unit == "ms") return last.at("step_ps").get<double>() * 1e-9;
    return last.at("samples_per_s").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("its --json output lacks a figure: {}", e.what()));
  }
}

CalibrationTable load_calibration(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read the calibration table", path));
  std::stringstream text;
  text << in.rdbuf();
  CalibrationTable table{path, {}};
  try {
    const core::ConfigNode top = core::parse_yaml(text.str(), path);
    TableReader r(top, "");
    const core::ConfigNode* rows = r.find("rows");
    if (!rows || !rows->is_sequence() || rows->items().empty())
      refuse_row(top.where(), "rows", "give the rows as a list");
    r.finish();
    std::set<std::string> names;
    for (std::size_t i = 0; i < rows->items().size(); ++i) {
      CalibrationRow row = read_row(rows->items()[i], fmt::format("rows.{}", i));
      if (!names.insert(row.name).second)
        refuse_row(rows->items()[i].where(), fmt::format("rows.{}.name", i),
                   fmt::format("'{}' twice", row.name));
      table.rows.push_back(std::move(row));
    }
  } catch (const core::ConfigError& e) {
    throw std::invalid_argument(e.what());
  }
  return table;
}

std::string default_calibration_path() {
  for (const auto& dir : core::ConfigLoader::default_config_dirs()) {
    const auto p = dir / "calibration.yaml";
    if (std::filesystem::exists(p)) return p.string();
  }
  return "calibration.yaml";
}

}  // namespace podsim::sims
