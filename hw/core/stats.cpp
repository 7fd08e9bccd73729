#include "hw/core/stats.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "hw/core/atomic_file.h"

namespace podsim::core {

void Accumulator::sample(double v) {
  min_ = count_ ? std::min(min_, v) : v;
  max_ = count_ ? std::max(max_, v) : v;
  sum_ += v;
  ++count_;
}

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  if (bounds_.empty()) throw std::invalid_argument("histogram needs at least one bucket bound");
  for (std::size_t i = 1; i < bounds_.size(); ++i) {
    if (!(bounds_[i - 1] < bounds_[i])) {
      throw std::invalid_argument("histogram bounds must be strictly increasing");
    }
  }
  counts_.assign(bounds_.size() + 1, 0);
}

Histogram Histogram::linear(double first_bound, double width, std::size_t buckets) {
  if (!(width > 0)) throw std::invalid_argument("linear histogram width must be positive");
  std::vector<double> bounds(buckets);
  // Multiplying rather than adding repeatedly keeps each bound free of accumulated rounding.
  for (std::size_t i = 0; i < buckets; ++i) {
    bounds[i] = first_bound + width * static_cast<double>(i);
  }
  return Histogram(std::move(bounds));
}

Histogram Histogram::exponential(double first_bound, double factor, std::size_t buckets) {
  if (!(first_bound > 0) || !(factor > 1)) {
    throw std::invalid_argument("exponential histogram needs first bound > 0 and factor > 1");
  }
  std::vector<double> bounds(buckets);
  for (std::size_t i = 0; i < buckets; ++i) {
    bounds[i] = first_bound * std::pow(factor, static_cast<double>(i));
  }
  return Histogram(std::move(bounds));
}

void Histogram::sample(double v) {
  // lower_bound puts a sample equal to a bound into that bound's bucket ("<= bound").
  const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  ++counts_[static_cast<std::size_t>(bucket)];
  summary_.sample(v);
}

double Histogram::percentile(double p) const {
  const std::uint64_t total = summary_.count();
  if (total == 0) return 0.0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(total);
  std::uint64_t below = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    const std::uint64_t in_bucket = counts_[i];
    if (in_bucket == 0 || static_cast<double>(below + in_bucket) < rank) {
      below += in_bucket;
      continue;
    }
    // The observed min and max tighten the edges of the outer buckets (which are unbounded) and
    // of any bucket the samples only partly cover.
    const double lower_edge = i == 0 ? summary_.min() : std::max(bounds_[i - 1], summary_.min());
    const double upper_edge =
        i == bounds_.size() ? summary_.max() : std::min(bounds_[i], summary_.max());
    const double fraction = (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
    return lower_edge + fraction * (upper_edge - lower_edge);
  }
  return summary_.max();
}

void TimeWeighted::set(double level, TimePs now) {
  if (now > since_) {
    area_ += static_cast<long double>(level_) * static_cast<long double>(now - since_);
    since_ = now;
  }
  level_ = level;
  max_ = std::max(max_, level);
}

double TimeWeighted::average(TimePs now) const {
  if (now == 0) return level_;
  const TimePs held = now > since_ ? now - since_ : 0;
  const long double area = area_ + static_cast<long double>(level_) * held;
  return static_cast<double>(area / static_cast<long double>(now));
}

StatsRegistry::Entry& StatsRegistry::add(const std::string& name, Kind kind, std::string unit,
                                         std::string description) {
  auto [it, inserted] =
      entries_.try_emplace(name, Entry{kind, std::move(unit), std::move(description), nullptr});
  if (!inserted) throw std::logic_error("statistic '" + name + "' is registered twice");
  return it->second;
}

Counter& StatsRegistry::counter(const std::string& name, std::string unit,
                                std::string description) {
  Entry& entry = add(name, Kind::kCounter, std::move(unit), std::move(description));
  entry.stat = &counters_.emplace_back();
  return counters_.back();
}

void StatsRegistry::attach(const std::string& name, Counter& counter, std::string unit,
                           std::string description) {
  add(name, Kind::kCounter, std::move(unit), std::move(description)).stat = &counter;
}

void StatsRegistry::forget(const std::string& prefix) {
  const std::string below = prefix + ".";
  auto it = entries_.lower_bound(below);
  while (it != entries_.end() && it->first.compare(0, below.size(), below) == 0) {
    it = entries_.erase(it);
  }
}

Accumulator& StatsRegistry::accumulator(const std::string& name, std::string unit,
                                        std::string description) {
  Entry& entry = add(name, Kind::kAccumulator, std::move(unit), std::move(description));
  entry.stat = &accumulators_.emplace_back();
  return accumulators_.back();
}

Histogram& StatsRegistry::histogram(const std::string& name, Histogram shape, std::string unit,
                                    std::string description) {
  Entry& entry = add(name, Kind::kHistogram, std::move(unit), std::move(description));
  entry.stat = &histograms_.emplace_back(std::move(shape));
  return histograms_.back();
}

TimeWeighted& StatsRegistry::time_weighted(const std::string& name, std::string unit,
                                           std::string description) {
  Entry& entry = add(name, Kind::kTimeWeighted, std::move(unit), std::move(description));
  entry.stat = &time_weighted_.emplace_back();
  return time_weighted_.back();
}

namespace {

const char* kind_name(int kind) {
  static const char* const kNames[] = {"counter", "accumulator", "histogram", "time_weighted"};
  return kNames[kind];
}

void add_summary(nlohmann::json& out, const Accumulator& a) {
  out["count"] = a.count();
  out["mean"] = a.mean();
  out["min"] = a.min();
  out["max"] = a.max();
}

// Quotes a CSV field only when it needs it (RFC 4180), so plain names stay readable.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void append_csv_row(std::string& csv, const std::string& prefix, const std::string& field,
                    const nlohmann::json& value) {
  csv += prefix;
  csv += csv_field(field);
  csv += ',';
  // The JSON serialiser prints the shortest text that round-trips, so CSV and JSON agree.
  csv += value.dump();
  csv += '\n';
}

}  // namespace

nlohmann::json StatsRegistry::to_json(TimePs end) const {
  nlohmann::json stats = nlohmann::json::object();
  for (const auto& [name, entry] : entries_) {
    nlohmann::json& out = stats[name];
    out["kind"] = kind_name(static_cast<int>(entry.kind));
    out["unit"] = entry.unit;
    out["description"] = entry.description;
    switch (entry.kind) {
      case Kind::kCounter:
        out["value"] = static_cast<const Counter*>(entry.stat)->value();
        break;
      case Kind::kAccumulator: {
        const auto& a = *static_cast<const Accumulator*>(entry.stat);
        add_summary(out, a);
        out["sum"] = a.sum();
        break;
      }
      case Kind::kHistogram: {
        const auto& h = *static_cast<const Histogram*>(entry.stat);
        out["bounds"] = h.upper_bounds();
        out["counts"] = h.counts();
        add_summary(out, h.summary());
        out["p50"] = h.percentile(50);
        out["p99"] = h.percentile(99);
        break;
      }
      case Kind::kTimeWeighted: {
        const auto& t = *static_cast<const TimeWeighted*>(entry.stat);
        out["average"] = t.average(end);
        out["max"] = t.max();
        out["final"] = t.level();
        break;
      }
    }
  }
  return {{"podsim_stats_version", 1}, {"sim_time_ps", end}, {"stats", std::move(stats)}};
}

std::string StatsRegistry::to_csv(TimePs end) const {
  std::string csv = "name,kind,unit,field,value\n";
  const nlohmann::json json = to_json(end);
  for (const auto& [name, stat] : json["stats"].items()) {
    const std::string prefix = csv_field(name) + "," + stat["kind"].get<std::string>() + "," +
                               csv_field(stat["unit"].get<std::string>()) + ",";
    for (const auto& [field, value] : stat.items()) {
      if (field == "kind" || field == "unit" || field == "description") continue;
      if (!value.is_array()) {
        append_csv_row(csv, prefix, field, value);
        continue;
      }
      for (std::size_t i = 0; i < value.size(); ++i) {
        append_csv_row(csv, prefix, field + "[" + std::to_string(i) + "]", value[i]);
      }
    }
  }
  return csv;
}

void StatsRegistry::write(const std::string& path, TimePs end) const {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension != ".json" && extension != ".csv") {
    throw std::runtime_error(path + ": unknown stats format '" + extension +
                             "' (use .json or .csv)");
  }
  write_file_atomically(path, extension == ".json" ? to_json(end).dump(2) + "\n" : to_csv(end));
}

void StatsRegistry::clear() {
  entries_.clear();
  counters_.clear();
  accumulators_.clear();
  histograms_.clear();
  time_weighted_.clear();
}

StatsRegistry& stats_registry() {
  static StatsRegistry registry;
  return registry;
}

}  // namespace podsim::core
